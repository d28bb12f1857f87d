"""Every notebook cell's reveal.js slide type, by one rule for the whole book (``make tidy``).

The rule: the title and every ``##`` section open a slide; a ``###`` heading
and every code cell (with its output) open a sub-slide; other prose, including
the prose that explains a code cell's output, continues the current slide.
Cells tagged ``remove-cell`` are skipped. The book's
decks (``book/_ext/book_slides.py``) follow these types, as RISE and
``jupyter nbconvert --to slides`` do.
"""

from __future__ import annotations

import nbformat

from tools.notebook_format import tags


def slide_type(cell, previous) -> str:
    if "remove-cell" in tags(cell):
        return "skip"
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        if first.startswith("# ") or first.startswith("## "):
            return "slide"
        if first.startswith("### "):
            return "subslide"
        return "-"
    return "subslide"


def expected_types(notebook: nbformat.NotebookNode) -> list[str]:
    types, previous = [], None
    for cell in notebook.cells:
        types.append(slide_type(cell, previous))
        if types[-1] != "skip":
            previous = cell
    return types


def set_slide_types(notebook: nbformat.NotebookNode) -> bool:
    """Give every cell the rule's slide type; True if any changed (metadata only)."""
    changed = False
    for cell, expected in zip(notebook.cells, expected_types(notebook), strict=True):
        if cell.metadata.get("slideshow", {}).get("slide_type") != expected:
            cell.metadata.setdefault("slideshow", {})["slide_type"] = expected
            changed = True
    return changed
