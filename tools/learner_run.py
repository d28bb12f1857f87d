"""Run the learner notebooks of a release as a learner does: a fresh kernel each, helpers installed by the
notebook's own first cell from the release's wheel, served on 127.0.0.1.

    python -m tools.learner_run                        # every chapter, both languages, of _build/release
    python -m tools.learner_run --only 03 --language zh_CN
    python -m tools.learner_run --python /path/to/venv/bin/python   # a light environment made by pip

The kernel is a light environment (``tools/light_env.py``: binder's packages only, none of the
book's stack), or the interpreter given with ``--python``. Before each notebook, helpers is
uninstalled there, so that every setup cell really installs it: the cell is the notebook's, with
only the site's address replaced by the local server's. The table of seconds (wall clock, setup
cell included) goes to stdout; a notebook that raises makes the exit status 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tools import learner
from tools.browser import serve
from tools.light_env import light_kernel
from tools.notebook_format import COLAB_MARKER, ROOT, read


@dataclass
class Run:
    path: Path
    seconds: float
    error: str | None
    notebook: nbformat.NotebookNode


def run(notebooks: list[Path], site: Path, tmp: Path, python: str | None = None, timeout: int = 1800) -> list[Run]:
    """Execute each learner notebook in its own fresh kernel; ``site`` holds ``dist/<the wheel>``."""
    runs = []
    with serve(site) as url, light_kernel(tmp, python=python) as (kernel, interpreter):
        for path in notebooks:
            subprocess.run(
                [interpreter, "-m", "pip", "uninstall", "--quiet", "--yes", learner.DISTRIBUTION],
                capture_output=True,
            )
            notebook = read(path)
            setup = next(c for c in notebook.cells if c.cell_type == "code")
            assert setup.source.startswith(COLAB_MARKER), f"{path}: the first code cell is not the setup cell"
            setup.source = setup.source.replace(learner.site_url(), f"{url}/")
            folder = tmp / "runs" / path.parent.name / path.stem  # a folder of its own, as a learner downloads it
            folder.mkdir(parents=True)
            client = NotebookClient(
                notebook, timeout=timeout, kernel_name=kernel, resources={"metadata": {"path": str(folder)}}
            )
            start, error = time.perf_counter(), None
            try:
                client.execute()
            except Exception as raised:  # a cell's error: say which, and go on with the next notebook
                error = str(raised).strip().splitlines()[-1][:200]
            runs.append(Run(path, time.perf_counter() - start, error, notebook))
    return runs


def table(runs: list[Run]) -> str:
    lines = ["| notebook | seconds | result |", "|---|---:|---|"]
    for item in runs:
        lines.append(f"| {item.path.parent.name}/{item.path.name} | {item.seconds:.1f} | {item.error or 'ran'} |")
    lines.append(f"| total | {sum(r.seconds for r in runs):.1f} | {sum(r.error is None for r in runs)} ran |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("release", nargs="?", type=Path, default=ROOT / "_build" / "release")
    parser.add_argument("--only", help="chapters whose file name starts with one of these (comma-separated)")
    parser.add_argument("--language", choices=learner.LANGUAGES, help="one edition only")
    parser.add_argument("--python", help="the kernel's interpreter (default: a fresh light environment)")
    args = parser.parse_args()
    notebooks = [
        path
        for language in ([args.language] if args.language else learner.LANGUAGES)
        for path in sorted((args.release / "notebooks" / language).glob("*.ipynb"))
        if not args.only or path.name.startswith(tuple(args.only.split(",")))
    ]
    if not notebooks or not (args.release / "site" / "dist" / learner.wheel_name()).is_file():
        print(f"learner_run: no learner notebooks or no wheel in {args.release} (make release)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        runs = run(notebooks, args.release / "site", Path(tmp), args.python)
    print(table(runs))
    return 0 if all(r.error is None for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
