"""The browser tests' harness: every page is loaded once per viewport, and every check of that
page, in both colour modes, reads the same loaded page.

A *page check* is a function of a loaded, settled page that returns its findings (a list of
strings, empty when all is well). Register it with ``@page_check``; the decorated function
becomes a pytest test with one case per page it applies to, which asserts that the check found
nothing at any of its viewports and modes::

    @page_check(scope=TEMPLATE, viewports=("desktop",))
    def test_header_fits(page, view):
        box = page.locator(".bd-header-article").bounding_box()
        return [f"the header is {box['height']:.0f} px tall"] if box["height"] > 48 else []

Its *scope* says which pages: ``PAGE`` (the default) every page of both editions, for what a
page's own content decides (math, figures, tables, axe on the content); ``TEMPLATE`` one page
per template and edition (:func:`template`), for the theme's chrome, the same on every page
built with that template (the header's buttons, the colour-mode switch, the phone's
navigation). ``pages`` narrows either to the paths it accepts.

The session fixture ``page_reports`` (tests/conftest.py) opens each (page, viewport) that a
selected test needs once, in light mode, waits until its scripts have settled
(``tools.browser.settle``), and runs every selected check of that view on it in ``order``. The
dark view is the same page after the reader's click on the theme's colour-mode button
(:func:`switch_mode`): its checks run there, before the light checks that interact with the
page, and the button is clicked back. The findings are kept; the tests only read them. So a
new check costs its own run time and no page load. CONTRIBUTING.md ("Adding a browser check")
says how to add one.
"""

from __future__ import annotations

import functools
import re
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tools.browser import CHROMIUM_FLAGS, serve, settle  # noqa: F401  (re-exported for the tests)
from tools.notebook_format import chapter_notebooks, toc_files

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "screenshots"  # what the lecture tests render for a look
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844), "slide": (1280, 720)}
SITE_VIEWPORTS = ("desktop", "phone")
MODES = ("light", "dark")
AXE = ROOT / "tests" / "_vendor" / "axe-core" / "axe.min.js"
EDITIONS = ("", "zh/")  # the English site at the root, the Chinese one under zh/
# Pages Sphinx writes besides the table of contents' (tests/test_site.py checks that the built
# site has exactly these and the toc's, so a page that appears is checked or named here).
GENERATED_PAGES = ("genindex", "search", "prf-prf")
REDIRECTS = ("index",)  # the root index.html only forwards to book/index.html

# The order in which the checks of one view run: first those that only read the page, then
# those that scroll it and scroll back, then those that change it (open a menu, follow an
# anchor), then those that resize the window (to widths besides the viewports': a reader who
# narrows or widens it), and last those that may navigate away. The visit's problems are read
# before the last two, and the page is not used again after them.
READS, SCROLLS, INTERACTS, RESIZES, LEAVES = 0, 1, 2, 3, 4


@functools.cache  # a figure's PNG is fetched and read once a session, not once per view or slide
def figure_text(url: str) -> tuple[float | None, float]:
    """A figure's PNG (``url`` on the test server): the size of its smallest drawn text in points,
    as a figure drawn for a slide records it (``Min-Font-Pt``, helpers.style.slide_png; None in a
    figure that is not), and the PNG's DPI (72 where it names none)."""
    import io
    import urllib.request

    from PIL import Image

    with urllib.request.urlopen(url) as response:  # noqa: S310  (the loopback test server)
        info = Image.open(io.BytesIO(response.read())).info
    points = float(info["Min-Font-Pt"]) if "Min-Font-Pt" in info else None
    return points, float(info.get("dpi", (72,))[0])


def tick_label_px(url: str | None = None) -> float:
    """The CSS-pixel height of a figure's smallest text, the figure shown at its natural size: what a
    figure drawn for a slide records in its PNG (:func:`figure_text`: the wide versions, 13 pt), else
    the smallest text a chapter's own drawing may set (``url`` None, or a PNG without it:
    tools.figures.WEB_MIN_FONT_PT, 8 pt, which tests/test_tools.py holds the notebooks to)."""
    import helpers.style as style
    from tools.figures import WEB_MIN_FONT_PT

    points = figure_text(url)[0] if url else None
    return (WEB_MIN_FONT_PT if points is None else points) * style.DPI / 72


# --- what is loaded --------------------------------------------------------------------------


def reading_order() -> list[str]:
    """Every page of both editions, relative to the site's root, in reading order, known from the
    sources (so that tests are collected before the site is built): the toc's pages and those
    Sphinx adds."""
    return [f"{edition}{name}.html" for edition in EDITIONS for name in [*toc_files(), *GENERATED_PAGES]]


def site_pages() -> list[str]:
    return sorted(reading_order())


ROOT_PAGE = functools.cache(lambda: toc_files()[0])  # the landing page, the toc's root


def template(path: str) -> str:
    """The template ``path`` is built with, as far as its chrome goes: the landing page; a chapter
    (a notebook: launch buttons, the page's contents); a page written in Markdown; Sphinx's search
    page; its index pages (the general index, the proofs'). A Chinese page's template is another
    (other words in the chrome, other fonts), so the edition is part of the name.
    test_pages_of_one_template_share_their_chrome holds every built page to its template's chrome."""
    edition = "zh/" if path.startswith("zh/") else ""
    name = path.removeprefix(edition).removesuffix(".html")
    if name == ROOT_PAGE():
        kind = "landing"
    elif name.startswith("notebooks/"):
        kind = "chapter"
    elif name in GENERATED_PAGES:
        kind = "search" if name == "search" else "index"
    else:
        kind = "page"
    return edition + kind


@functools.cache
def representatives() -> dict[str, str]:
    """template -> the page that stands for it: its first page in reading order."""
    chosen: dict[str, str] = {}
    for path in reading_order():
        chosen.setdefault(template(path), path)
    return chosen


def redirect_pages() -> list[str]:
    return sorted(f"{edition}{name}.html" for edition in EDITIONS for name in REDIRECTS)


def decks() -> list[str]:
    """The English decks: one per chapter and the lecture (book/_ext/book_slides.py)."""
    return [f"slides/{p.stem}.html" for p in chapter_notebooks()] + ["slides/lecture.html"]


def is_deck(path: str) -> bool:
    return path.startswith("slides/") or "/slides/" in path


@dataclass(frozen=True)
class View:
    """One load of one page: the page (relative to the site's root), the viewport, the colour mode."""

    path: str
    viewport: str
    mode: str = "light"


def all_pages(path: str) -> bool:
    return True


PAGE, TEMPLATE = "page", "template"  # a check's scope: every page, or one page per template


@dataclass(frozen=True)
class PageCheck:
    name: str
    run: Callable[[Any, View], Iterable[str]]
    viewports: tuple[str, ...]
    modes: tuple[str, ...]
    pages: Callable[[str], bool]
    order: int
    kind: str  # "site" pages or "deck"s
    scope: str  # PAGE or TEMPLATE

    def paths(self) -> list[str]:
        if self.kind == "deck":
            paths = decks()
        else:
            paths = sorted(representatives().values()) if self.scope == TEMPLATE else site_pages()
        return [p for p in paths if self.pages(p)]

    def views(self, path: str) -> list[View]:
        return [View(path, v, m) for v in self.viewports for m in self.modes]


CHECKS: dict[str, PageCheck] = {}


def page_check(
    *,
    scope: str = PAGE,
    viewports: tuple[str, ...] = SITE_VIEWPORTS,
    modes: tuple[str, ...] = ("light",),
    pages: Callable[[str], bool] = all_pages,
    order: int = READS,
    kind: str = "site",
) -> Callable[[Callable[[Any, View], Iterable[str]]], Callable[..., None]]:
    """Register a check of a loaded page, run on every page (``scope=PAGE``) or on one page per
    template (``scope=TEMPLATE``) that ``pages`` accepts, at each of ``viewports`` in each of
    ``modes``. The function gets the Playwright page and its ``View`` and returns its findings.
    The decorated name becomes a test with one case per page (``test_x[zh/book/index.html]``)."""
    if scope not in (PAGE, TEMPLATE):
        raise ValueError(f"a check's scope is PAGE or TEMPLATE, not {scope!r}")

    def register(function: Callable[[Any, View], Iterable[str]]) -> Callable[..., None]:
        name = function.__name__.removeprefix("test_")
        if name in CHECKS and CHECKS[name].run.__module__ != function.__module__:
            raise ValueError(f"two page checks are named {name!r}")
        check = PageCheck(name, function, tuple(viewports), tuple(modes), pages, order, kind, scope)
        CHECKS[name] = check

        @pytest.mark.browser
        @pytest.mark.parametrize("path", check.paths())
        def test(path: str, page_reports: PageReports) -> None:
            found = [f"{v.viewport}, {v.mode}: {f}" for v in check.views(path) for f in page_reports.found(v, name)]
            assert not found, f"{path}:\n" + "\n".join(found)

        test.__name__ = function.__name__
        test.__qualname__ = function.__qualname__
        test.__doc__ = function.__doc__
        test.__module__ = function.__module__
        test.page_check = check  # type: ignore[attr-defined]
        return test

    return register


# --- one load ---------------------------------------------------------------------------------


def new_context(browser: Any, viewport: str, mode: str = "light") -> Any:
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
    # Anything that is not the local server is a network load: fail it loudly.
    context.route(re.compile(r"^(?!http://127\.0\.0\.1:).*"), lambda route: route.abort())
    return context


def new_page(context: Any) -> Any:
    """A page that records every problem a reader would meet (failed requests, HTTP errors,
    console errors, uncaught exceptions) in ``page.problems``, emptied by each :func:`load`."""
    page = context.new_page()
    page.problems = []
    page.inflight = set()  # requests that started and have not finished or failed yet
    page.on("request", lambda request: page.inflight.add(request))
    page.on("requestfinished", lambda request: page.inflight.discard(request))
    page.on("requestfailed", lambda request: page.inflight.discard(request))
    page.on("requestfailed", lambda r: page.problems.append(f"{FAILED_REQUEST}{r.url} ({r.failure})"))
    page.on("response", lambda r: page.problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: page.problems.append(f"console error {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: page.problems.append(f"page error {error}"))
    return page


FAILED_REQUEST = "failed request "
# The fallback <img src> of each <picture> whose shown image is another (a <source>'s): a
# wide figure on a desktop (book/_ext/wide_figures.py) shows its wide source, not the stacked src.
UNSHOWN_FALLBACKS = """() => [...document.querySelectorAll('picture img')]
    .filter(i => i.complete && i.naturalWidth > 0 && i.currentSrc && i.currentSrc !== i.src).map(i => i.src)"""


def reader_problems(page: Any) -> list[str]:
    """``page.problems`` less one kind that no reader meets: the browser's own cancellation
    (net::ERR_ABORTED) of a <picture>'s fallback image while it shows another source, loaded.
    Chromium sometimes starts fetching a wide figure's stacked ``src`` on a desktop and cancels it
    when the <source> is chosen: in CI's site-desktop stage (2 cores, 96 % busy) chapter 6's two
    fallbacks, once; never in 12 loads here, idle or beside three busy loops. The shown image is
    checked where it matters: test_images_load_and_figures_stay_legible and
    test_wide_figures_side_by_side_on_a_desktop_stacked_on_a_phone."""
    if not any(p.startswith(FAILED_REQUEST) and p.endswith("(net::ERR_ABORTED)") for p in page.problems):
        return list(page.problems)
    unshown = set(page.evaluate(UNSHOWN_FALLBACKS))
    cancelled = {f"{FAILED_REQUEST}{url} (net::ERR_ABORTED)" for url in unshown}
    return [p for p in page.problems if p not in cancelled]


def park_pointer(page: Any) -> None:
    """Move the pointer off the page. A pointer left over a header control (the sidebar toggle,
    full screen, the colour mode) makes Bootstrap show a tooltip (a ``<div role=tooltip>``, and
    ``aria-describedby`` on the control) at a moment no check chooses, and a tooltip changes the
    page's DOM fingerprint. Every page is loaded, and every check of :func:`run_checks` ends,
    with the pointer here."""
    page.mouse.move(-1, -1)


def load(context: Any, url: str, kind: str = "site", page: Any = None) -> Any:
    """Open ``url`` (in ``page``, a :func:`new_page` of ``context``, or a new one), recording its
    problems in ``page.problems``, and wait until it has settled.

    Reusing one page for many loads keeps its renderer process instead of starting one per load:
    measured on chapters 3 and 6 and the ledger, about 2.8 CPU s per load in one reused page
    against 3.9 s in a new page each time (medians of three runs of nine loads, Chromium's
    processes included)."""
    if page is None:
        page = new_page(context)
    elif page.url != "about:blank":
        # What the last view left loading (the page a navigation check followed, an image a scroll
        # started) is cancelled here, not by this load, which would record it as its own failed
        # request: a blank page, then every request of the old one ended (a condition, polled).
        page.goto("about:blank")
        deadline = time.monotonic() + 30
        while page.inflight and time.monotonic() < deadline:
            page.wait_for_timeout(20)  # lets Playwright deliver the requests' last events
    page.problems = []
    park_pointer(page)
    page.goto(url, wait_until="load")
    if kind == "deck":  # slides/deck.js lays the slides out, then starts reveal.js
        page.wait_for_function("window.Reveal && Reveal.isReady && Reveal.isReady()", timeout=60000)
    settle(page)
    return page


def axe_violations(page: Any, rules: Iterable[str] | None = None, skip: Iterable[str] = ()) -> list[str]:
    """Serious and critical violations that axe-core finds on the page, by ``rules`` (every rule
    if None) less ``skip``."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    options: dict[str, Any] = {"resultTypes": ["violations"], "rules": {r: {"enabled": False} for r in skip}}
    if rules is not None:
        options["runOnly"] = {"type": "rule", "values": [r for r in rules if r not in set(skip)]}
    found = page.evaluate(
        "async (options) => (await axe.run(document, options)).violations"
        ".filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; '))",
        options,
    )
    return list(found)


# the mode the reader chose and the theme the page shows
SHOWN_MODE = "[document.documentElement.dataset.mode, document.documentElement.dataset.theme]"


def switch_mode(page: Any, mode: str) -> None:
    """Click the colour-mode button as a reader does until the page is in ``mode`` ("light" or
    "dark"), then wait until it has settled. pydata-sphinx-theme 0.16.1's button cycles through
    auto, dark and light (auto, light and dark where the system prefers dark), so it takes at
    most three clicks. The button may sit in a collapsed sidebar on a phone, so the click is the
    element's own ``click()``, which runs the theme's handler as a reader's tap does."""
    for _ in range(3):
        if page.evaluate("document.documentElement.dataset.mode") == mode:
            break
        page.evaluate("document.querySelector('.theme-switch-button').click()")
    shown = page.evaluate(SHOWN_MODE)
    if shown != [mode, mode]:
        raise RuntimeError(f"three clicks left the page in mode {shown[0]!r}, theme {shown[1]!r}")
    settle(page)


def resize(page: Any, width: int, height: int = 900) -> None:
    """Give the window of ``page`` another size, as a reader who narrows or widens it, and wait
    until the page has settled again (the theme's tab stops, the tables' marks: ``settle``); the
    images a <picture> switches to are waited for by the checks that read them."""
    page.set_viewport_size({"width": width, "height": height})
    settle(page)


Findings = dict[str, list[str]]  # check name -> what it found on one view


def run_checks(page: Any, view: View, checks: Iterable[PageCheck], findings: Findings) -> None:
    """Run ``checks`` on the loaded ``page`` in their order, into ``findings``."""
    for check in sorted(checks, key=lambda c: c.order):
        try:
            findings[check.name] = [str(f) for f in check.run(page, view)]
        except Exception:  # one check's error is that check's finding, not every check's
            findings[check.name] = [f"the check raised:\n{traceback.format_exc(limit=4)}"]
        try:  # wherever the check left the pointer (the header check scrolls with the wheel)
            park_pointer(page)
        except Exception as error:  # recorded as this check's finding: the page may be gone
            findings[check.name].append(f"the pointer could not be parked after the check: {error}")


class PageReports:
    """Loads each page once per viewport, on first demand, and runs the checks that the session
    selected for its views: light, then dark after a click on the colour-mode button. It keeps
    what every check found on every view, and what the reader met on each visit (``problems``:
    failed requests, HTTP errors, console errors, from the load to the last check that stays)."""

    def __init__(self, browser: Any, site_url: str, selected: dict[View, set[str]]):
        self.browser, self.site_url, self.selected = browser, site_url, selected
        self.contexts: dict[str, Any] = {}  # viewport -> context (a reader who has chosen light)
        self.pages: dict[str, Any] = {}  # one page per context, loaded again for each view
        self.findings: dict[View, Findings] = {}
        self.visits: dict[tuple[str, str], list[str]] = {}  # (path, viewport) -> the visit's problems

    def checks(self, view: View) -> list[PageCheck]:
        return [CHECKS[name] for name in sorted(self.selected.get(view, set())) if name in CHECKS]

    def found(self, view: View, name: str) -> list[str]:
        """What the check ``name`` found on ``view`` (loading the page first if need be)."""
        if (view.path, view.viewport) not in self.visits:
            self.visit(view.path, view.viewport)
        return self.findings.get(view, {}).get(name, [f"{name} did not run"])

    def problems(self, path: str, viewport: str) -> list[str]:
        if (path, viewport) not in self.visits:
            self.visit(path, viewport)
        return self.visits[(path, viewport)]

    def visit(self, path: str, viewport: str) -> None:
        """One load of ``path`` at ``viewport``: the findings of its light and its dark view."""
        light, dark = View(path, viewport, "light"), View(path, viewport, "dark")
        light_checks, dark_checks = self.checks(light), self.checks(dark)
        found = self.findings.setdefault(light, {}), self.findings.setdefault(dark, {})
        if viewport not in self.contexts:
            self.contexts[viewport] = new_context(self.browser, viewport, "light")
        if viewport not in self.pages:
            self.pages[viewport] = new_page(self.contexts[viewport])
        kind = "deck" if is_deck(path) else "site"
        stays = [c for c in light_checks if c.order < INTERACTS]  # before the dark view
        rest = [c for c in light_checks if c.order >= INTERACTS]
        step = "the page did not load and settle"
        try:
            page = load(self.contexts[viewport], f"{self.site_url}/{path}", kind, self.pages[viewport])
            run_checks(page, light, stays, found[0])
            if kind == "site" and dark_checks:
                step = "the colour-mode button did not switch the page to dark"
                switch_mode(page, "dark")
                run_checks(page, dark, dark_checks, found[1])
            if kind == "site" and dark_checks and rest:
                step = "the colour-mode button did not switch the page back to light"
                switch_mode(page, "light")  # as the reader found it, for the light checks that follow
            run_checks(page, light, [c for c in rest if c.order < RESIZES], found[0])
            self.visits[(path, viewport)] = reader_problems(page)
            run_checks(page, light, [c for c in rest if c.order >= RESIZES], found[0])
        except Exception as error:  # every check not yet run fails with the reason, once
            reason = f"{step}: {error}"
            for view, checks in ((light, light_checks), (dark, dark_checks)):
                for check in checks:
                    self.findings[view].setdefault(check.name, [reason])
            self.visits[(path, viewport)] = [*getattr(self.pages[viewport], "problems", []), reason]
            self.pages.pop(viewport).close()  # the next view starts from a fresh page
            return
        if any(c.order >= RESIZES for c in light_checks):
            # a check that followed a link leaves a page that is still loading another document,
            # one that resized the window a page of another width: the next view starts from a
            # fresh page, so that nothing of that (a request the next load cancels, an event
            # delivered late, the width) reaches it
            self.pages.pop(viewport).close()

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()


def selected_checks(items: Iterable[Any]) -> dict[View, set[str]]:
    """view -> names of the page checks whose test for that view's page the session runs."""
    selected: dict[View, set[str]] = {}
    for item in items:
        check = getattr(getattr(item, "function", None), "page_check", None)
        path = getattr(item, "callspec", None) and item.callspec.params.get("path")
        if check is not None and isinstance(path, str):
            for view in check.views(path):
                selected.setdefault(view, set()).add(check.name)
    return selected
