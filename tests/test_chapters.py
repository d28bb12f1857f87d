"""Every chapter follows the template in CONTRIBUTING.md."""

from __future__ import annotations

import re

import nbformat
import pytest

from tools.notebook_format import chapter_notebooks

NOTEBOOKS = chapter_notebooks()
MAX_CODE_LINES = 30  # a code cell fits one screen of the site and one slide


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_shape(path):
    notebook = nbformat.read(path, as_version=4)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert "What you will learn" in markdown, "learning objectives at the top"
    assert re.search(r"^## Key takeaways", markdown, re.M), "key takeaways at the end"
    exercises = re.findall(r"^`{3,4}\{exercise\}", markdown, re.M)
    solutions = re.findall(r"^(`{3,4})\{solution\}[^\n]*\n(?::label:[^\n]*\n)?:class: dropdown", markdown, re.M)
    assert len(exercises) >= 3, f"{len(exercises)} exercises"
    assert len(solutions) == len(exercises), "every exercise has a hidden (dropdown) solution"
    assert any(re.search(r"^(import helpers|from helpers)", c.source, re.M) for c in code), "imports helpers"
    assert all(c.execution_count is not None for c in code if c.source.strip()), "committed executed"
    assert "{glue:text}" in markdown, "numbers in the prose are glued"
    assert "{cite}" in markdown, "cites its sources"
    long_cells = [len(c.source.splitlines()) for c in code if len(c.source.splitlines()) > MAX_CODE_LINES]
    assert not long_cells, f"code cells of {long_cells} lines (at most {MAX_CODE_LINES})"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_has_caption_and_alt_text(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        shows_image = any("image/png" in output.get("data", {}) for output in cell.get("outputs", []))
        if cell.cell_type == "code" and shows_image:
            options = cell.metadata.get("mystnb", {})
            assert options.get("figure", {}).get("caption"), f"figure without caption: {cell.source[:60]!r}"
            assert options.get("image", {}).get("alt"), f"figure without alt text: {cell.source[:60]!r}"


MAIN_PATH_WORDS = 1500  # about ten minutes of reading (CONTRIBUTING.md: how a chapter reads)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_main_path_reads_in_ten_minutes(path):
    from tools.notebook_format import count_words, main_path_prose

    words = count_words(main_path_prose(nbformat.read(path, as_version=4)))
    assert words <= MAIN_PATH_WORDS, (
        f"{words} words on the main path (at most {MAIN_PATH_WORDS}): fold side investigations into a "
        "{dropdown} (code cells: hide-cell) or move them to the Deeper part"
    )


MAIN_PATH_CODE_LINES = 80  # visible code on the site (CONTRIBUTING.md, "How a page reads"): the rest is one click away


def visible_code_lines(notebook: nbformat.NotebookNode) -> int:
    """Non-blank source lines of the code cells the site shows unfolded."""
    from tools.notebook_format import FOLD_TAGS, tags

    return sum(
        1
        for cell in notebook.cells
        if cell.cell_type == "code" and not set(tags(cell)) & set(FOLD_TAGS)
        for line in cell.source.splitlines()
        if line.strip()
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_main_path_shows_little_code(path):
    lines = visible_code_lines(nbformat.read(path, as_version=4))
    assert lines <= MAIN_PATH_CODE_LINES, (
        f"{lines} visible lines of code on the main path (at most {MAIN_PATH_CODE_LINES}): keep the cells that are "
        "the measurement visible, and fold plotting, table formatting and bookkeeping (hide-input, with a label)"
    )


def png_size(data: str) -> tuple[int, int]:
    import base64
    import struct

    header = base64.b64decode(data[:64])
    return struct.unpack(">II", header[16:24])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_figures_fit_a_phone(path):
    """A figure wider than MAX_FIGURE_WIDTH inches would shrink below 9-px tick labels on a 390-px phone."""
    import helpers.style as style

    limit = round(style.MAX_FIGURE_WIDTH * style.DPI) + 8  # bbox_inches="tight" may add a few pixels
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                width, _ = png_size(png if isinstance(png, str) else "".join(png))
                assert width <= limit, f"cell {index}: a figure {width} px wide (at most {limit}): one column, narrower"
