"""Fixtures of the tests of the built site, and the markers of every test.

Markers (pyproject.toml lists them; `pytest -m "not site"` and the like select tiers):
``notebook`` (a strict-nbval cell, root conftest.py), ``lint``, ``site`` (needs the built
site), ``browser`` (needs Chromium), ``kernel`` (executes a notebook outside nbval), and the
viewport of a browser check (``desktop``, ``phone``, ``slide``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import CHROMIUM_FLAGS, PageReports, selected_checks, serve
from tools.browser import chromium

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
# A test that starts a kernel outside nbval marks itself (`@pytest.mark.kernel`, as
# tests/test_learner.py does): a list of node IDs here went stale when the test it named was removed.


def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & {"built_site", "pages", "site_url", "page_reports"}:
            item.add_marker(pytest.mark.site)
        if fixtures & {"browser", "page_reports"}:
            item.add_marker(pytest.mark.browser)


def pytest_collection_finish(session):
    session.config.stash[SELECTED] = selected_checks(session.items)


SELECTED = pytest.StashKey[dict]()


@pytest.fixture(autouse=True, scope="session")
def one_thread_for_unit_tests():
    """Tiny tensors run fastest on one thread, and never wait for a busy second core.
    (Notebooks run in their own kernels, at their own settings.) torch is imported here, not at
    the top: a run of the lint or browser tests never needs it."""
    import torch

    torch.set_num_threads(1)


def build_commands() -> dict[str, list[str]]:
    """The two editions' builds, from scratch, every warning an error. They run at the same time:
    the English one writes _build/html, the Chinese one _build/zh, then copies its pages into
    _build/html/zh (tools/locale.py)."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"  # the environment's own copy
    return {
        "English": [str(jupyter_book), "build", str(ROOT), "-W", "-n", "--keep-going", "--all"],
        "Chinese": [sys.executable, "-m", "tools.locale", "--build", "--all"],
    }


def prebuilt_is_allowed() -> bool:
    """``BOOK_SITE_PREBUILT=1`` tests the site already in ``_build/html``: `make test`'s site stage
    (which runs after this run's builds, Makefile) and authors iterating on the browser tests."""
    return os.environ.get("BOOK_SITE_PREBUILT") == "1" and (HTML / "index.html").is_file()


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The whole book, both editions, built from scratch with every warning an error."""
    if prebuilt_is_allowed():
        return HTML
    for folder in (HTML, ROOT / "_build" / "zh"):  # from scratch: no page of an earlier build stays
        shutil.rmtree(folder, ignore_errors=True)
    running = {
        name: subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name, command in build_commands().items()
    }
    failures = []
    for name, process in running.items():
        log, _ = process.communicate()
        if process.returncode != 0:
            failures.append(f"the {name} edition's build failed (exit {process.returncode}):\n{log[-6000:]}")
    if failures:
        pytest.fail("\n".join(failures))
    return HTML


@pytest.fixture(scope="session")
def pages(built_site: Path) -> list[Path]:
    """The book's pages in both editions, as built; the slide decks have tests of their own."""
    skip = {"_static", "_sources", "slides"}
    return sorted(p for p in built_site.rglob("*.html") if not skip & set(p.relative_to(built_site).parts))


@pytest.fixture(scope="session")
def site_url(built_site: Path):
    with serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium from the system's packages; CI must have it, elsewhere it may be skipped."""
    executable = chromium()
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


@pytest.fixture(scope="session")
def page_reports(request, browser, site_url):
    """Each view that the session's tests need, loaded once; its checks' findings (tests/browser.py)."""
    reports = PageReports(browser, site_url, request.config.stash.get(SELECTED, {}))
    yield reports
    reports.close()
