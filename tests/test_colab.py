"""The setup cell: present in every notebook, pinned to the release, and it really installs helpers.

Colab cannot be reached from here, so the smoke test simulates a kernel that has torch,
matplotlib and ipykernel but not ``helpers`` (as Colab, or a downloaded notebook's own
Python), with the setup cell's install target pointed at this checkout instead of the
repository URL. The whole of a chapter runs from its learner notebook in the light
environment (tests/test_learner.py), not here.
"""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from tests.light_env import light_kernel
from tools.colab_cell import DISTRIBUTION, first_code_cell, is_setup_cell, setup_cell_source
from tools.notebook_format import ROOT, chapter_notebooks, read

# That every notebook starts with the current setup cell is checked with the rest of
# `make tidy` (tests/test_tidy_and_claims.py).


def test_setup_cell_installs_the_configured_release():
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    source = setup_cell_source()
    assert f'"git+{repository["url"]}@{repository["release"]}"' in source
    assert repository["release"] != repository.get("branch"), "a release tag, not a moving branch"
    assert f'version("{DISTRIBUTION}")' in source  # the distribution's own name, not the import name


def test_every_notebook_starts_with_it_and_the_site_removes_it():
    for path in chapter_notebooks():
        cell = first_code_cell(read(path))
        assert cell is not None and is_setup_cell(cell), path.name
        assert "remove-cell" in cell.metadata.get("tags", []), f"{path.name}: the site shows the setup cell"


@pytest.mark.kernel
def test_setup_cell_installs_helpers_where_it_is_missing(tmp_path):
    with light_kernel(tmp_path) as (kernel_name, python):
        assert subprocess.run([python, "-c", "import helpers"], cwd=tmp_path, capture_output=True).returncode != 0
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [
            nbformat.v4.new_code_cell(setup_cell_source(target=str(ROOT))),
            nbformat.v4.new_code_cell("import helpers\nprint(helpers.get_device().type)"),
        ]
        NotebookClient(
            notebook, timeout=300, kernel_name=kernel_name, resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
        printed = [o["text"] for o in notebook.cells[1].outputs if o.get("name") == "stdout"]
        assert printed == ["cpu\n"], notebook.cells[1].outputs
        # a second run finds it installed and does nothing
        again = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup_cell_source(target=str(ROOT)))])
        NotebookClient(
            again, timeout=120, kernel_name=kernel_name, resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
        assert again.cells[0].outputs == []
    assert sys.executable  # the book's own interpreter was never touched
