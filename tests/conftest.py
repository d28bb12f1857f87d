"""Fixtures for the tests of the built site."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.browser import CHROMIUM_FLAGS, serve

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"


@pytest.fixture(autouse=True, scope="session")
def one_thread_for_unit_tests():
    """Tiny tensors run fastest on one thread, and never wait for a busy second core.
    (Notebooks run in their own kernels, at their own settings.)"""
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def built_site() -> Path:
    """Build the whole book from scratch, with every warning an error.

    ``BOOK_SITE_PREBUILT=1`` tests the site already in ``_build/html`` instead (for
    authors iterating on the browser tests; CI always builds).
    """
    if os.environ.get("BOOK_SITE_PREBUILT") == "1" and not os.environ.get("CI") and (HTML / "index.html").is_file():
        return HTML
    jupyter_book = Path(sys.executable).parent / "jupyter-book"  # the environment's own copy
    english = [str(jupyter_book), "build", str(ROOT), "-W", "-n", "--keep-going", "--all"]
    chinese = [sys.executable, "-m", "tools.locale", "--build", "--all"]
    for name, command in (("English", english), ("Chinese", chinese)):
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if result.returncode != 0:
            log = result.stdout + result.stderr
            pytest.fail(f"the {name} edition's build failed (exit {result.returncode}):\n{log[-6000:]}")
    return HTML


@pytest.fixture(scope="session")
def pages(built_site: Path) -> list[Path]:
    """The book's pages in both editions; the slide decks have tests of their own (tests/test_slides.py)."""
    skip = {"_static", "_sources", "slides"}
    return sorted(p for p in built_site.rglob("*.html") if not skip & set(p.relative_to(built_site).parts))


@pytest.fixture(scope="session")
def site_url(built_site: Path):
    with serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium from the system's packages; CI must have it, elsewhere it may be skipped."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        reason = "no chromium on PATH (Debian: apt-get install chromium); `make test` installs it where it can"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield instance
        instance.close()
