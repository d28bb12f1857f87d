"""Keep every notebook's first code cell the Colab setup cell.

    python tools/colab_cell.py --check   # exit 1 if a notebook's setup cell is missing or stale
    python tools/colab_cell.py --write   # insert or refresh it (then re-execute: make execute)

Colab has torch and matplotlib but not this book's ``helpers``; the cell
installs it from the repository, only inside Colab. The repository URL and the
ref come from ``_config.yml`` (``repository.url`` and ``repository.branch``),
their one place.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
MARKER = "# Colab only:"


def install_target() -> str:
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    return f"git+{repository['url']}@{repository.get('branch', 'main')}"


def setup_cell_source(target: str | None = None) -> str:
    return (
        f"{MARKER} install this book's `helpers` package (Colab brings its own torch).\n"
        "# Elsewhere this cell does nothing: the book's environment already has helpers.\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install --quiet "{target or install_target()}"'
    )


def first_code_cell(notebook: nbformat.NotebookNode):
    return next((cell for cell in notebook.cells if cell.cell_type == "code"), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="insert or refresh the cell")
    parser.add_argument("--check", action="store_true", help="fail if a cell is missing or stale")
    args = parser.parse_args()
    expected = setup_cell_source()
    stale = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        cell = first_code_cell(notebook)
        if cell is not None and cell.source == expected:
            continue
        stale.append(path.name)
        if args.write:
            if cell is not None and cell.source.startswith(MARKER):
                cell.source = expected
            else:
                index = notebook.cells.index(cell) if cell is not None else len(notebook.cells)
                new = nbformat.v4.new_code_cell(expected)
                new.id = "colab-setup"
                notebook.cells.insert(index, new)
            nbformat.write(notebook, path)
    for name in stale:
        print(f"{'updated' if args.write else 'stale or missing'}: {name}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
