"""Give every notebook cell its reveal.js slide type, by one rule for the whole book.

    python tools/slides.py --check   # exit 1 if a cell's slide type is missing or not the rule's
    python tools/slides.py --write   # set them (cell metadata only: outputs stay as they are)

The rule: the title and every ``##`` section open a slide; a ``###`` heading
and every code cell (with its output) open a sub-slide; other prose, including
the prose that explains a code cell's output, continues the current slide.
The Colab setup cell and cells tagged ``remove-cell`` are skipped. The book's
decks (``book/_ext/book_slides.py``) follow these types, as RISE and
``jupyter nbconvert --to slides`` do.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MAX_CODE_LINES = 30  # a code cell must fit on one slide (and on one screen of the site)


def slide_type(cell, previous) -> str:
    tags = cell.metadata.get("tags", [])
    if "remove-cell" in tags or cell.source.startswith("# Colab only:"):
        return "skip"
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        if first.startswith("# ") or first.startswith("## "):
            return "slide"
        if first.startswith("### "):
            return "subslide"
        return "-"
    return "subslide"


def expected_types(notebook) -> list[str]:
    types, previous = [], None
    for cell in notebook.cells:
        types.append(slide_type(cell, previous))
        if types[-1] != "skip":
            previous = cell
    return types


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    problems = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        changed = False
        for cell, expected in zip(notebook.cells, expected_types(notebook)):
            if cell.metadata.get("slideshow", {}).get("slide_type") != expected:
                changed = True
                cell.metadata.setdefault("slideshow", {})["slide_type"] = expected
            lines = len(cell.source.splitlines())
            if cell.cell_type == "code" and lines > MAX_CODE_LINES:
                problems.append(f"{path.name}: a code cell of {lines} lines (at most {MAX_CODE_LINES})")
        if changed:
            problems.append(f"{path.name}: slide types {'set' if args.write else 'missing or stale'}")
            if args.write:
                nbformat.write(notebook, path)
    print("\n".join(problems))
    return 1 if problems and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
