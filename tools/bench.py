"""Time each notebook's execution against the floor (a notebook that only imports).

    make bench            # every notebook
    python -m tools.bench notebooks/01_*.ipynb

Each notebook runs in a fresh kernel, as under nbval; the best of --repeat runs
counts. The floor is the cost every notebook pays before it computes anything:
starting a kernel and importing torch, matplotlib and helpers.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tools.notebook_format import QUIET_KERNEL, chapter_notebooks

FLOOR_SOURCE = "import torch\nimport matplotlib.pyplot as plt\nimport helpers"


def run_seconds(notebook: nbformat.NotebookNode, cwd: Path) -> float:
    start = time.perf_counter()
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        extra_arguments=QUIET_KERNEL,
    ).execute()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter, in reading order")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    args.notebooks = args.notebooks or chapter_notebooks()

    cwd = args.notebooks[0].parent
    floor_notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOR_SOURCE)])
    floor = min(run_seconds(nbformat.from_dict(floor_notebook), cwd) for _ in range(args.repeat))
    print(f"{'notebook':44}{'seconds':>9}{'floor':>8}{'ratio':>7}")
    print(f"{'(floor: kernel + imports)':44}{floor:9.2f}{floor:8.2f}{1.0:7.2f}")
    for path in args.notebooks:
        seconds = min(run_seconds(nbformat.read(path, as_version=4), path.parent) for _ in range(args.repeat))
        print(f"{path.name:44}{seconds:9.2f}{floor:8.2f}{seconds / floor:7.2f}")


if __name__ == "__main__":
    main()
