"""The user's docs pages fit the page: no code line and no table wider than the theme's
content column in a 1280-pixel-wide browser window (pydata-sphinx-theme, docs/conf.py).

The column, worked out from the theme's CSS (pydata-sphinx-theme 0.16-0.24) and checked in
headless Chromium at --window-size=1280 (a classic scrollbar leaves 1265 px):

- the primary sidebar (section navigation) takes 25% of the page: 316 px, leaving 949;
- the secondary sidebar (the page's contents) is 17rem = 272 px; the article container
  takes the rest (at most 60em), 677 px, less its padding of 1rem a side and the article's
  2rem on the left: a text column of 613 px;
- a code block (<pre>) has 1rem padding and a 1 px border a side and its font is 0.875em
  = 14 px monospace, 8.43 px a character (DejaVu Sans Mono, Menlo, Consolas, Cascadia
  Code are all about 0.6em wide): (613 - 34) / 8.43 = 68.7, so **68 characters**;
- a column of a two-column sphinx-design grid is half of that less a 1.5rem gutter:
  (613 / 2 - 24 - 34) / 8.43 = 29 characters.

A line longer than that scrolls sideways inside its block, and the reader does not see its
end. The landing page (index.md) has no primary sidebar and is wider; the same 68 holds
there too, which only makes it stricter.

Tables wrap their text, so a table overflows only when its narrowest layout is wider than
the column: a browser breaks a cell's text at spaces, never inside a word or inside a code
span's word (Sphinx wraps those in white-space: nowrap). The narrowest width of a table is
then, column by column, its longest unbreakable piece, plus the cell's 0.5rem padding a
side. The estimate takes a code character as 8.43 px (plus 10 px of padding and border for
each code span) and a prose character at the width of DejaVu Sans at 16 px, the widest
common fallback of the theme's system-ui stack (9 px a lower-case letter, 10.2 a digit,
11.5 a capital, 16 an @ or an m; header cells are bold, 10% wider), and flags a table whose
narrowest width passes the 613 px column. Against Chromium's layout of every table on these
pages (before they were fixed) the estimate was within 25 px of the real width of each
table that overflowed, and it flagged exactly the ten tables that did.
"""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
# The pages in the user's table of contents (design.md and benchmarks/ are for contributors).
PAGES = sorted(["index.md", "getting_started.md", "install.md", "user_guide.md", "parameters.md",
                "format.md", "migration.md", "faq.md"]
               + [f"guide/{p.name}" for p in (DOCS / "guide").glob("*.md")])

TEXT_COLUMN_PX = 613
CODE_CHAR_PX = 8.43
CODE_BLOCK_EDGES_PX = 34  # 1rem padding and 1 px border, each side
CODE_COLUMNS = int((TEXT_COLUMN_PX - CODE_BLOCK_EDGES_PX) / CODE_CHAR_PX)  # 68
GRID_GUTTER_PX = 24
PROSE_CHAR_PX = {"lower": 9.0, "digit": 10.2, "upper": 11.5, "wide": 16.0, "other": 6.0}
BOLD = 1.1
CODE_SPAN_EDGES_PX = 10  # 0.25rem padding and 1 px border, each side
CELL_PADDING_PX = 8  # 0.5rem, each side


def code_columns(grid_columns: int) -> int:
    """Characters a code line may have in a grid of `grid_columns` columns (1: no grid)."""
    if grid_columns == 1:
        return CODE_COLUMNS
    width = TEXT_COLUMN_PX / grid_columns - GRID_GUTTER_PX - CODE_BLOCK_EDGES_PX
    return int(width / CODE_CHAR_PX)


# Lines that are wide on purpose, by their start: what a terminal shows, which no wrapping
# of ours can make narrower.
WIDE_ON_PURPOSE = {
    # tqdm's bar (guide/callbacks.md): its text around the bar alone is 69 characters
    "boosters:  13%|",
}

# Tables still wider than the column, by their header row, and why.
WIDE_TABLES = {
    # the parameter reference: five columns of parameter names that do not break; a test
    # (tests/test_docstrings.py) reads its rows. Left to scroll sideways until it is
    # rewritten as one entry per parameter.
    ("parameters.md", "| parameter | default | LightGBM | XGBoost | meaning |"),
}

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
COLON = re.compile(r"^(?P<colons>:{3,})(?P<info>.*)$")


def indented_code(lines: list[str]) -> set[int]:
    """Indices of the lines of indented code blocks: four spaces in, after a blank line
    that follows a paragraph at the margin (not a list item, whose continuation lines are
    indented too)."""
    found = set()
    inside = False
    for i, line in enumerate(lines):
        if inside and (line.startswith("    ") or not line.strip()):
            found.add(i)
            continue
        inside = False
        if line.startswith("    ") and i >= 2 and not lines[i - 1].strip():
            j = i - 2
            while j >= 0 and not lines[j].strip():
                j -= 1
            before = lines[j] if j >= 0 else ""
            if before and not before.startswith((" ", "-", "*", "|", "#")) \
                    and not re.match(r"\d+\. ", before):
                inside = True
                found.add(i)
    return found


def code_lines(text: str, page: str = "index.md"):
    """(line number, code line, allowed characters) for each line of each code block: a
    fenced block whose info string is a language (or empty), not a directive such as
    {toctree}; an indented block; a {literalinclude}'s file, unless its :class: is wrap
    (docs/_static/custom.css wraps those); inside a sphinx-design grid, the limit of one
    grid column."""
    lines = text.splitlines()
    indented = indented_code(lines)
    fence = None
    grids = []  # colon fences open: their columns at the large breakpoint (1 if not a grid)
    for number, line in enumerate(lines, 1):
        if fence is not None:
            indent, marker, is_code, include = fence
            if line.strip() == marker:
                if include and ":class: wrap" not in include["options"]:
                    path = (DOCS / page).parent / include["path"]
                    for code in path.read_text().splitlines():
                        yield include["line"], code.expandtabs(), CODE_COLUMNS
                fence = None
            elif include:
                include["options"] += line
            elif is_code:
                code = line[indent:] if line[:indent].strip() == "" else line.lstrip()
                yield number, code.expandtabs(), code_columns(max(grids, default=1))
            continue
        if number - 1 in indented:
            yield number, line[4:].expandtabs(), CODE_COLUMNS
            continue
        m = FENCE.match(line)
        if m:
            info = m["info"].strip()
            is_code = not info.startswith("{") or info.startswith(("{code-block}", "{code}"))
            include = None
            if info.startswith("{literalinclude}"):
                include = {"path": info.split(None, 1)[1], "options": "", "line": number}
            fence = (len(m["indent"]), m["fence"], is_code, include)
            continue
        m = COLON.match(line)
        if m:
            info = m["info"].strip()
            if info.startswith("{grid}"):
                spec = info.split()[1:]  # columns at xs sm md lg
                grids.append(int(spec[-1]) if spec else 1)
            elif info.startswith("{"):
                grids.append(1)
            elif grids:
                grids.pop()


ROLE = re.compile(r"\{[\w:-]+\}`(?P<body>[^`]*)`")
CODE = re.compile(r"`(?P<code>[^`]+)`")
LINK = re.compile(r"\[(?P<text>[^\]]*)\]\([^)]*\)")


def prose_px(word: str) -> float:
    """Pixels of a word of prose (DejaVu Sans, 16 px)."""
    def px(ch):
        if ch in "@%&mwMW":
            return PROSE_CHAR_PX["wide"]
        if ch.islower():
            return PROSE_CHAR_PX["lower"]
        if ch.isdigit():
            return PROSE_CHAR_PX["digit"]
        if ch.isupper():
            return PROSE_CHAR_PX["upper"]
        return PROSE_CHAR_PX["other"]
    return sum(px(ch) for ch in word)


def cell_min_width(cell: str, header: bool = False) -> float:
    """Pixels of the longest piece of a table cell that a browser cannot break, plus the
    cell's padding."""
    def title(m):
        body = m["body"]
        explicit = re.fullmatch(r"(?P<title>.*?)\s*<[^<>]*>", body)
        shown = explicit["title"] if explicit else body.lstrip("~").split(".")[-1]
        return f"`{shown}`"
    cell = ROLE.sub(title, cell).replace("\\|", "|")
    cell = LINK.sub(lambda m: m["text"], cell)
    scale = BOLD if header else 1.0
    widest = 0.0
    for m in CODE.finditer(cell):
        for word in m["code"].split():
            widest = max(widest, (len(word) * CODE_CHAR_PX + CODE_SPAN_EDGES_PX) * scale)
    prose = CODE.sub(" ", cell).replace("**", "").replace("*", "")
    for word in prose.split():
        widest = max(widest, prose_px(word) * scale)
    return widest + 2 * CELL_PADDING_PX


def split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip() for c in cells]


def tables(text: str):
    """(first line number, rows) of each pipe table outside code blocks (fenced, or
    indented by four spaces after a blank line)."""
    in_code = False
    rows, start = [], 0
    previous = ""
    indented = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            in_code = not in_code
        if line.startswith("    ") and (indented or not previous.strip()) and not in_code:
            indented = True
        elif line.strip():
            indented = False
        previous = line
        if not in_code and not indented and line.startswith("|"):
            if not rows:
                start = number
            rows.append(split_row(line))
            continue
        if rows:
            yield start, rows
            rows = []
    if rows:
        yield start, rows


def table_min_width(rows: list[list[str]]) -> float:
    body = [r for r in rows if not all(re.fullmatch(r":?-+:?", c) for c in r)]
    n = max(len(r) for r in body)
    return sum(max(cell_min_width(r[i], header=r is body[0]) for r in body if i < len(r))
               for i in range(n))


def too_wide_code(page: str) -> list[str]:
    return [f"{page}:{n}: {len(code)} > {limit} characters: {code}"
            for n, code, limit in code_lines((DOCS / page).read_text(), page)
            if len(code) > limit and not code.startswith(tuple(WIDE_ON_PURPOSE))]


def too_wide_tables(page: str) -> list[str]:
    text = (DOCS / page).read_text()
    lines = text.splitlines()
    return [f"{page}:{n}: a table at least {table_min_width(rows):.0f} px wide > {TEXT_COLUMN_PX} px"
            for n, rows in tables(text)
            if table_min_width(rows) > TEXT_COLUMN_PX and (page, lines[n - 1]) not in WIDE_TABLES]


def test_limits():
    assert CODE_COLUMNS == 68
    assert code_columns(2) == 29


def test_checker_can_fail():
    page = """Text.

```python
x = 1
y = "{long}"
```

- a list item

    a list item's second paragraph, not code: {long}

Text:

    code indented by four spaces: {long}

| a | b |
|---|---|
| `{word}` | `{word}` |
| short | short |
""".format(long="y" * 80, word="z" * 40)
    wide = [(n, len(code)) for n, code, limit in code_lines(page) if len(code) > limit]
    assert wide == [(5, 86), (14, 110)]  # the list paragraph is not code
    [(line, rows)] = tables(page)
    assert line == 16 and table_min_width(rows) > TEXT_COLUMN_PX
    assert table_min_width(rows[:2] + rows[3:]) < TEXT_COLUMN_PX


def test_code_fits_the_page():
    problems = [p for page in PAGES for p in too_wide_code(page)]
    assert not problems, "\n".join(problems)


def test_tables_fit_the_page():
    problems = [p for page in PAGES for p in too_wide_tables(page)]
    assert not problems, "\n".join(problems)
