"""pytest settings for the whole suite (unit tests, notebooks, the built site)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def pytest_configure(config):
    # Strict nbval compares against outputs made on a CPU: GPUs draw other
    # random numbers, so the kernels that nbval starts must compute on the CPU.
    os.environ["BOOK_DEVICE"] = "cpu"
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    if getattr(config.option, "nbval", False):  # nbval may be absent: then there is nothing to set
        config.option.nbval_current_env = True
        if not config.option.nbval_sanitize_with:
            config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval-sanitize.cfg")
