"""The code on the docs pages runs, block after block in one namespace as a reader would
paste it, and prints what the page shows.

A ```python block followed by a ```text block must print that text (doctest's output
rules: `...` elides, runs of whitespace are equal); a block that raises must show the
error as the text's last line. A block followed by a Markdown table must end with an
expression (a pandas object) whose values the table shows, each number to the digits it
is written with. A block of `>>>` lines runs as a doctest.
"""

import ast
import contextlib
import doctest
import io
import logging
import re
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")  # the pages draw plots; no window
import matplotlib.pyplot as plt  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs"
# Pages whose ```python blocks are complete programs together (a few seconds each).
RUNNABLE_PAGES = ["getting_started.md", "migration.md", "parameters.md", "guide/shap.md",
                  "guide/explain.md", "guide/dataframes.md", "guide/callbacks.md",
                  "guide/sklearn.md", "guide/ranking.md", "guide/dart.md", "guide/multi_output.md",
                  "guide/custom_objectives.md", "guide/regression_objectives.md",
                  "guide/classification_objectives.md"]
RUNNABLE_PAGES += ["guide/linear_leaves.md", "guide/converting_xgboost.md", "guide/converting_lightgbm.md"]
RUNNABLE_PAGES += ["format.md"]
RUNNABLE_PAGES += ["guide/out_of_core.md"]
RUNNABLE_PAGES += ["guide/dask.md"]
RUNNABLE_PAGES += ["guide/quantile_sketch.md"]
RUNNABLE_PAGES += ["faq.md", "guide/tuning.md"]
RUNNABLE_PAGES += ["guide/randomness.md"]
RUNNABLE_PAGES += ["guide/ordered_ctr.md"]
RUNNABLE_PAGES += ["guide/oblivious_trees.md"]
OUTPUT_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```\n\s*"
                   r"(?:```text\n(?P<text>.*?)^```|(?P<table>(?:\|[^\n]*\n)+))?",
                   flags=re.MULTILINE | re.DOTALL)


def page_blocks(page: str) -> list[tuple[str, str | None, str | None]]:
    """(code, printed text or None, Markdown table or None) of each ```python block."""
    return [(m["code"], m["text"], m["table"]) for m in BLOCK.finditer((DOCS / page).read_text())]


def run_block(code: str, name: str, namespace: dict):
    """Run `code`; the value of its last statement when that is an expression (as a
    notebook shows it), else None."""
    tree = ast.parse(code, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), namespace)
    return None if last is None else eval(compile(ast.Expression(last.value), name, "eval"), namespace)


@contextlib.contextmanager
def boosters_log_to(stream):
    """The "boosters" logger's lines (what a script without logging setup shows on stderr)
    into `stream`; pytest's own log capture would otherwise take them."""
    logger = logging.getLogger("boosters")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def table_cells(table: str) -> list[list[str]]:
    """The body rows of a Markdown table (header and separator dropped), cells stripped."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.splitlines()]
    return rows[2:]


def check_table(value, table: str, name: str):
    """Each row of `table` is a row label and the values of that row of the pandas object
    `value`; a number written with d decimals matches to half a unit of its last digit."""
    frame = value.to_frame() if isinstance(value, pd.Series) else value
    assert isinstance(frame, pd.DataFrame), f"{name}: the last line must give the table's frame"
    rows = table_cells(table)
    assert [r[0] for r in rows] == [str(label) for label in frame.index], name
    for row, (label, series) in zip(rows, frame.iterrows()):
        assert len(row) - 1 == len(series), f"{name}, row {label}"
        for cell, actual in zip(row[1:], series):
            if re.fullmatch(r"-?\d+(\.\d+)?", cell):
                decimals = len(cell.partition(".")[2])
                assert abs(float(actual) - float(cell)) <= 0.5 * 10.0 ** -decimals + 1e-12, \
                    f"{name}, row {label}: the page shows {cell}, the code gives {actual}"
            else:
                assert cell.replace("\\|", "|") == str(actual), f"{name}, row {label}"


def run_page(page: str):
    namespace = {"__name__": f"docs_{page}"}
    for i, (code, text, table) in enumerate(page_blocks(page)):
        name = f"{page} block {i + 1}"
        if code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(code, namespace, name, page, 0)
            report = []
            result = doctest.DocTestRunner(optionflags=OUTPUT_FLAGS).run(test, out=report.append,
                                                                          clear_globs=False)
            assert result.failed == 0, "".join(report)
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), boosters_log_to(printed):
            try:
                value = run_block(code, name, namespace)
            except Exception as error:  # shown on the page as the output's last line
                if text is None:
                    raise
                value = None
                print(f"{type(error).__name__}: {error}")
        plt.close("all")
        if text is not None:
            assert doctest.OutputChecker().check_output(text, printed.getvalue(), OUTPUT_FLAGS), \
                f"{name} printed\n{printed.getvalue()}\nthe page shows\n{text}"
        if table is not None:
            check_table(value, table, name)


def test_pages_have_code():
    for page in RUNNABLE_PAGES:
        assert page_blocks(page), page


def test_table_check_can_fail():
    """A number off by more than half a unit of its last written digit is caught."""
    table = "| | a |\n|---|---|\n| x | 0.25 |\n"
    check_table(pd.Series([0.254], index=["x"], name="a"), table, "table")
    with pytest.raises(AssertionError, match="shows 0.25"):
        check_table(pd.Series([0.256], index=["x"], name="a"), table, "table")


# the LightGBM code on migration.md works with every LightGBM the test extra allows (>= 4.0)
@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the pages save models to the working directory
    run_page(page)
