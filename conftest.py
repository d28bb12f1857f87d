"""pytest settings for the whole suite (unit tests, notebooks, the built site).

Notebooks run under strict nbval only when asked for: ``pytest notebooks/03_softmax_saturation.ipynb``
(or ``pytest notebooks``) turns ``--nbval`` on by itself, as does an explicit ``--nbval``; a bare
``pytest`` collects ``tests/`` only. ``make test`` runs every notebook at two points of the
portability matrix (its stages nbval-default and nbval-ci-second, tools/portability.py), ``make check``
those whose code, outputs or helpers changed.

Build-only cells (tagged ``remove-cell``, importing the build side: ``from tools import figures``) draw the
figures' other layouts and Chinese copies; nbval compares none of their outputs. With
``BOOK_NBVAL_BUILD_CELLS=skip`` (the portability matrix's second point, ``ci-second``) nbval skips them: they
compute no number, and the default point runs every one of them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
NOTEBOOKS = ROOT / "notebooks"


def names_notebooks(args: list[str]) -> bool:
    """True if a command-line argument is a notebook or the notebooks' folder."""
    for arg in args:
        path = Path(arg.split("::")[0]).resolve()
        if path.suffix == ".ipynb" or path == NOTEBOOKS:
            return True
    return False


def pytest_configure(config):
    # Strict nbval compares against outputs made on a CPU: GPUs draw other
    # random numbers, so the kernels that nbval starts must compute on the CPU.
    os.environ["BOOK_DEVICE"] = "cpu"
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    if not hasattr(config.option, "nbval"):  # nbval may be absent: then there is nothing to set
        return
    if not (config.option.nbval or config.option.nbval_lax) and names_notebooks(config.args):
        config.option.nbval = True
    if config.option.nbval:
        config.option.nbval_current_env = True
        if not config.option.nbval_sanitize_with:
            config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval-sanitize.cfg")


def pytest_collection_modifyitems(config, items):
    from tools.notebook_format import is_build_only

    skip_build = os.environ.get("BOOK_NBVAL_BUILD_CELLS") == "skip"
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebook)
            if skip_build and is_build_only(item.cell):
                item.options["skip"] = True  # nbval's own skip (the nbval-skip tag), for this run only
