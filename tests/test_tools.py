"""The suite's own tools: no tool imports torch to read a constant, the nbval stamps change
exactly when a run's inputs change, a failing notebook cell is shown with its diff or its
traceback, make test's stages keep their logs and count Chromium's CPU, and no module of tools/
or helpers/ imports one that imports it back."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import portability, tidy
from tools.notebook_format import ROOT, chapter_notebooks

TOOLS = sorted(f"tools.{p.stem}" for p in (ROOT / "tools").glob("*.py") if p.stem != "__init__")
EXTENSIONS = sorted(p.stem for p in (ROOT / "book" / "_ext").glob("*.py"))


PROBE = """
import importlib, sys
sys.path.insert(0, {extensions!r})
for name in {modules!r}:
    importlib.import_module(name)
    if 'torch' in sys.modules:
        print(name)
        break
"""


def test_no_tool_and_no_sphinx_extension_imports_torch_to_start():
    """A tool that computes with torch imports it where it computes (tools/run_notebooks.py
    does); importing a tool or an extension of the build costs no torch (2.7 s in each process,
    and in both Sphinx builds). The modules are imported one after the other in one fresh
    interpreter; the first after which torch is loaded is named."""
    probe = PROBE.format(extensions=str(ROOT / "book" / "_ext"), modules=TOOLS + EXTENSIONS)
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert not result.stdout.strip(), f"`import {result.stdout.strip()}` imports torch"


def import_graph() -> dict[str, set[str]]:
    """Which modules of tools/ and helpers/ each one imports, at its top or inside a function."""
    files = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts): p
        for d in ("tools", "helpers")
        for p in (ROOT / d).glob("*.py")
    }
    modules = {name.removesuffix(".__init__"): path for name, path in files.items()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                named = {f"{node.module}.{a.name}" for a in node.names} & set(modules)
                graph[name] |= named or ({node.module} & set(modules))
        graph[name].discard(name)
    return graph


def test_no_import_cycles_among_tools_and_helpers():
    """A cycle (tools/learner.py and tools/locale.py had one) makes a module's import order matter and hides
    which of the two owns what; a function-level import counts too."""
    graph = import_graph()
    assert graph["tools.learner"] >= {"tools.locale", "tools.notebook_format"}, "the graph is read"

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and not seen.add(n) and reaches(n, goal, seen)) for n in graph[start])

    cycles = sorted(f"{a} -> {b} -> ... -> {a}" for a in graph for b in graph[a] if reaches(b, a, set()))
    assert not cycles, "\n".join(cycles)


def test_the_glue_record_format_is_spelled_the_same_in_tools_and_helpers():
    import helpers.book
    from tools.notebook_format import GLUE_PREFIX

    assert GLUE_PREFIX == helpers.book.GLUE_PREFIX


# --- stamps ----------------------------------------------------------------------------------


@pytest.fixture
def notebook_copy(tmp_path) -> Path:
    path = tmp_path / chapter_notebooks()[0].name
    path.write_bytes(chapter_notebooks()[0].read_bytes())
    return path


def edit(path: Path, kind: str, change) -> None:
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == kind and (kind != "code" or c.outputs))
    change(cell)
    nbformat.write(notebook, path)


POINT = next(p for p in portability.POINTS if p.name == "default")


def test_a_prose_edit_keeps_the_stamp(notebook_copy):
    before = portability.stamp_key(notebook_copy, POINT)
    edit(notebook_copy, "markdown", lambda c: setattr(c, "source", c.source + " One more sentence."))
    assert portability.stamp_key(notebook_copy, POINT) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda c: setattr(c, "source", c.source + "\n# a comment"),
        lambda c: c.metadata.setdefault("tags", []).append("nbval-ignore-output"),
        lambda c: c.outputs.append(nbformat.v4.new_output("stream", text="more\n")),
        lambda c: setattr(c, "execution_count", None),
    ],
    ids=["source", "tags", "outputs", "executed"],
)
def test_a_code_cell_edit_changes_the_stamp(notebook_copy, change):
    before = portability.stamp_key(notebook_copy, POINT)
    edit(notebook_copy, "code", change)
    assert portability.stamp_key(notebook_copy, POINT) != before


def test_helpers_the_environment_and_the_point_are_in_the_stamp(notebook_copy, monkeypatch, tmp_path):
    root = tmp_path / "checkout"  # a copy: the real helpers/ is never touched (other runs read it)
    for name in ("helpers", *portability.STAMP_FILES):
        source, target = ROOT / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    before = portability.stamp_key(notebook_copy, POINT, root)
    second = next(p for p in portability.POINTS if p.name == "ci-second")
    assert portability.stamp_key(notebook_copy, second, root) != before
    monkeypatch.setenv("BOOK_SEED_OFFSET", "7")
    assert portability.stamp_key(notebook_copy, POINT, root) != before
    monkeypatch.delenv("BOOK_SEED_OFFSET")
    monkeypatch.setenv("BOOK_SITE_PREBUILT", "1")  # make exports it to every stage: it changes nothing computed
    assert portability.stamp_key(notebook_copy, POINT, root) == before
    with (root / "helpers" / "training.py").open("a") as helper:  # a module chapter 1 never reaches
        helper.write("# one more line\n")
    assert portability.stamp_key(notebook_copy, POINT, root) == before
    with (root / "helpers" / "softmax.py").open("a") as helper:  # a one-line edit to a module it calls
        helper.write("# one more line\n")
    assert portability.stamp_key(notebook_copy, POINT, root) != before


def test_a_stamp_holds_the_helpers_a_notebook_reaches():
    reached = portability.helpers_reached(["import helpers\nhelpers.softmax_entropy(x)"])
    # softmax_entropy is defined in softmax.py; every run reads the package, glue, seeds and checks
    assert {"__init__.py", "softmax.py", "book.py", "device.py", "_validate.py"} <= reached
    assert "training.py" not in reached
    # through imports between modules: scales.py calls attention.py and softmax.py
    assert {"scales.py", "attention.py", "softmax.py"} <= portability.helpers_reached(
        ["from helpers import attention_statistics_at_init"]
    )
    assert "diagnostics.py" in portability.helpers_reached(["from helpers import diagnostics"])
    # a name it cannot trace counts every file (a stale stamp costs a rerun; a wrong one skips a run)
    everything = {p.name for p in (ROOT / "helpers").iterdir() if p.is_file()}
    assert portability.helpers_reached(["helpers.a_name_not_exported_yet()"]) == everything


# --- a failing cell is readable ----------------------------------------------------------------


@pytest.mark.kernel
def test_a_failing_cell_shows_its_diff_and_its_traceback():
    """tools.portability runs pytest out of sight; what it prints for a failure must still say
    what differed (the outputs' diff) or what raised (the traceback)."""
    folder = ROOT / "_build" / "portability-probe"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("print(6 * 7)", execution_count=1),
        nbformat.v4.new_code_cell("assert 6 * 7 == 41, 'the probe fails here'", execution_count=2),
    ]
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", text="41\n")]
    nbformat.write(notebook, path)
    try:
        results, _ = portability.run_pytest(POINT, [path])
    finally:
        path.unlink()
    result = results["probe.ipynb"]
    assert result.differ == [0] and result.raised == [1], result
    report = portability.failure_report(POINT, results)
    assert "cell 0" in report and "42" in report and "41" in report, report
    assert "cell 1" in report and "the probe fails here" in report and "AssertionError" in report, report


# --- the stages of make test ----------------------------------------------------------------------

BURN = "import os, time; os.setsid(); t = time.process_time(); exec('while time.process_time() - t < 1.5: pass')"
# a stage whose process ends at once, leaving a detached grandchild (as Playwright leaves Chromium)
# that burns 1.5 CPU s, and prints pytest's closing line
ORPHANING = (
    f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {BURN!r}]); "
    "print('== 1 failed, 2 passed in 0.1s ==')"
)


def test_a_stage_keeps_its_log_and_is_charged_for_its_detached_descendants(tmp_path):
    """The README's promises: each stage's output stays in its log (CI keeps the folder when a run
    fails), a stage's CPU seconds include Chromium's (which Playwright detaches), and the run's
    table says which stage failed and exits 1."""
    env = {**os.environ, "BOOK_SUITE_LOGS": str(tmp_path)}
    stage = [sys.executable, "-m", "tools.stage"]
    subprocess.run([*stage, "start", "probe", "never"], cwd=ROOT, env=env, check=True)
    ran = subprocess.run([*stage, "run", "probe", "--", sys.executable, "-c", ORPHANING], cwd=ROOT, env=env)
    assert ran.returncode == 0
    assert "== 1 failed, 2 passed" in (tmp_path / "probe.log").read_text()
    record = json.loads((tmp_path / "probe.json").read_text())
    assert record["cpu"] > 1.0, f"charged {record['cpu']:.2f} CPU s for a descendant that used 1.5"
    table = subprocess.run(
        [*stage, "table", "test", "probe", "never"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert table.returncode == 1, table.stdout
    assert "| never | not run |" in table.stdout and "test: 2 passed, 1 failed" in table.stdout, table.stdout


def test_make_test_runs_every_tier_and_ci_runs_make_test():
    """The unit stage runs every test but those of the tiers it leaves out, and each tier it leaves
    out is run by a stage of its own (strict nbval's through tools.portability), so no test is left
    out of make test; and CI runs exactly the README's command."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    tiers = re.search(r"^UNIT := not \((.*)\)$", makefile, re.M).group(1).split(" or ")
    stages = re.findall(r"^\t@\$\(STAGE\) .*$", makefile, re.M)
    assert "notebook" in tiers and any("tools.portability --points default" in s for s in stages)
    for tier in set(tiers) - {"notebook"}:
        assert any(re.search(rf"PYTEST\) -m .*\b{tier}\b", s) for s in stages), f"no stage runs the {tier} tier"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.search(r"^## Two commands\n.*?```bash\n(.*?)```", readme, re.M | re.S).group(1).splitlines()
    assert commands == ["make book", "make test"], "the README's two commands: one builds the book, one tests it"
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1] == commands[1]


def test_tidy_tells_a_ledger_conflict_from_stale_files(monkeypatch, capsys):
    # a conflict in book/claims.yml is an exception of its own type, not a line that happens to start a list
    conflict = ["C1.1 (a): same_as C9.9 (a) does not exist"]
    monkeypatch.setattr(tidy.claims, "check_same_evidence", lambda ledger: conflict)
    with pytest.raises(tidy.LedgerConflict, match="C9.9"):
        tidy.run(write=False)
    monkeypatch.setattr(sys, "argv", ["tidy", "--check"])
    assert tidy.main() == 1
    assert "graded two ways" in capsys.readouterr().out


def test_no_chapter_draws_text_smaller_than_the_site_assumes():
    """The site shows a chapter's own figure at its natural size, where its smallest text is the smallest
    size a drawing sets (tools.figures.WEB_MIN_FONT_PT, 8 pt: 12.2 px at 110 dpi); such a PNG records
    no size of its own, so the browser tests take that one (tests/browser.py, tick_label_px). Every
    font size a notebook's code or the book's style sets (a number after fontsize=, labelsize=,
    legend_size=, or a size chosen by ``if wide else``) is at least that; a named size (``"small"``)
    is refused, as its points are not written down."""
    from tools.figures import WEB_MIN_FONT_PT

    number = r"(\d+(?:\.\d+)?)"
    sized = re.compile(rf"\b(?:fontsize|labelsize|titlesize|legend_size)\s*[=:]\s*{number}")
    chosen = re.compile(rf"\b(?:fontsize|legend_size|labelsize|draw_\w+\(\w+,)\s*=?\s*{number} if wide else {number}")
    named = re.compile(r"\b(?:fontsize|labelsize|size)\s*=\s*[\"'](?:xx?-)?(?:small|medium|smaller)[\"']")
    rc = re.compile(rf"\"(?:font\.size|[a-z]+\.(?:title|label)?(?:font)?size|[xy]tick\.labelsize)\"\s*:\s*{number}")
    found: list[tuple[str, float]] = []
    named_sizes: list[str] = []
    sources = [
        (p.name, "\n".join(c.source for c in nbformat.read(p, as_version=4).cells if c.cell_type == "code"))
        for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
    ]
    sources.append(("helpers/style.py", (ROOT / "helpers" / "style.py").read_text(encoding="utf-8")))
    for name, text in sources:
        for match in sized.finditer(text):
            found.append((name, float(match.group(1))))
        for match in chosen.finditer(text):
            found += [(name, float(match.group(1))), (name, float(match.group(2)))]
        for match in rc.finditer(text):
            found.append((name, float(match.group(1))))
        named_sizes += [f"{name}: {m.group(0)}" for m in named.finditer(text)]
    assert len(found) > 20, found  # the patterns still find the sizes the chapters set
    assert min(size for _, size in found) >= WEB_MIN_FONT_PT, sorted(found, key=lambda f: f[1])[:5]
    assert not named_sizes, named_sizes
