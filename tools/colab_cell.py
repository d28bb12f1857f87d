"""Every notebook's first code cell is the setup cell (``make tidy`` keeps it so).

Colab has torch and matplotlib but not this book's ``helpers``, and neither has a
notebook downloaded from the site. The cell installs ``helpers`` where it is missing
(it has no dependencies, so nothing else changes) and does nothing in the book's own
environments (``make lab``, Binder, the test kernels), where it is installed.

It asks for the distribution by its own name, ``sqrt-dk-book-helpers``, not for the
import name: PyPI has unrelated distributions that install a module ``helpers`` too,
and one of them must not stop the book's from being installed.

It installs the release that ``_config.yml`` names (``repository.release``), never a
moving branch: a learner who opens an old link gets the helpers of that link's notebooks.
On the site the cell is removed (``remove-cell``): a reader runs nothing, and the first
code a reader sees is the chapter's own.
"""

from __future__ import annotations

import nbformat
import yaml

from tools.notebook_format import COLAB_MARKER, ROOT

DISTRIBUTION = "sqrt-dk-book-helpers"
SITE_TAGS = ["remove-cell"]
LEGACY_MARKERS = ("# Colab only:",)  # earlier setup cells, replaced by make tidy


def install_target() -> str:
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    return f"git+{repository['url']}@{repository['release']}"


def setup_cell_source(target: str | None = None) -> str:
    target = target or install_target()
    release = target.rsplit("@", 1)[-1] if target.startswith("git+") else "this checkout"
    return (
        f"{COLAB_MARKER} this book's `helpers` package ({DISTRIBUTION} {release}). Where it is missing\n"
        "# (Colab, or a notebook downloaded from the site), this installs it; it needs torch and matplotlib,\n"
        "# which Colab has. In the book's own environment (make lab, Binder) it is there: nothing happens.\n"
        "from importlib.metadata import PackageNotFoundError, version\n"
        "\n"
        "try:\n"
        f'    version("{DISTRIBUTION}")\n'
        "except PackageNotFoundError:\n"
        f'    %pip install --quiet "{target}"'
    )


def first_code_cell(notebook: nbformat.NotebookNode):
    return next((cell for cell in notebook.cells if cell.cell_type == "code"), None)


def is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.source.startswith((COLAB_MARKER, *LEGACY_MARKERS))


def refresh_setup_cell(notebook: nbformat.NotebookNode) -> bool:
    """Insert or refresh the setup cell and its tags; True if its source changed (re-execute it then)."""
    expected = setup_cell_source()
    cell = first_code_cell(notebook)
    changed = False
    if cell is None or not is_setup_cell(cell):
        index = notebook.cells.index(cell) if cell is not None else len(notebook.cells)
        cell = nbformat.v4.new_code_cell(expected)
        cell.id = "colab-setup"
        notebook.cells.insert(index, cell)
        changed = True
    elif cell.source != expected:
        cell.source = expected
        changed = True
    cell_tags = cell.metadata.setdefault("tags", [])
    missing = [tag for tag in SITE_TAGS if tag not in cell_tags]
    cell_tags.extend(missing)
    return changed or bool(missing)
