"""The seed table: every band and every assert of the training chapters, at eight seed blocks and a second point.

    make seeds                                           # every training chapter (long: see the table's times)
    make seeds NB=notebooks/06_the_experiment.ipynb      # refresh one chapter's rows
    python -m tools.seeds --notebooks notebooks/06_*.ipynb --offsets 0,5000 --jobs 1

A statistic of a training run moves with the random draws, so a band or a margin set on one seed block may fail
on the next. Each notebook runs, as a copy in its own kernel (the notebook is never written), once per offset of
OFFSETS (``BOOK_SEED_OFFSET``, helpers/device.py) at this machine's defaults, and once at offset 0 at the point
``ci-second`` of tools/portability.py; the runs share the cores (``--jobs``). In the kernel an IPython AST
transformer rewrites every ``assert`` to record its truth and its margin (how far the compared sides are from
failing: ``b - a`` for ``a < b``, the least over chains, ``and``, ``&``, ``.all()`` and ``all(...)``, the most
over ``or``, ``|``, ``.any()`` and ``any(...)``; ``==``, ``in`` or a call give pass or fail only), and to go on
when it fails; ``helpers.glue`` records each value and its band and never raises. A cell that raises is
recorded and the run goes on with the next cell; a kernel that dies ends that run only.

TABLE (book/seed_table.yml) keeps per notebook the hash of its code (``code_hash``: each code cell's syntax tree,
so comments and layout do not count), each run's time, every glued number that has a band or sits in an
``nbval-ignore-output`` cell, and every assert (cell id, line, source) with its worst margin per run.
_build/seed_table.md renders it. tests/test_seeds.py fails on ``problems()``: a band that does not hold the
table's range, an assert that failed at some run, a cell that raised, or rows older than the notebook's code.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import multiprocessing
import operator
import os
import platform
import re
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict, deque
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from tools.notebook_format import QUIET_KERNEL, ROOT, chapter_notebooks, glue_roles, glued_outputs, read, tags
from tools.portability import POINTS

OFFSETS = (0, 500, 1000, 2500, 5000, 10000, 20000, 50000)  # chosen before any run (coordination decision 5)
SECOND = next(p for p in POINTS if p.name == "ci-second")
TRAINING = ("04_what_the_scale_does", "05_why_sqrt_dk", "06_the_experiment", "07_pitfalls",
            "07b_advanced_questions", "08_after_sqrt_dk")  # fmt: skip
TABLE = ROOT / "book" / "seed_table.yml"
MARKDOWN = ROOT / "_build" / "seed_table.md"
NAME = "__seed_recorder__"  # the recorder's name in the kernel's namespace
ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
OTHER = {"==": operator.eq, "!=": operator.ne, "is": operator.is_, "is not": operator.is_not,
         "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}  # fmt: skip
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
          ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}  # fmt: skip


def number(x: Any) -> float | None:
    try:
        return float(f"{float(x):.6g}")
    except (TypeError, ValueError, RuntimeError):  # RuntimeError: a tensor of several elements
        return None


class Node:
    """A part of an assert's test, evaluated once: its value, its margin (>= 0 where it holds; a tensor where the
    value is one) and the compared sides (left, right) that the margin came from."""

    def __init__(self, value: Any, margin: Any = None, sides: tuple[Any, Any] | None = None) -> None:
        self.value, self.margin, self.sides = value, margin, sides

    def worst(self, lowest: bool = True) -> Node:
        """The scalar margin of a reduction over elements (least for all, most for any), with its element's sides."""
        m = self.margin
        if m is None or getattr(m, "ndim", 0) == 0:
            return self
        import torch

        try:  # the margin is a by-product: where it cannot be had, the assert is still pass or fail
            flat = torch.as_tensor(m).reshape(-1)
            i = int(flat.argmin() if lowest else flat.argmax())  # raises on no elements
            sides = [torch.broadcast_to(torch.as_tensor(s), m.shape).reshape(-1)[i] for s in self.sides or ()]
        except Exception:
            return Node(self.value)
        return Node(self.value, flat[i], tuple(sides) if sides else None)  # type: ignore[arg-type]


class Recorder:
    """What the rewritten asserts and the wrapped glue call: each record goes to ``records`` and, if ``path``
    is given, as a JSON line to that file (kept when the kernel dies)."""

    def __init__(self, path: str | None = None) -> None:
        self.path, self.records, self.cell, self.source = path, [], "?", ""

    def write(self, **record: Any) -> None:
        record["cell"] = record.get("cell", self.cell)
        self.records.append(record)
        if self.path:
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(json.dumps(record) + "\n")

    # ---- called by rewritten asserts: each returns a Node
    def leaf(self, value: Any) -> Node:
        return Node(value)

    def cmp(self, left: Any, op: str, right: Any) -> Node:
        if op not in ORDER:
            return Node(OTHER[op](left, right))
        low, high = (left, right) if op in ("<", "<=") else (right, left)
        try:
            margin = high - low
        except Exception:  # sides that do not subtract: pass or fail only
            margin = None
        return Node(ORDER[op](left, right), margin, (left, right))

    def chain(self, ops: tuple[str, ...], *values: Any) -> Node:  # a < b < c: every side evaluated once
        return self.every((self.cmp(values[i], op, values[i + 1]) for i, op in enumerate(ops)), "all")

    def and_(self, *thunks: Any) -> Node:
        return self.every((thunk() for thunk in thunks), "all")

    def or_(self, *thunks: Any) -> Node:
        return self.every((thunk() for thunk in thunks), "any")

    def every(self, nodes: Iterable[Node], how: str) -> Node:
        """``and`` and ``all(...)`` (how="all"), ``or`` and ``any(...)``: they stop where Python stops, and the
        part that decided gives the margin; if none decided, the least (all) or the most (any) of the parts'."""
        lowest, seen, value = how == "all", [], how == "all"
        for node in nodes:
            value, worst = node.value, node.worst(lowest)
            if bool(value) != lowest:
                return Node(value, worst.margin, worst.sides)
            seen.append((number(worst.margin), worst))
        scored = [(m, n) for m, n in seen if m is not None]
        if not scored:
            return Node(value)
        pick = (min if lowest else max)(scored, key=lambda s: (s[0] == s[0], s[0]))[1]  # NaN is the worst
        return Node(value, pick.margin, pick.sides)

    def not_(self, node: Node) -> Node:
        return Node(not node.value, None if node.margin is None else -node.margin, node.sides)

    def elementwise(self, a: Node, b: Node, op: str) -> Node:  # `&` (least margin) or `|` (most)
        value = a.value & b.value if op == "&" else a.value | b.value
        if a.margin is None or b.margin is None:
            return Node(value)
        import torch

        try:
            ma, mb = torch.as_tensor(a.margin), torch.as_tensor(b.margin)
            take = ma <= mb if op == "&" else ma >= mb
            pairs = zip(a.sides, b.sides, strict=True) if a.sides and b.sides else ()
            sides = tuple(torch.where(take, torch.as_tensor(x), torch.as_tensor(y)) for x, y in pairs)
            return Node(value, torch.where(take, ma, mb), sides or None)  # type: ignore[arg-type]
        except Exception:
            return Node(value)

    def reduce(self, node: Node, how: str) -> Node:  # x.all() / x.any()
        worst = node.worst(how == "all")
        return Node(getattr(node.value, how)(), worst.margin, worst.sides)

    def check(self, line: int, source: str, cell: str, node: Node, message: Any = None) -> None:
        """The assert itself: record, and go on when it fails."""
        node = node.worst()
        passed = bool(node.value)
        sides = [number(s) for s in node.sides] if node.sides else [None, None]
        record = {"kind": "assert", "cell": cell, "line": line, "source": source, "passed": passed}
        record |= {"margin": number(node.margin), "lhs": sides[0], "rhs": sides[1]}
        if not passed and message is not None:
            try:
                record["message"] = str(message())[:300]
            except Exception as error:  # a message that cannot be built is no reason to stop
                record["message"] = f"(message raised {error!r})"
        self.write(**record)

    def glue(self, original: Any) -> Any:
        """``helpers.glue`` that records the value (rounded as published) and its band, and never raises on it."""

        def glue(name: str, value: Any, digits: int | None = None, *, band: tuple[float, float] | None = None) -> None:
            original(name, value, digits)
            shown = number(value) if digits is None else number(round(float(value), digits))
            if shown is None and isinstance(value, str):
                shown = value
            if shown is not None:
                inside = band is None or (isinstance(shown, float) and band[0] <= shown <= band[1])
                self.write(kind="glue", name=name, value=shown, digits=digits, band=band and list(band), passed=inside)

        return glue


class Rewriter(ast.NodeTransformer):
    """``assert test, msg`` -> ``__seed_recorder__.check(line, source, cell, <test as Nodes>, lambda: msg)``."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def visit(self, node: ast.AST) -> Any:
        try:
            return super().visit(node)
        except Exception:  # IPython drops a transformer that raises; a bug here must not cost the run
            return node

    def call(self, method: str, *args: ast.expr) -> ast.Call:
        return ast.Call(ast.Attribute(ast.Name(NAME, ast.Load()), method, ast.Load()), list(args), [])

    def thunk(self, body: ast.expr) -> ast.Lambda:
        return ast.Lambda(ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body)

    def node(self, e: ast.expr) -> ast.expr:
        """An expression that evaluates ``e`` once to a Node; only the logical skeleton is rewritten."""
        if isinstance(e, ast.Compare):
            ops = [SYMBOL[type(op)] for op in e.ops]
            if len(ops) == 1:
                return self.call("cmp", e.left, ast.Constant(ops[0]), e.comparators[0])
            return self.call("chain", ast.Constant(tuple(ops)), e.left, *e.comparators)
        if isinstance(e, ast.BoolOp):
            name = "and_" if isinstance(e.op, ast.And) else "or_"
            return self.call(name, *(self.thunk(self.node(v)) for v in e.values))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return self.call("not_", self.node(e.operand))
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr)):
            op = "&" if isinstance(e.op, ast.BitAnd) else "|"
            return self.call("elementwise", self.node(e.left), self.node(e.right), ast.Constant(op))
        if isinstance(e, ast.Call) and not e.keywords:
            func, args = e.func, e.args
            if isinstance(func, ast.Attribute) and func.attr in ("all", "any") and not args:  # x.all()
                return self.call("reduce", self.node(func.value), ast.Constant(func.attr))
            generator = (ast.GeneratorExp, ast.ListComp)
            if (
                isinstance(func, ast.Name)
                and func.id in ("all", "any")
                and len(args) == 1
                and isinstance(args[0], generator)
            ):
                nodes = ast.GeneratorExp(self.node(args[0].elt), args[0].generators)  # all(... for ...)
                return self.call("every", nodes, ast.Constant(func.id))
        return self.call("leaf", e)

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        source = ast.get_source_segment(self.recorder.source, node) or ast.unparse(node)
        walrus = any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.test))  # no lambdas around a :=
        test = self.call("leaf", node.test) if walrus else self.node(node.test)
        args = [ast.Constant(node.lineno), ast.Constant(source), ast.Constant(self.recorder.cell), test]
        if node.msg is not None:
            args.append(self.thunk(node.msg))
        return ast.fix_missing_locations(ast.copy_location(ast.Expr(self.call("check", *args)), node))


def install(shell: Any, record_path: str, notebook: str) -> None:
    """Set up recording in an IPython kernel that is about to run ``notebook``'s code cells in order."""
    import helpers
    import helpers.book

    recorder = Recorder(record_path)
    ids: dict[str, deque[str]] = defaultdict(deque)
    for cell in read(Path(notebook)).cells:
        if cell.cell_type == "code":
            ids[cell.source].append(cell.get("id", "?"))

    def pre_run_cell(info: Any) -> None:
        queue = ids.get(info.raw_cell)
        recorder.cell = queue.popleft() if queue else "?"
        recorder.source = info.transformed_cell or shell.transform_cell(info.raw_cell)

    shell.events.register("pre_run_cell", pre_run_cell)
    shell.ast_transformers.append(Rewriter(recorder))
    shell.user_ns[NAME] = recorder
    helpers.glue = helpers.book.glue = recorder.glue(helpers.book.glue)


def code_hash(path: Path) -> str:
    """sha256 of the notebook's code cells as syntax trees (comments and layout do not count), with their ids.
    Build-only cells (tagged ``remove-cell``) do not count: they glue copies and quotes for the site, and nothing
    the chapter computes or asserts reads them."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform, digest = TransformerManager().transform_cell, hashlib.sha256()
    for cell in read(path).cells:
        if cell.cell_type == "code" and "remove-cell" not in cell.metadata.get("tags", []):
            try:
                tree = ast.dump(ast.parse(transform(cell.source)))
            except SyntaxError:
                tree = cell.source
            digest.update(f"{cell.get('id')}\0{tree}\0".encode())
    return digest.hexdigest()


def run_one(notebook: Path, run: str) -> dict[str, Any]:
    """One run of ``notebook`` (``run``: an offset, or ``ci-second``): its records, errors, wall and CPU seconds."""
    import nbformat
    from nbclient import NotebookClient

    env = {**os.environ, "BOOK_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": "", "BOOK_SEED_OFFSET": run}
    if run == SECOND.name:
        env |= {**SECOND.env, "BOOK_SEED_OFFSET": "0"}
    nb = read(notebook)
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "records.jsonl"
        setup = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport tools.seeds\nsys.path.pop(0)\n"
        setup += f"tools.seeds.install(get_ipython(), {str(record)!r}, {str(notebook)!r})"
        nb.cells.insert(0, nbformat.v4.new_code_cell(setup, id="seed-recorder"))
        client = NotebookClient(
            nb,
            timeout=1800,
            kernel_name="python3",
            allow_errors=True,  # a cell that raises is recorded; the next cells run
            resources={"metadata": {"path": str(notebook.parent)}},
            extra_arguments=QUIET_KERNEL,
        )
        start, before, status = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN), "ok"
        try:
            client.execute(env=env)
        except Exception as error:  # a dead kernel or a timeout ends this run only
            status = f"stopped: {type(error).__name__}: {str(error)[-300:]}"
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel, reaped at its shutdown
        records = [json.loads(line) for line in record.read_text().splitlines()] if record.is_file() else []
    cells = [(c.get("id"), out) for c in nb.cells for out in c.get("outputs", []) if out.output_type == "error"]
    return {
        "notebook": notebook.name,
        "run": run,
        "status": status,
        "errors": [{"cell": cell, "error": f"{out.ename}: {out.evalue}"[:300]} for cell, out in cells],
        "records": records,
        "wall": round(time.perf_counter() - start, 1),
        "cpu": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
    }


def rows(notebook: Path, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The table's entry for one notebook from its runs (glued values and asserts in the order they ran)."""
    ignored = {c.get("id") for c in read(notebook).cells if "nbval-ignore-output" in tags(c)}
    glued: dict[str, dict[str, Any]] = {}
    asserts: dict[tuple[str, int], dict[str, Any]] = {}
    for result in results:
        run = result["run"]
        for rec in result["records"]:
            if rec["kind"] == "glue" and (rec["band"] or rec["cell"] in ignored):
                fields = {"name": rec["name"], "cell": rec["cell"], "digits": rec["digits"], "band": rec["band"]}
                row = glued.setdefault(rec["name"], {**fields, "values": {}, "passed": True})
                row["values"][run] = rec["value"]
                row["passed"] &= rec["passed"]
            elif rec["kind"] == "assert":
                fields = {"cell": rec["cell"], "line": rec["line"], "source": rec["source"]}
                row = asserts.setdefault((rec["cell"], rec["line"]), {**fields, "runs": {}, "passed": True})
                now = [rec["passed"], rec["margin"], rec["lhs"], rec["rhs"]]  # [passed, margin, lhs, rhs]
                if run not in row["runs"] or badness(now) < badness(row["runs"][run]):
                    row["runs"][run] = now  # an assert run several times (a loop) keeps its worst execution
                row["passed"] &= rec["passed"]
    for name, row in glued.items():  # the summary first, then each run's value
        numbers = [v for r, v in row["values"].items() if isinstance(v, float) and r != SECOND.name]
        spread = {"min": min(numbers), "median": number(statistics.median(numbers)), "max": max(numbers)}
        summary = {**(spread if numbers else {}), "ci_second": row["values"].get(SECOND.name), "passed": row["passed"]}
        glued[name] = {k: row[k] for k in ("name", "cell", "digits", "band")} | summary | {"values": row["values"]}
    for row in asserts.values():
        row["worst_margin"] = min(row["runs"].values(), key=badness)[1]
    return {
        "code_hash": code_hash(notebook),
        "torch": metadata.version("torch"),
        "cpu": cpu_model(),
        "runs": {r["run"]: {key: r[key] for key in ("wall", "cpu", "status", "errors")} for r in results},
        "glued": list(glued.values()),
        "asserts": list(asserts.values()),
    }


def badness(execution: list[Any]) -> tuple[bool, bool, float]:
    """Sort key of an assert's executions ([passed, margin, lhs, rhs]), worst first: failed, a NaN margin, the least
    margin; pass or fail only (no margin) after those."""
    passed, margin = execution[0], execution[1]
    return passed, margin is None or margin == margin, math.inf if margin is None or margin != margin else margin


def cpu_model() -> str:
    info = Path("/proc/cpuinfo")
    lines = info.read_text().splitlines() if info.is_file() else []
    return next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), platform.processor()
    )


def label(run: str) -> str:
    return run if run == SECOND.name else f"offset {run}"


def problems(table: dict[str, Any], notebook: Path) -> list[str]:
    """What the table says is wrong with ``notebook`` (nothing: []), each naming the cell and the run."""
    nb, refresh = notebook.name, f"run `make seeds NB=notebooks/{notebook.name}`"
    entry = table.get("notebooks", {}).get(nb)
    if entry is None:
        return [f"{nb}: no rows in {TABLE.name}; {refresh}"]
    if entry["code_hash"] != code_hash(notebook):
        return [f"{nb}: its code changed since its rows in {TABLE.name} were written; {refresh}"]
    runs = entry["runs"]
    found = [f"{nb}: no run at {label(r)}; {refresh}" for r in [*map(str, OFFSETS), SECOND.name] if r not in runs]
    for run, info in runs.items():
        found += [f"{nb}: the run at {label(run)} {info['status']}"] if info["status"] != "ok" else []
        found += [f"{nb}, cell {e['cell']}: raised at {label(run)}: {e['error']}" for e in info["errors"]]
    declared = {g.name: g.band for g in glued_outputs(read(notebook)) if g.band}  # the committed outputs' bands
    glued = {row["name"]: row for row in entry["glued"]}
    found += [f"{nb}: {name} has a band but no row; {refresh}" for name in declared if name not in glued]
    for name, row in glued.items():
        for low, high in {tuple(band) for band in (row["band"], declared.get(name)) if band}:
            values = {r: row["values"].get(r) for r in runs}
            out = [f"{label(r)}: {v}" for r, v in values.items() if not (isinstance(v, float) and low <= v <= high)]
            if out:
                found.append(f"{nb}, cell {row['cell']}: {name} leaves its band [{low}, {high}] at {', '.join(out)}")
    for row in entry["asserts"]:
        failed = [
            f"{label(r)} (margin {margin}, {lhs} vs {rhs})"
            for r, (passed, margin, lhs, rhs) in row["runs"].items()
            if not passed or (margin is not None and not margin >= 0)
        ]
        if failed:
            found.append(
                f"{nb}, cell {row['cell']}, line {row['line']}: `{row['source']}` fails at {'; '.join(failed)}"
            )
    return found


def render(table: dict[str, Any]) -> str:
    """The table as markdown: per notebook, its runs' times, its glued values and its asserts."""

    def md(x: Any) -> str:
        return "—" if x is None else str(x).replace("|", "\\|").replace("\n", " ")

    env = " ".join(f"{k}={v}" for k, v in SECOND.env.items())
    out = ["# Seed table", "", f"Offsets {table['offsets']}, and {SECOND.name} ({env}) at offset 0."]
    out += [f"torch {table['torch']}, {table['cpu']}.", ""]
    for nb, entry in table["notebooks"].items():
        runs = entry["runs"]
        cpu, wall = sum(r["cpu"] for r in runs.values()), sum(r["wall"] for r in runs.values())
        out += [
            f"## {nb}",
            "",
            f"Code hash {entry['code_hash'][:12]}; {len(runs)} runs: {cpu:.0f} s CPU, {wall:.0f} s wall.",
        ]
        out += [f"- {label(r)}: {info['status']}" for r, info in runs.items() if info["status"] != "ok"]
        out += [f"- {label(r)}: cell {e['cell']} raised {md(e['error'])}" for r, i in runs.items() for e in i["errors"]]
        out += ["", "| glued | cell | band | min | median | max | ci-second | ok |", "|" + "---|" * 8]
        for g in entry["glued"]:
            values = [g["band"], g.get("min"), g.get("median"), g.get("max"), g["ci_second"]]
            ok = "yes" if g["passed"] else "**NO**"
            out.append(f"| {g['name']} | {g['cell']} | " + " | ".join(map(md, values)) + f" | {ok} |")
        out += ["", "| cell:line | assert | worst margin | at | lhs vs rhs there | ok |", "|" + "---|" * 6]
        for a in entry["asserts"]:
            run, (_, margin, lhs, rhs) = min(a["runs"].items(), key=lambda item: badness(item[1]))
            ok = "yes" if a["passed"] else "**NO**"
            where = f"{a['cell']}:{a['line']} | `{md(a['source'])}`"
            out.append(f"| {where} | {md(margin)} | {label(run)} | {md(lhs)} vs {md(rhs)} | {ok} |")
        out.append("")
    return "\n".join(out)


def load(path: Path = TABLE) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def write(table: dict[str, Any], path: Path) -> None:
    table["notebooks"] = dict(sorted(table["notebooks"].items()))
    head = "# The seed table: written by `make seeds` (tools/seeds.py), read by tests/test_seeds.py. Do not edit.\n"
    head += "# An assert's runs: {run: [passed, worst margin, left side, right side there]}; a margin < 0 fails.\n"
    path.write_text(
        head + yaml.safe_dump(table, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None),
        encoding="utf-8",
    )
    MARKDOWN.parent.mkdir(parents=True, exist_ok=True)
    MARKDOWN.write_text(render(table), encoding="utf-8")


STATISTICS = {"min": min, "median": statistics.median, "max": max}


def over_seeds(notebook: str, name: str, table: Path | dict[str, Any] = TABLE) -> dict[str, float]:
    """A glued training number's spread over the seed table's blocks (its offsets; the second point, which repeats
    offset 0's seeds on another CPU path, is checked against the bands but not counted as a block), as it
    was glued (rounded to its digits): ``{"min", "median", "max"}``. NaN for each where the table has no such row
    (a chapter whose rows are not written yet: the sweep itself runs its notebooks before its table exists).
    ``table``: the table's path, or the table as :func:`load` reads it (read once for many names)."""
    if isinstance(table, Path):
        table = load(table) if table.is_file() else {}
    entry = table.get("notebooks", {})
    row = next((g for g in entry.get(notebook, {}).get("glued", []) if g["name"] == name), None)
    runs = (row or {}).get("values", {}).items()  # the eight blocks; the second point re-runs block 0's seeds
    values = [v for r, v in runs if isinstance(v, (int, float)) and r != SECOND.name]
    if not values:
        return dict.fromkeys(STATISTICS, math.nan)
    digits = row["digits"]
    rounded = lambda v: v if digits is None else (round(v, digits) if digits > 0 else int(round(v, digits)))  # noqa: E731
    whole = lambda v: int(v) if digits is None and float(v).is_integer() else v  # a count reads "5", not "5.0"  # noqa: E731
    return {stat: whole(rounded(f(values))) for stat, f in STATISTICS.items()}


QUOTE = re.compile(r"^(\w+)_seeds_(min|median|max)$")  # a quote of a glued number `name` over the seed table


def quoted_names(texts: Iterable[str]) -> set[tuple[str, str]]:
    """Every (name, statistic) that a glue role ``{glue:text}`[path::]<name>_seeds_<statistic>``` in ``texts``
    asks for."""
    found = set()
    for text in texts:
        for role in glue_roles(text):
            match = QUOTE.match(role.key)
            if match:
                found.add((match.group(1), match.group(2)))
    return found


def book_texts() -> list[str]:
    """The book's prose where a glue role may stand: the pages, the ledger, the lecture deck, every chapter's
    markdown and its figures' captions and alt texts."""
    texts = [page.read_text(encoding="utf-8") for page in sorted((ROOT / "book").glob("*.md"))]
    texts += [(ROOT / "book" / name).read_text(encoding="utf-8") for name in ("claims.yml", "lecture.yml")]
    for path in chapter_notebooks():
        for cell in read(path).cells:
            texts += [cell.source if cell.cell_type == "markdown" else "", str(cell.metadata.get("mystnb", ""))]
    return texts


def glue_quoted(notebook: str, table: Path = TABLE) -> None:
    """For a chapter's build-only cell: glue ``<name>_seeds_<statistic>`` (min, median or max) for every glued
    training number ``name`` of ``notebook`` in the seed table whose quote the book uses, so that the prose quotes
    what holds over every seed block rather than one block's value. Returns nothing, so that the cell shows nothing
    under nbval too (which runs cells without history, so a trailing ``;`` does not silence a value)."""
    import helpers

    rows = load(table) if table.is_file() else {}  # libyaml's loader: the table is 5,000 lines, read once
    names = {g["name"] for g in rows.get("notebooks", {}).get(notebook, {}).get("glued", [])}
    for name, stat in sorted(quoted_names(book_texts())):
        if name in names:
            helpers.glue(f"{name}_seeds_{stat}", over_seeds(notebook, name, rows)[stat])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebooks", nargs="*", type=Path, default=[], help="default: the training chapters")
    parser.add_argument("--offsets", default=",".join(map(str, OFFSETS)), help="comma-separated BOOK_SEED_OFFSETs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (default: the cores)")
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args()
    notebooks = [p.resolve() for p in args.notebooks] or [ROOT / "notebooks" / f"{s}.ipynb" for s in TRAINING]
    runs = [str(int(o)) for o in args.offsets.split(",") if o.strip()] + [SECOND.name]
    old = load(args.table) if args.table.is_file() else {}
    table = {"offsets": list(OFFSETS), "second_point": {"name": SECOND.name, "env": SECOND.env}}
    table |= {"torch": metadata.version("torch"), "cpu": cpu_model(), "notebooks": old.get("notebooks", {})}
    results: dict[Path, list[dict[str, Any]]] = defaultdict(list)
    from tools import seeds  # submitted by its module's name: a spawned worker cannot import __main__'s

    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(seeds.run_one, nb, run): nb for nb in notebooks for run in runs}
        for future in as_completed(futures):
            nb, result = futures[future], future.result()
            results[nb].append(result)
            failed = sum(not r["passed"] for r in result["records"])
            times = f"{result['wall']:7.1f} s wall {result['cpu']:7.1f} s CPU"
            print(f"{nb.name:32} {label(result['run']):>13} {times}  {result['status']}, {failed} failed, "
                  f"{len(result['errors'])} raised", flush=True)  # fmt: skip
            if len(results[nb]) == len(runs):  # a chapter's rows are written as soon as its runs are in
                table["notebooks"][nb.name] = rows(nb, sorted(results[nb], key=lambda r: runs.index(r["run"])))
                write(table, args.table)
    found = [p for nb in notebooks for p in problems(table, nb)]
    print("\n".join(found) or "every band and assert holds at every run", f"{args.table}\n{MARKDOWN}", sep="\n")
    return 0  # the sweep records; tests/test_seeds.py judges


if __name__ == "__main__":
    sys.exit(main())
