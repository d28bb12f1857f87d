"""One stage of `make test` or `make check` (the Makefile's ``test-*`` targets, run side by side
by ``make -j``), and the table of what the stages cost.

    python -m tools.stage start unit lint        # a run begins: forget these stages' last records
    python -m tools.stage run unit -- pytest -m "not site"   # one stage: its log, its CPU, its record
    python -m tools.stage table test unit lint   # the table; exit 1 unless every stage passed

``run`` writes the command's output to ``_build/suite/<stage>.log`` (CI keeps the folder when a
run fails) and prints the log's end if the stage failed. It counts the CPU seconds of every
process the stage started, its descendants included: Playwright starts Chromium in a session of
its own, and a process whose parent ended without waiting for it would be charged to nobody.
So the stage is a *child subreaper* (Linux's ``PR_SET_CHILD_SUBREAPER``): every orphaned
descendant is re-parented here and waited for, and ``getrusage(RUSAGE_CHILDREN)`` then holds
them all. (Elsewhere the figure is what ``wait`` reports: Chromium's share may be missing.)
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from tools.notebook_format import ROOT

LOGS = Path(os.environ.get("BOOK_SUITE_LOGS", ROOT / "_build" / "suite"))
START = "start.json"  # when the run began, and the machine's busy CPU seconds then
PR_SET_CHILD_SUBREAPER = 36
# pytest's closing line ("== 3 failed, 1210 passed, 2 skipped in 301.2s ==", without the rules
# under -q) and the one that tools/portability.py prints for its cells ("nbval: 183 passed, 0 failed")
CLOSING = re.compile(r"^(=+ )?\d+ \w+.* in [\d.]+s\b.*$|^nbval: \d+ passed, \d+ failed.*$")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?)\b")


def busy_cpu_seconds() -> float:
    """The machine's busy CPU seconds since boot (user, nice, system, irq, softirq), 0 without /proc."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def start(stages: list[str]) -> None:
    LOGS.mkdir(parents=True, exist_ok=True)
    for name in stages:
        for suffix in (".log", ".json"):
            (LOGS / f"{name}{suffix}").unlink(missing_ok=True)
    record = {"time": time.time(), "busy": busy_cpu_seconds(), "load": os.getloadavg()}
    (LOGS / START).write_text(json.dumps(record))


def run(name: str, command: list[str], ok_codes: set[int], tail: int) -> int:
    """Run one stage; its exit code is the stage's (0 for a code in ``ok_codes``)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{name}.log"
    began = time.time()
    print(f"{name}: started", flush=True)
    with log.open("w", encoding="utf-8") as out:
        out.write(f"$ {subprocess.list2cmdline(command)}\n")
        out.flush()
        code = subprocess.call(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    reap_orphans()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = {"code": code, "passed": code in ok_codes, "start": began, "end": time.time()}
    record |= {"cpu": usage.ru_utime + usage.ru_stime, "counts": counts(log)}
    (LOGS / f"{name}.json").write_text(json.dumps(record))
    wall = record["end"] - began
    verdict = "passed" if record["passed"] else f"FAILED (exit {code})"
    print(f"{name}: {verdict} in {wall:.0f} s, {record['cpu']:.0f} CPU s", flush=True)
    if not record["passed"]:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-tail:]
        print(f"--- the end of {log} ---\n" + "\n".join(lines) + "\n---", flush=True)
    return 0 if record["passed"] else 1


def reap_orphans(bound: float = 60) -> None:
    """Wait for the descendants re-parented here once the stage's own process has ended; what is
    still running after ``bound`` seconds (a stuck kernel, say) is killed and charged too."""
    deadline = time.monotonic() + bound
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0 and time.monotonic() > deadline:
            for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
                for child in task.read_text().split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(child), signal.SIGKILL)
        elif pid == 0:
            time.sleep(0.1)


def counts(log: Path) -> dict[str, int]:
    """The tests (or notebook cells) a stage ran, from its log's closing lines."""
    found: dict[str, int] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if CLOSING.match(line.strip()):
            for number, word in COUNT.findall(line):
                key = "failed" if word.startswith("error") else word
                found[key] = found.get(key, 0) + int(number)
    return found


def table(suite: str, stages: list[str]) -> int:
    """Print (and write to _build/suite/<suite>-times.md) the stages' table; 1 unless all passed."""
    began = json.loads((LOGS / START).read_text()) if (LOGS / START).is_file() else None
    records = {n: json.loads((LOGS / f"{n}.json").read_text()) for n in stages if (LOGS / f"{n}.json").is_file()}
    origin = began["time"] if began else min((r["start"] for r in records.values()), default=time.time())
    rows = ["| stage | result | tests | wall s | CPU s | from s | to s |", "|---|---|---:|---:|---:|---:|---:|"]
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for name in sorted(stages, key=lambda n: (n not in records, records.get(n, {}).get("start", 0))):
        if name not in records:  # make -k did not start it: something it needs failed
            rows.append(f"| {name} | not run | | | | | |")
            continue
        r = records[name]
        n = r["counts"]
        for key in total:
            total[key] += n.get(key, 0)
        result = "passed" if r["passed"] else f"FAILED (exit {r['code']})"
        tests = f"{n.get('passed', 0)}" + (f" (+{n['failed']} failed)" if n.get("failed") else "")
        times = [r["end"] - r["start"], r["cpu"], r["start"] - origin, r["end"] - origin]
        rows.append(f"| {name} | {result} | {tests} | " + " | ".join(f"{t:.0f}" for t in times) + " |")
    passed = sum(r["passed"] for r in records.values())
    wall = max((r["end"] for r in records.values()), default=origin) - origin
    cpu = sum(r["cpu"] for r in records.values())
    rows.append(f"| **all** | {passed} of {len(stages)} stages passed | | {wall:.0f} | {cpu:.0f} | | |")
    if began:
        cores, busy = os.cpu_count() or 1, busy_cpu_seconds() - began["busy"]
        rows.append(
            f"\n{cores} cores; load average {' '.join(f'{x:.1f}' for x in began['load'])} at the start, "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end (1, 5, 15 min). The machine was busy "
            f"{busy:.0f} CPU s over the run ({busy / max(wall * cores, 1e-9):.0%} of its {cores} cores; "
            "the stages' own figure above, less anything else running)."
        )
    text = "\n".join(rows)
    (LOGS / f"{suite}-times.md").write_text(text + "\n", encoding="utf-8")
    print(f"\nmake {suite}: the stages ({LOGS / f'{suite}-times.md'})\n{text}")
    failed = [n for n in stages if not records.get(n, {}).get("passed")]
    if failed:
        print(f"\nmake {suite} FAILED: {', '.join(failed)} (logs in {LOGS}/)")
    skipped = f", {total['skipped']} skipped" if total["skipped"] else ""
    print(f"{suite}: {total['passed']} passed, {total['failed']} failed{skipped}")  # one line over every stage
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="action", required=True)
    commands.add_parser("start").add_argument("stages", nargs="*")
    one = commands.add_parser("run")
    one.add_argument("name")
    one.add_argument("--ok", default="0", help="exit codes that pass, comma-separated (pytest's 5: none collected)")
    one.add_argument("--tail", type=int, default=120, help="lines of a failing stage's log to print")
    one.add_argument("command", nargs="+", help="the command, after `--` (options before it are the stage's own)")
    summary = commands.add_parser("table")
    summary.add_argument("suite")
    summary.add_argument("stages", nargs="+")
    args = parser.parse_args()
    if args.action == "start":
        start(args.stages)
        return 0
    if args.action == "table":
        return table(args.suite, args.stages)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    return run(args.name, command, {int(c) for c in args.ok.split(",")}, args.tail)


if __name__ == "__main__":
    sys.exit(main())
