"""Run the notebooks at several points of a portability matrix, on this one machine.

    make portability                                  # every point, every notebook
    python -m tools.portability --points default,mkl-compatible notebooks/06_*.ipynb
    python -m tools.portability --points ci-second    # the second point that `make test` runs
    python -m tools.portability --points default --changed --jobs 2   # what `make check` runs

Readers' machines differ in ways that change the last bits of a float32 result:
the CPU kernels ATen picks (``ATEN_CPU_CAPABILITY``), the code path MKL picks
for matrix products (``MKL_CBWR``), the number of threads a reduction is split
over, and the torch release. Each point of the matrix sets one of these and
runs strict nbval on the notebooks, so a table says, per notebook and point,
whether every committed output is reproduced and every assert holds.

The point ``torch-next`` runs the newest torch that pip offers here (a CUDA build
of several GB, computing on the CPU) from its own environment, ``.venv-torch-next``,
created on first use and kept; ``make test`` never touches it.

A failing cell is shown as pytest shows it: the cell, the diff of its outputs or its
traceback. With ``--stamp``, a notebook that passes at a point leaves a stamp
(``_build/stamps/<point>/<notebook>``) holding the hash of everything its run depends on
(``stamp_key``); ``--changed`` runs only the notebooks whose stamp is missing or differs.
``--jobs N`` runs the notebooks in N pytest processes at once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from tools.helpers_index import helpers_reached
from tools.notebook_format import ROOT, chapter_notebooks

MAIN_PYTHON = ROOT / ".venv" / "bin" / "python"
STAMPS = ROOT / "_build" / "stamps"
NEXT_VENV = ROOT / ".venv-torch-next"
NEXT_TORCH = "torch==2.14.1"  # the newest release pip offers on this machine (README: supported range)


def has_avx512() -> bool:
    try:
        return " avx512f " in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@dataclass
class Point:
    name: str
    env: dict[str, str]
    python: Path = MAIN_PYTHON
    what: str = ""
    lax: bool = False  # other random draws: outputs differ by design, only the asserts (and glue bands) must hold


ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
POINTS = [
    Point("default", {}, what="this machine's defaults (all cores, fastest kernels)"),
    Point("threads-1", ONE_THREAD, what="one thread: reductions split differently"),
    Point("aten-default", {"ATEN_CPU_CAPABILITY": "default"}, what="ATen's scalar kernels"),
    Point("aten-avx2", {"ATEN_CPU_CAPABILITY": "avx2"}, what="ATen's AVX2 kernels"),
    Point("aten-avx512", {"ATEN_CPU_CAPABILITY": "avx512"}, what="ATen's AVX-512 kernels (where the CPU has them)"),
    Point("mkl-compatible", {"MKL_CBWR": "COMPATIBLE"}, what="MKL's most portable matrix-product path"),
    Point(
        "ci-second",
        # the build-only cells (the figures' other layouts and Chinese copies) compute no number: they run at
        # the default point, and are skipped here (conftest.py)
        {**ONE_THREAD, "MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default", "BOOK_NBVAL_BUILD_CELLS": "skip"},
        what="the second point of `make test`: MKL portable path, scalar ATen kernels, one thread",
    ),
    Point("torch-next", {}, python=NEXT_VENV / "bin" / "python", what=f"{NEXT_TORCH} (CUDA build, on the CPU)"),
    Point(
        "seed-shift",
        {"BOOK_SEED_OFFSET": "100003"},
        lax=True,
        what="every seed shifted, as a GPU draws other numbers: asserts and glue bands only",
    ),
    Point("seed-shift-2", {"BOOK_SEED_OFFSET": "200017"}, lax=True, what="another shift of every seed"),
]


def ensure_next_venv() -> None:
    """Create .venv-torch-next once: the newest torch plus the book's other pins."""
    python = NEXT_VENV / "bin" / "python"
    if python.is_file():
        return
    requirements = [
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#") and not line.startswith("torch==")
    ]
    print(f"creating {NEXT_VENV.name} with {NEXT_TORCH} (several GB, once)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(NEXT_VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, NEXT_TORCH, *requirements], check=True)
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", "-e", str(ROOT)], check=True)
    # the repository's root on its path, as `make setup` puts it on .venv's: the build-only cells import tools
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "sqrt_dk_book_root.pth").write_text(f"{ROOT}\n", encoding="utf-8")


@dataclass
class Result:
    seconds: float = 0.0
    cells: int = 0
    differ: list[int] = field(default_factory=list)
    raised: list[int] = field(default_factory=list)
    reports: dict[int, str] = field(default_factory=dict)  # cell -> what pytest said (diff or traceback)

    def __str__(self) -> str:
        if self.raised:
            return f"ASSERT/ERROR cells {','.join(map(str, self.raised))}"
        if self.differ:
            return f"outputs differ: cells {','.join(map(str, self.differ))}"
        return f"ok {self.seconds:.0f} s"

    def lax(self) -> str:
        return (
            f"ASSERT/ERROR cells {','.join(map(str, self.raised))}"
            if self.raised
            else f"asserts ok {self.seconds:.0f} s"
        )


def run_pytest(point: Point, notebooks: list[Path]) -> tuple[dict[str, Result], str]:
    """Strict nbval on ``notebooks`` in ``point``'s environment, one pytest process: one Result
    per notebook, and pytest's output (for a run that fails before it reports any cell)."""
    env = {**os.environ, **point.env, "BOOK_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}
    results = {path.name: Result() for path in notebooks}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        command = [
            str(point.python),
            "-m",
            "pytest",
            "-q",
            "--nbval",
            "-p",
            "no:randomly",
            "-o",
            f"cache_dir={tmp}/cache",  # a process of its own: nothing to share with another run
            f"--junitxml={report}",
            *[str(p.relative_to(ROOT)) for p in notebooks],
        ]
        run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if not report.is_file():
            raise RuntimeError(f"{point.name}: pytest wrote no report:\n{(run.stdout + run.stderr)[-4000:]}")
        for case in ET.parse(report).getroot().iter("testcase"):
            notebook = next((n for n in results if n.removesuffix(".ipynb") in case.get("classname", "")), None)
            if notebook is None:
                continue
            result = results[notebook]
            result.seconds += float(case.get("time", 0))
            result.cells += 1
            cell = int(case.get("name", "Cell -1").split()[-1])
            failure = case.find("failure")
            if failure is None:
                failure = case.find("error")
            if failure is not None:
                text = (failure.get("message") or "") + "\n" + (failure.text or "")
                (result.differ if "Cell outputs differ" in text else result.raised).append(cell)
                result.reports[cell] = text.strip()
    return results, run.stdout + run.stderr


def run_point(point: Point, notebooks: list[Path], jobs: int = 1) -> dict[str, Result]:
    """Strict nbval on ``notebooks`` in ``point``'s environment, in ``jobs`` pytest processes at
    once (the longest notebooks first, each to the process with the least work so far)."""
    if jobs <= 1 or len(notebooks) <= 1:
        return run_pytest(point, notebooks)[0]
    seconds = last_seconds(point)
    groups: list[list[Path]] = [[] for _ in range(min(jobs, len(notebooks)))]
    for path in sorted(notebooks, key=lambda p: -seconds.get(p.name, 60.0)):
        min(groups, key=lambda g: sum(seconds.get(p.name, 60.0) for p in g)).append(path)
    with ThreadPoolExecutor(len(groups)) as pool:
        parts = list(pool.map(lambda group: run_pytest(point, group)[0], groups))
    merged = {name: result for part in parts for name, result in part.items()}
    return {path.name: merged[path.name] for path in notebooks}


# --- stamps: run a notebook only when what its run depends on has changed ------------------

# What a strict-nbval run of a notebook reads besides the notebook: the helpers it imports,
# the pins, the pytest settings and the sanitizers, and the build side its build-only cells call.
STAMP_FILES = ("requirements.txt", "pyproject.toml", "conftest.py", "tests/nbval-sanitize.cfg", "tools/figures.py")
STAMP_PACKAGES = ("torch", "numpy", "matplotlib", "nbval", "nbclient", "ipykernel", "pytest")
# the variables that change what a notebook computes: the helpers' own (helpers/device.py) and
# the thread, kernel and matrix-product settings of torch's libraries
STAMP_ENV = ("BOOK_DEVICE", "BOOK_SEED_OFFSET")
STAMP_ENV_PREFIXES = ("OMP_", "MKL_", "ATEN_", "OPENBLAS_", "CUDA_", "TORCH_")


def machine_key() -> dict[str, object]:
    """What decides the arithmetic path on this machine: the CPU (its model and vector
    extensions), the number of cores, Python and the installed versions of the stack."""
    flags, model = set(), ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
            elif line.startswith("model name") and not model:
                model = line.split(":", 1)[1].strip()
    except OSError:
        model = platform.processor()
    vector = sorted(f for f in flags if f.startswith(("avx", "fma", "amx", "sse4")))
    versions = {}
    for package in STAMP_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpu": model,
        "vector": vector,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "packages": versions,
    }


def stamp_key(notebook: Path, point: Point, root: Path = ROOT) -> str:
    """sha256 of everything a strict-nbval run of ``notebook`` at ``point`` depends on:

    - every code cell's source, tags and committed outputs, and whether it was executed (nbval
      compares only executed cells); markdown cells and other metadata (captions, alt texts)
      are left out, since nbval never reads them;
    - the modules of ``helpers/`` that the notebook reaches (``helpers_reached``), and
      ``STAMP_FILES`` (of ``root``);
    - the point's environment, and this process's ``STAMP_ENV`` and ``STAMP_ENV_PREFIXES`` variables;
    - ``machine_key()``: the CPU, the core count, Python and the stack's versions.
    """
    digest = hashlib.sha256()
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [
        [c["source"], c.get("metadata", {}).get("tags", []), c.get("outputs", []), c.get("execution_count") is not None]
        for c in cells
        if c["cell_type"] == "code"
    ]
    digest.update(json.dumps(code, sort_keys=True).encode())
    modules = helpers_reached([c[0] if isinstance(c[0], str) else "".join(c[0]) for c in code], root)
    files = [root / "helpers" / name for name in sorted(modules)] + [root / name for name in STAMP_FILES]
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    env = {k: v for k, v in os.environ.items() if k in STAMP_ENV or k.startswith(STAMP_ENV_PREFIXES)}
    environment = {**env, **point.env, "python": str(point.python)}
    digest.update(json.dumps([environment, machine_key()], sort_keys=True).encode())
    return digest.hexdigest()


def stamp_path(point: Point, notebook: Path) -> Path:
    return STAMPS / point.name / notebook.name


def is_current(point: Point, notebook: Path, key: str) -> bool:
    path = stamp_path(point, notebook)
    return path.is_file() and path.read_text().split()[0] == key


def write_stamps(point: Point, results: dict[str, Result], keys: dict[Path, str]) -> None:
    """A passing notebook gets its stamp (and its time, for the next run's split); a failing one
    loses it. ``keys`` were taken before the run: an edit made while it ran is not stamped."""
    for path, key in keys.items():
        result, stamp = results[path.name], stamp_path(point, path)
        if result.cells and not result.raised and not result.differ:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(f"{key} {result.seconds:.1f}\n")
        else:
            stamp.unlink(missing_ok=True)


def last_seconds(point: Point) -> dict[str, float]:
    """Each notebook's time at its last passing run at ``point`` (from the stamps)."""
    found = {}
    for stamp in (STAMPS / point.name).glob("*.ipynb"):
        fields = stamp.read_text().split()
        if len(fields) == 2:
            found[stamp.name] = float(fields[1])
    return found


def failure_report(point: Point, results: dict[str, Result], limit: int = 80) -> str:
    """Each failing cell as pytest reported it: the diff of its outputs, or its traceback."""
    blocks = []
    for name, result in results.items():
        for cell, text in sorted(result.reports.items()):
            lines = text.splitlines()
            shown = lines if len(lines) <= limit else [*lines[: limit // 2], "[…]", *lines[-limit // 2 :]]
            blocks.append(f"--- {point.name}: {name}, cell {cell} ---\n" + "\n".join(shown))
    return "\n\n".join(blocks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--points", default="", help="comma-separated point names (default: all)")
    parser.add_argument("--report", type=Path, default=ROOT / "_build" / "portability.md")
    parser.add_argument("--jobs", type=int, default=1, help="pytest processes per point (default 1)")
    parser.add_argument("--stamp", action="store_true", help="stamp each notebook that passes (see --changed)")
    parser.add_argument(
        "--changed", action="store_true", help="only notebooks without a current stamp at the point (implies --stamp)"
    )
    args = parser.parse_args()
    notebooks = [p.resolve() for p in args.notebooks] or chapter_notebooks()
    wanted = [name for name in args.points.split(",") if name]
    unknown = set(wanted) - {p.name for p in POINTS}
    if unknown:
        parser.error(f"unknown points {sorted(unknown)}; known: {[p.name for p in POINTS]}")
    points = [p for p in POINTS if not wanted or p.name in wanted]
    if not has_avx512():
        skipped = [p for p in points if p.name == "aten-avx512"]
        points = [p for p in points if p.name != "aten-avx512"]
        for p in skipped:
            print(f"skipping {p.name}: this CPU has no AVX-512", flush=True)
    if any(p.name == "torch-next" for p in points):
        ensure_next_venv()

    table: dict[str, dict[str, Result]] = {}
    failed = False
    for point in points:
        start = time.perf_counter()
        keys = {p: stamp_key(p, point) for p in notebooks}
        todo = [p for p in notebooks if not (args.changed and is_current(point, p, keys[p]))]
        unchanged = [p for p in notebooks if p not in todo]
        if unchanged:
            print(f"{point.name:16} unchanged since their last pass: {', '.join(p.name for p in unchanged)}")
        table[point.name] = run_point(point, todo, args.jobs) if todo else {}
        for path in unchanged:
            table[point.name][path.name] = Result(seconds=last_seconds(point).get(path.name, 0.0), cells=-1)
        if args.stamp or args.changed:
            write_stamps(point, table[point.name], {p: keys[p] for p in todo})
        bad = [n for n, r in table[point.name].items() if r.raised or r.cells == 0 or (r.differ and not point.lax)]
        failed |= bool(bad)
        print(
            f"{point.name:16} {time.perf_counter() - start:6.0f} s  {'FAIL: ' + ', '.join(bad) if bad else 'all ok'}",
            flush=True,
        )
        report = failure_report(point, {n: r for n, r in table[point.name].items() if n in bad})
        if report:
            print(report, flush=True)

    def cell(point: Point, path: Path) -> str:
        result = table[point.name][path.name]
        if result.cells == -1:
            return "unchanged"
        return result.lax() if point.lax else str(result)

    lines = ["| notebook | " + " | ".join(p.name for p in points) + " |", "|---|" + "---|" * len(points)]
    for path in notebooks:
        lines.append(f"| {path.name} | " + " | ".join(cell(p, path) for p in points) + " |")
    lines += [
        "",
        "Points: "
        + "; ".join(
            f"`{p.name}`: {p.what} ({' '.join(f'{k}={v}' for k, v in p.env.items()) or 'no variables'})" for p in points
        ),
    ]
    text = "\n".join(lines)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(text + "\n", encoding="utf-8")
    print(text)
    results = [r for point in points for r in table[point.name].values() if r.cells > 0]
    bad_cells = sum(len(r.raised) + len(r.differ) for r in results)
    print(f"nbval: {sum(r.cells for r in results) - bad_cells} passed, {bad_cells} failed (notebook cells)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
