"""Every chapter follows the template in CONTRIBUTING.md."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_has_caption_and_alt_text(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        shows_image = any("image/png" in output.get("data", {}) for output in cell.get("outputs", []))
        if cell.cell_type == "code" and shows_image:
            options = cell.metadata.get("mystnb", {})
            assert options.get("figure", {}).get("caption"), f"figure without caption: {cell.source[:60]!r}"
            assert options.get("image", {}).get("alt"), f"figure without alt text: {cell.source[:60]!r}"
