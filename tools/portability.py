"""Run the notebooks at several points of a portability matrix, on this one machine.

    make portability                                  # every point, every notebook
    python -m tools.portability --points default,mkl-compatible notebooks/06_*.ipynb
    python -m tools.portability --points ci-second    # the second point that `make test` runs

Readers' machines differ in ways that change the last bits of a float32 result:
the CPU kernels ATen picks (``ATEN_CPU_CAPABILITY``), the code path MKL picks
for matrix products (``MKL_CBWR``), the number of threads a reduction is split
over, and the torch release. Each point of the matrix sets one of these and
runs strict nbval on the notebooks, so a table says, per notebook and point,
whether every committed output is reproduced and every assert holds.

The point ``torch-next`` runs the newest torch that pip offers here (a CUDA build
of several GB, computing on the CPU) from its own environment, ``.venv-torch-next``,
created on first use and kept; ``make test`` never touches it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from tools.notebook_format import ROOT, chapter_notebooks

MAIN_PYTHON = ROOT / ".venv" / "bin" / "python"
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
        {**ONE_THREAD, "MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"},
        what="the second point of `make test`: MKL portable path, scalar ATen kernels, one thread",
    ),
    Point("torch-next", {}, python=NEXT_VENV / "bin" / "python", what=f"{NEXT_TORCH} (CUDA build, on the CPU)"),
    Point("seed-shift", {"BOOK_SEED_OFFSET": "100003"}, lax=True,
          what="every seed shifted, as a GPU draws other numbers: asserts and glue bands only"),
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


@dataclass
class Result:
    seconds: float = 0.0
    cells: int = 0
    differ: list[int] = field(default_factory=list)
    raised: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        if self.raised:
            return f"ASSERT/ERROR cells {','.join(map(str, self.raised))}"
        if self.differ:
            return f"outputs differ: cells {','.join(map(str, self.differ))}"
        return f"ok {self.seconds:.0f} s"

    def lax(self) -> str:
        return f"ASSERT/ERROR cells {','.join(map(str, self.raised))}" if self.raised else f"asserts ok {self.seconds:.0f} s"


def run_point(point: Point, notebooks: list[Path]) -> dict[str, Result]:
    """Strict nbval on ``notebooks`` in ``point``'s environment; one Result per notebook."""
    env = {**os.environ, **point.env, "BOOK_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}
    results = {path.name: Result() for path in notebooks}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        command = [
            str(point.python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            f"--junitxml={report}",
            *[str(p.relative_to(ROOT)) for p in notebooks],
        ]
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if not report.is_file():
            raise RuntimeError(f"{point.name}: pytest wrote no report")
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
                text = (failure.get("message") or "") + (failure.text or "")
                (result.differ if "Cell outputs differ" in text else result.raised).append(cell)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--points", default="", help="comma-separated point names (default: all)")
    parser.add_argument("--report", type=Path, default=ROOT / "_build" / "portability.md")
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
        table[point.name] = run_point(point, notebooks)
        bad = [n for n, r in table[point.name].items() if r.raised or r.differ or r.cells == 0]
        failed |= bool(bad)
        print(
            f"{point.name:16} {time.perf_counter() - start:6.0f} s  {'FAIL: ' + ', '.join(bad) if bad else 'all ok'}",
            flush=True,
        )

    lines = ["| notebook | " + " | ".join(p.name for p in points) + " |", "|---|" + "---|" * len(points)]
    for path in notebooks:
        cells = [table[p.name][path.name].lax() if p.lax else str(table[p.name][path.name]) for p in points]
        lines.append(f"| {path.name} | " + " | ".join(cells) + " |")
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
