"""The test suite in stages, run side by side on the machine's cores, with what each cost.

    python -m tools.suite test            # make test: everything, from scratch (CI runs this)
    python -m tools.suite check           # make check: the edit loop, about a minute
    python -m tools.suite test --only site-phone,unit   # some stages (and the builds they need)
    python -m tools.suite test --list     # the stages, what each runs, what it needs
    python -m tools.suite test --only site-desktop,site-phone --prebuilt --repeat 5
                                          # the browser stages five times on the site in _build/html

Each stage is one command (a pytest selection by marker, one point of strict nbval, one
edition's build). Stages start as soon as what they need has passed, the longest first, as
many at a time as the machine has cores (``--jobs``); a failing stage never stops the others.
Each writes its output to ``_build/suite/<stage>.log``; a failing stage's end is printed. The
run ends with a table of the stages: passed or failed, wall seconds, and CPU seconds: every
process the stage started, its descendants included (kernels, Sphinx, Chromium), and the
machine's busy CPU seconds over the run. Chromium's processes are not waited for by the stage
(Playwright starts the browser in a session of its own), so ``wait4``'s figure alone misses them:
a sampler reads ``/proc`` every half second and follows every descendant of the stage.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tools.notebook_format import ROOT

BIN = Path(sys.executable).parent
LOGS = ROOT / "_build" / "suite"
BUILD_ID = ROOT / "_build" / "site-build-id"  # tests/conftest.py: in CI, the site of this run only
SITE_OUTPUTS = (ROOT / "_build" / "html", ROOT / "_build" / "zh")  # the two builds' output
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:randomly"]
# Tiers by marker (tests/conftest.py, conftest.py); a bare `pytest` runs all of tests/.
UNIT = "not (notebook or site or browser or kernel or lint)"


@dataclass
class Stage:
    name: str
    command: list[str]
    what: str
    needs: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    ok_codes: tuple[int, ...] = (0,)  # pytest's 5 ("no tests collected") where a tier may be empty


def test_stages() -> list[Stage]:
    """`make test`, in the order stages start when their needs allow (longest work first)."""
    jupyter_book = str(BIN / "jupyter-book")
    site = ("build-en", "build-zh")
    return [
        Stage(
            "build-zh",
            [sys.executable, "-m", "tools.locale", "--build", "--all"],
            "the Chinese edition, from scratch, warnings as errors (_build/zh, then _build/html/zh)",
        ),
        Stage(
            "build-en",
            [jupyter_book, "build", str(ROOT), "-W", "-n", "--keep-going", "--all"],
            "the English edition, from scratch, warnings as errors (_build/html)",
        ),
        Stage(
            "site-desktop",
            [*PYTEST, "-m", "(site or browser) and not phone"],
            "the built site: static checks, every page at 1280 px (light, dark), the decks, the PDFs",
            needs=site,
        ),
        Stage(
            "nbval-ci-second",
            [sys.executable, "-m", "tools.portability", "--points", "ci-second"],
            "strict nbval, every notebook, at the second point (MKL portable path, scalar ATen, one thread)",
        ),
        Stage(
            "site-phone", [*PYTEST, "-m", "phone"], "every page at 390 px (light, dark), phone navigation", needs=site
        ),
        Stage(
            "nbval-default",
            [sys.executable, "-m", "tools.portability", "--points", "default", "--stamp"],
            "strict nbval, every notebook, at this machine's defaults (stamps them for `make check`)",
        ),
        Stage(
            "kernel",
            [*PYTEST, "-m", "kernel"],
            "the learner edition outside nbval, as a learner downloads it: English chapter 6, Chinese chapter 7b, "
            "helpers installed by the setup cell from a wheel served on 127.0.0.1",
            ok_codes=(0, 5),
        ),
        Stage(
            "unit", [*PYTEST, "-m", UNIT], "unit tests of helpers, and the static checks of notebooks, ledger, catalogs"
        ),
        Stage("lint", [*PYTEST, "-m", "lint"], "ruff (lint, format) and mypy --strict over helpers"),
    ]


def check_stages() -> list[Stage]:
    """`make check`: lint, mypy (warm cache), the unit and static tests, and strict nbval at the
    default point of the notebooks whose code cells, outputs or helpers changed since they passed."""
    return [
        Stage(
            "nbval-changed",
            [sys.executable, "-m", "tools.portability", "--points", "default", "--changed", "--jobs", "2"],
            "strict nbval at the default point, only notebooks whose stamp is stale (tools/portability.py)",
        ),
        Stage("unit", [*PYTEST, "-m", UNIT], "unit tests of helpers, and the static checks"),
        Stage("lint", [*PYTEST, "-m", "lint"], "ruff (lint, format) and mypy --strict (cache in .mypy_cache)"),
    ]


@dataclass
class Outcome:
    stage: Stage
    code: int | None = None  # None: not run
    start: float = 0.0
    end: float = 0.0
    cpu: float = 0.0
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.code in self.stage.ok_codes

    @property
    def wall(self) -> float:
        return self.end - self.start


RUNNING: dict[str, int] = {}  # stage -> process group, to end them all if the run is interrupted


def stop_all(*_: object) -> None:
    for group in list(RUNNING.values()):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
    raise SystemExit("interrupted: every running stage was stopped")


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds the process itself has used so far), from /proc."""
    table: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # the process ended while being read
            continue
        # after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)
    return table


class TreeCPU:
    """CPU seconds of a process and every descendant it has had, sampled from /proc: a descendant
    counts from the first sample that sees it (one that lives less than ``INTERVAL`` may be
    missed; ``wait4`` counts those, and the stage's figure is the larger of the two). One thread
    samples for every stage that runs."""

    INTERVAL = 0.5
    live: list[TreeCPU] = []
    lock = threading.Lock()
    sampler: threading.Thread | None = None

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, float] = {}  # pid -> its own CPU seconds when last seen
        with TreeCPU.lock:
            TreeCPU.live.append(self)
            if TreeCPU.sampler is None:
                TreeCPU.sampler = threading.Thread(target=TreeCPU.sample_all, daemon=True)
                TreeCPU.sampler.start()

    @classmethod
    def sample_all(cls) -> None:
        while True:
            time.sleep(cls.INTERVAL)
            with cls.lock:
                trees = list(cls.live)
            if trees:
                table = process_table()
                for tree in trees:
                    tree.update(table)

    def update(self, table: dict[int, tuple[int, float]]) -> None:
        tree = {self.root} | set(self.seen)
        grew = True
        while grew:  # add the children of the tree until nothing new joins
            new = {pid for pid, (parent, _) in table.items() if parent in tree and pid not in tree}
            tree |= new
            grew = bool(new)
        for pid in tree & table.keys():
            self.seen[pid] = max(self.seen.get(pid, 0.0), table[pid][1])

    def total(self) -> float:
        with TreeCPU.lock:
            if self in TreeCPU.live:
                TreeCPU.live.remove(self)
        return sum(self.seen.values())


def busy_cpu_seconds() -> float:
    """The machine's busy CPU seconds since boot (user, nice, system, irq, softirq), from /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return (user + nice + system + irq + softirq) / CLOCK_TICKS


def launch(stage: Stage, env: dict[str, str], done: queue.Queue[tuple[str, int, float]]) -> None:
    """Start ``stage`` in a process group of its own (so that it can be stopped whole, kernels
    included); a thread waits for it and reports (name, exit code, CPU seconds of its process tree)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log = (LOGS / f"{stage.name}.log").open("w", encoding="utf-8")
    command = list(stage.command)
    if command[:3] == [sys.executable, "-m", "pytest"]:  # each stage its own cache: --lf works, no two write one file
        command[3:3] = ["-o", f"cache_dir=_build/.pytest_cache/{stage.name}"]
    log.write(f"$ {shlex.join(command)}\n")
    log.flush()
    process = subprocess.Popen(
        command, cwd=ROOT, env={**env, **stage.env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )

    RUNNING[stage.name] = process.pid
    tree = TreeCPU(process.pid)

    def wait() -> None:
        # wait4 reports the stage's own CPU time and that of every process it waited for
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        RUNNING.pop(stage.name, None)
        log.close()
        done.put((stage.name, process.returncode, max(usage.ru_utime + usage.ru_stime, tree.total())))

    threading.Thread(target=wait, daemon=True).start()


def tail(path: Path, lines: int) -> str:
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])


def run(stages: list[Stage], jobs: int, tail_lines: int, prebuilt: bool = False) -> list[Outcome]:
    outcomes = {s.name: Outcome(s) for s in stages}
    waiting = list(stages)
    running: set[str] = set()
    done: queue.Queue[tuple[str, int, float]] = queue.Queue()
    build_id = uuid.uuid4().hex
    env = {**os.environ, "BOOK_SITE_PREBUILT": "1", "BOOK_SITE_BUILD_ID": build_id, "PYTHONUNBUFFERED": "1"}
    if prebuilt:  # the site in _build/html stands for this run's builds
        if not (ROOT / "_build" / "html" / "index.html").is_file():
            raise SystemExit("--prebuilt: no site in _build/html (make book)")
        BUILD_ID.write_text(build_id)
        for name in ("build-en", "build-zh"):
            outcomes[name] = Outcome(next(s for s in test_stages() if s.name == name), code=0, note="prebuilt")
    else:
        BUILD_ID.unlink(missing_ok=True)
        if any(s.name.startswith("build-") for s in stages):  # from scratch: no page of an earlier build stays
            for folder in SITE_OUTPUTS:
                shutil.rmtree(folder, ignore_errors=True)
    origin = time.perf_counter()

    def clock() -> float:
        return time.perf_counter() - origin

    def blocked(outcome: Outcome) -> bool:  # failed, or not run itself
        return (outcome.code is not None and not outcome.passed) or (outcome.code is None and bool(outcome.note))

    while waiting or running:
        for stage in list(waiting):
            needs = [outcomes[n] for n in stage.needs if n in outcomes]
            if any(blocked(n) for n in needs):
                outcomes[stage.name].note = (
                    "not run: " + ", ".join(n.stage.name for n in needs if blocked(n)) + " did not pass"
                )
                waiting.remove(stage)
            elif len(running) < jobs and all(n.passed for n in needs):
                outcomes[stage.name].start = clock()
                launch(stage, env, done)
                running.add(stage.name)
                waiting.remove(stage)
                print(f"[{clock():6.0f} s] {stage.name}: started ({stage.what})", flush=True)
        if not running:
            break
        name, code, cpu = done.get()
        running.discard(name)
        outcome = outcomes[name]
        outcome.code, outcome.end, outcome.cpu = code, clock(), cpu
        verdict = "passed" if outcome.passed else f"FAILED (exit {code})"
        print(f"[{clock():6.0f} s] {name}: {verdict} in {outcome.wall:.0f} s, {cpu:.0f} CPU s", flush=True)
        if name.startswith("build-") and all(o.passed for n, o in outcomes.items() if n.startswith("build-")):
            BUILD_ID.write_text(build_id)  # the site the browser stages may test (tests/conftest.py)
        if not outcome.passed:
            log = LOGS / f"{name}.log"
            print(f"--- the end of {log.relative_to(ROOT)} ---\n{tail(log, tail_lines)}\n---", flush=True)
    return list(outcomes.values())


# pytest's closing line ("== 3 failed, 1210 passed, 2 skipped in 301.2s ==") and the one that
# tools/portability.py prints for its cells ("nbval: 183 passed, 0 failed")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?)\b")
CLOSING = re.compile(r"^(=+ .* in [\d.]+s.* =+|nbval: \d+ passed, \d+ failed.*)$")


def counts(outcome: Outcome) -> dict[str, int]:
    """The tests (or notebook cells) a stage ran, from its log's closing lines."""
    found: dict[str, int] = {}
    log = LOGS / f"{outcome.stage.name}.log"
    if outcome.code is None or not log.is_file():
        return found
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if CLOSING.match(line.strip()):
            for number, word in COUNT.findall(line):
                key = "failed" if word.startswith("error") else word
                found[key] = found.get(key, 0) + int(number)
    return found


def table(outcomes: list[Outcome], wall: float, load: tuple[tuple[float, ...], tuple[float, ...]], busy: float) -> str:
    rows = [
        "| stage | result | tests | wall s | CPU s | from s | to s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for o in sorted(outcomes, key=lambda o: (o.code is None, o.start)):
        result = o.note or ("passed" if o.passed else f"FAILED (exit {o.code})")
        if o.code is None:
            rows.append(f"| {o.stage.name} | {result} | | | | | |")
            continue
        n = counts(o)
        tests = f"{n.get('passed', 0)}" + (f" (+{n['failed']} failed)" if n.get("failed") else "")
        rows.append(
            f"| {o.stage.name} | {result} | {tests} | {o.wall:.0f} | {o.cpu:.0f} | {o.start:.0f} | {o.end:.0f} |"
        )
    cpu = sum(o.cpu for o in outcomes)
    passed = sum(o.passed for o in outcomes)
    rows.append(f"| **all** | {passed} of {len(outcomes)} stages passed | | {wall:.0f} | {cpu:.0f} | | |")
    before, after = load
    cores = os.cpu_count() or 1
    rows += [
        "",
        f"{cores} cores; load average {' '.join(f'{x:.1f}' for x in before)} at the start, "
        f"{' '.join(f'{x:.1f}' for x in after)} at the end (1, 5, 15 min). The machine was busy "
        f"{busy:.0f} CPU s over the run ({busy / max(wall * cores, 1e-9):.0%} of its {cores} cores; "
        "the stages' own figure above, less anything else running).",
    ]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=("test", "check"))
    parser.add_argument("--only", default="", help="comma-separated stages (with the stages they need)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("BOOK_JOBS", os.cpu_count() or 2)))
    parser.add_argument("--tail", type=int, default=120, help="lines of a failing stage's log to print")
    parser.add_argument("--list", action="store_true", help="list the stages and exit")
    parser.add_argument("--prebuilt", action="store_true", help="test the site in _build/html: no build stages")
    parser.add_argument("--repeat", type=int, default=1, help="run the selected stages this many times")
    args = parser.parse_args()
    stages = test_stages() if args.suite == "test" else check_stages()
    if args.list:
        for s in stages:
            needs = f" (after {', '.join(s.needs)})" if s.needs else ""
            print(f"{s.name:16} {s.what}{needs}\n{'':16} $ {shlex.join(s.command)}")
        return 0
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {s.name for s in stages}
        if unknown:
            parser.error(f"unknown stages {sorted(unknown)}; known: {[s.name for s in stages]}")
        for s in stages:
            if s.name in wanted:
                wanted |= set(s.needs)
        stages = [s for s in stages if s.name in wanted]

    if args.prebuilt:
        stages = [s for s in stages if not s.name.startswith("build-")]
    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)
    rounds = []
    for number in range(1, args.repeat + 1):
        load_before, busy_before = os.getloadavg(), busy_cpu_seconds()
        start = time.perf_counter()
        outcomes = run(stages, max(1, args.jobs), args.tail, args.prebuilt)
        wall = time.perf_counter() - start
        text = table(outcomes, wall, (load_before, os.getloadavg()), busy_cpu_seconds() - busy_before)
        LOGS.mkdir(parents=True, exist_ok=True)
        (LOGS / f"{args.suite}-times.md").write_text(text + "\n", encoding="utf-8")
        heading = f" (round {number} of {args.repeat})" if args.repeat > 1 else ""
        print(f"\nmake {args.suite}{heading}: the stages ({LOGS.relative_to(ROOT)}/{args.suite}-times.md)\n{text}")
        rounds.append(all(o.passed for o in outcomes))
    if args.repeat > 1:
        print(f"\n{sum(rounds)} of {args.repeat} rounds passed: {' '.join('pass' if r else 'FAIL' for r in rounds)}")
    total: dict[str, int] = {}
    for outcome in outcomes:
        for key, number in counts(outcome).items():
            total[key] = total.get(key, 0) + number
    failed = [o.stage.name for o in outcomes if not o.passed] or (["a round"] if not all(rounds) else [])
    if failed:
        print(f"\nmake {args.suite} FAILED: {', '.join(failed)} (logs in {LOGS.relative_to(ROOT)}/)")
    # one closing line over every stage, in the form CI reads
    summary = f"{total.get('passed', 0)} passed, {total.get('failed', 0)} failed"
    print(f"{args.suite}: {summary}" + (f", {total['skipped']} skipped" if total.get("skipped") else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
