"""Every notebook's first code cell is the Colab setup cell (``make tidy`` keeps it so).

Colab has torch and matplotlib but not this book's ``helpers``; the cell
installs it from the repository, only inside Colab. The repository URL and the
ref come from ``_config.yml`` (``repository.url`` and ``repository.branch``),
their one place.
"""

from __future__ import annotations

import nbformat
import yaml

from tools.notebook_format import COLAB_MARKER, ROOT


def install_target() -> str:
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    return f"git+{repository['url']}@{repository.get('branch', 'main')}"


def setup_cell_source(target: str | None = None) -> str:
    return (
        f"{COLAB_MARKER} install this book's `helpers` package (Colab brings its own torch).\n"
        "# Elsewhere this cell does nothing: the book's environment already has helpers.\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install --quiet "{target or install_target()}"'
    )


def first_code_cell(notebook: nbformat.NotebookNode):
    return next((cell for cell in notebook.cells if cell.cell_type == "code"), None)


def refresh_setup_cell(notebook: nbformat.NotebookNode) -> bool:
    """Insert or refresh the setup cell; True if the notebook changed (re-execute it then)."""
    expected = setup_cell_source()
    cell = first_code_cell(notebook)
    if cell is not None and cell.source == expected:
        return False
    if cell is not None and cell.source.startswith(COLAB_MARKER):
        cell.source = expected
    else:
        index = notebook.cells.index(cell) if cell is not None else len(notebook.cells)
        new = nbformat.v4.new_code_cell(expected)
        new.id = "colab-setup"
        notebook.cells.insert(index, new)
    return True
