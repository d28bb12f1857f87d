"""Strict nbval once more, on another CPU code path.

The main run compares the notebooks on this machine's fastest kernels. Readers'
machines differ (thread counts, vector instructions), so every notebook must
also reproduce its committed outputs on one thread with plain scalar kernels.
Printed precision is chosen so that this holds; the asserts keep the results
honest.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_notebooks_on_one_thread_without_vector_kernels():
    env = {**os.environ, "OMP_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "notebooks", "-q", "-p", "no:randomly"],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-2000:]
