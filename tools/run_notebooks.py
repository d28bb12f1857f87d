"""Execute notebooks on the best available device and report whether every assert held.

    make gpu-check                      # every notebook, on CUDA / MPS / CPU
    python -m tools.run_notebooks notebooks/01_*.ipynb

Outputs are not compared: random streams differ between devices, so strict
nbval stays the CPU check. What must hold everywhere is every ``assert``; a
failing cell stops its notebook and makes the run fail. Nothing is written back.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools.notebook_format import QUIET_KERNEL, chapter_notebooks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter, in reading order")
    args = parser.parse_args()
    args.notebooks = args.notebooks or chapter_notebooks()

    import helpers  # the device the notebooks will pick, for the report

    print(f"device: {helpers.get_device()}")
    failures = 0
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        client = NotebookClient(
            notebook,
            timeout=900,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            extra_arguments=QUIET_KERNEL,
        )
        try:
            client.execute()
            status = "ok"
        except CellExecutionError as error:
            failures += 1
            status = "FAILED\n" + str(error)[-3000:]
        print(f"{path.name:48}{time.perf_counter() - start:8.1f} s  {status}", flush=True)
    print(f"{len(args.notebooks) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
