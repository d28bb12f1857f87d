"""The Colab setup cell: present in every notebook, and it really installs helpers.

Colab cannot be reached from here, so the test simulates it: a fresh virtual
environment that has torch, matplotlib and ipykernel but not ``helpers``, a
kernel started from it, ``google.colab`` present in ``sys.modules``, and the
setup cell's install target pointed at this checkout instead of the repository URL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tools.colab_cell import first_code_cell, setup_cell_source
from tools.notebook_format import ROOT, chapter_notebooks

# That every notebook starts with the current setup cell is checked with the rest of
# `make tidy` (tests/test_tidy_and_claims.py).


def test_setup_cell_targets_the_configured_repository():
    source = setup_cell_source()
    assert '"google.colab" in sys.modules' in source
    assert "git+https://github.com/" in source and "@" in source.split("git+")[1]


def test_notebook_runs_in_a_simulated_colab(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)  # nothing may reach helpers but the setup cell
    venv = tmp_path / "colab"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # torch, matplotlib, ipykernel from the book's environment, as Colab has its own;
    # a path added by a .pth line does not run that directory's own .pth files, so the
    # editable install of helpers stays invisible.
    (site / "book_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    assert subprocess.run([python, "-c", "import torch, matplotlib, ipykernel"], cwd=tmp_path).returncode == 0
    assert subprocess.run([python, "-c", "import helpers"], cwd=tmp_path, capture_output=True).returncode != 0

    kernels = tmp_path / "jupyter" / "kernels" / "colab-sim"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "simulated Colab",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))

    path = chapter_notebooks()[0]
    notebook = nbformat.read(path, as_version=4)
    setup = first_code_cell(notebook)
    setup.source = setup_cell_source(target=str(ROOT))
    fake_colab = nbformat.v4.new_code_cell(
        'import sys, types\nsys.modules["google.colab"] = types.ModuleType("google.colab")'
    )
    notebook.cells.insert(notebook.cells.index(setup), fake_colab)
    NotebookClient(
        notebook, timeout=600, kernel_name="colab-sim", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    assert subprocess.run([python, "-c", "import helpers"], cwd=tmp_path).returncode == 0
