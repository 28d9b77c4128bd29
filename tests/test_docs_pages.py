"""The code on the docs pages that show whole workflows runs, block after block in one
namespace as a reader would paste it (the pages assert what they claim)."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
# Pages whose ```python blocks are complete programs together.
RUNNABLE_PAGES = ["getting_started.md", "migration.md", "parameters.md"]


def python_blocks(page: str) -> list[str]:
    text = (DOCS / page).read_text()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_pages_have_code():
    for page in RUNNABLE_PAGES:
        assert python_blocks(page), page


# the LightGBM code on migration.md works with every LightGBM the test extra allows (>= 4.0)
@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the pages save models to the working directory
    namespace = {"__name__": f"docs_{page}"}
    for i, block in enumerate(python_blocks(page)):
        exec(compile(block, f"{page} block {i + 1}", "exec"), namespace)
