"""Adding a chapter: CONTRIBUTING.md's steps ("Adding a chapter"), in order, on a throwaway chapter.

In a copy of the repository (a temporary folder: the checkout is never touched), the test takes every step
a machine can take: 1. ``make chapter`` (tools/new_chapter.py), 3. ``make execute NB=...``, 4. ``make tidy``,
5. the static checks of one chapter. Step 2 (writing it) and step 6 (translating it) are an author's; the
template is the chapter step 2 starts from, so it must pass the checks as it stands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools.notebook_format import ROOT

pytestmark = pytest.mark.kernel  # it executes a notebook outside nbval
STEM = "09_a_throwaway_chapter"


def repository_copy(destination: Path) -> Path:
    """The checkout's files as they are now (tracked, and new ones git does not ignore), copied."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if not source.is_file():
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def test_a_new_chapter_takes_the_documented_steps_and_passes_the_static_checks(tmp_path):
    root = repository_copy(tmp_path / "book")
    env = {**os.environ, "BOOK_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}

    def step(*command: str) -> str:
        done = subprocess.run([sys.executable, *command], cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)}:\n{(done.stdout + done.stderr)[-6000:]}"
        return done.stdout

    notebook = f"notebooks/{STEM}.ipynb"
    step("-m", "tools.new_chapter", STEM)  # 1. make chapter NAME=...
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    chapters = next(part for part in toc["parts"] if part["caption"] == "Chapters")["chapters"]
    assert chapters[-1] == {"file": f"notebooks/{STEM}"}
    step(  # 3. make execute NB=...
        "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
        "--ExecutePreprocessor.record_timing=False", "--ExecutePreprocessor.timeout=600", notebook,
    )  # fmt: skip
    step("-m", "tools.tidy")  # 4. make tidy
    step("-m", "tools.tidy", "--check")  # 5. the static checks
    step(
        "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
        "tests/test_chapters.py", "tests/test_glue_checks.py", "tests/test_summary_trace.py",
        "-k", f"{STEM} or every_glued_number_is_checked or glue_names_are_unique",
    )  # fmt: skip
    assert not (ROOT / notebook).exists()  # the checkout is as it was
