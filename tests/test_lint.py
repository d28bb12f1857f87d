"""The code reads one way everywhere: ruff's lint rules and format over the package, the
tests, the tools, the Sphinx extensions and the notebooks' code cells; mypy --strict over
helpers/ (configuration in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tools.notebook_format import ROOT

PATHS = ["helpers", "tests", "tools", "book/_ext", "conftest.py", "notebooks"]
pytestmark = pytest.mark.lint


@pytest.mark.parametrize("command", [["ruff", "check"], ["ruff", "format", "--check"]], ids=" ".join)
def test_ruff(command):
    result = subprocess.run([sys.executable, "-m", *command, *PATHS], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_mypy_strict_over_helpers():
    # mypy keeps its cache in .mypy_cache (git-ignored by mypy itself): cold on a fresh clone,
    # warm on every later run
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
