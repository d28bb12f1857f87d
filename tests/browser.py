"""The browser tests' harness: every page is loaded once per viewport, and every check of that
page, in both colour modes, reads the same loaded page.

A *page check* is a function of a loaded, settled page that returns its findings (a list of
strings, empty when all is well). Register it with ``@page_check``; the decorated function
becomes a pytest test with one case per page, viewport and mode it applies to, and that test
asserts that the check found nothing::

    @page_check(viewports=("desktop",), pages=chapters)
    def test_header_fits(page, view):
        box = page.locator(".bd-header-article").bounding_box()
        return [f"the header is {box['height']:.0f} px tall"] if box["height"] > 48 else []

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

import difflib
import functools
import re
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tools.browser import CHROMIUM_FLAGS, serve, settle  # noqa: F401  (re-exported for the tests)
from tools.notebook_format import chapter_notebooks, toc_files

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "screenshots"
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
# anchor), then those that read what the others left (the console errors of the whole visit),
# and last those that may navigate away.
READS, SCROLLS, INTERACTS, AFTER, LEAVES = 0, 1, 2, 3, 4


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
    the web style's tick labels (``url`` None, or a PNG without it)."""
    import helpers.style as style

    points = figure_text(url)[0] if url else None
    return (style.TICK_FONT_PT if points is None else points) * style.DPI / 72


# --- what is loaded --------------------------------------------------------------------------


def site_pages() -> list[str]:
    """Every page of both editions, relative to the site's root, known from the sources (so that
    tests are collected before the site is built): the toc's pages and those Sphinx adds."""
    names = [*toc_files(), *GENERATED_PAGES]
    return sorted(f"{edition}{name}.html" for edition in EDITIONS for name in names)


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

    @property
    def id(self) -> str:
        return f"{self.viewport}-{self.mode}-{self.path}"

    @property
    def stem(self) -> str:  # for file names: zh/notebooks/03_x.html -> zh_notebooks_03_x
        return self.path.removesuffix(".html").replace("/", "_")


def all_pages(path: str) -> bool:
    return True


@dataclass(frozen=True)
class PageCheck:
    name: str
    run: Callable[[Any, View], Iterable[str]]
    viewports: tuple[str, ...]
    modes: tuple[str, ...]
    pages: Callable[[str], bool]
    order: int
    kind: str  # "site" pages or "deck"s

    def views(self) -> list[View]:
        paths = decks() if self.kind == "deck" else site_pages()
        return [View(p, v, m) for p in paths if self.pages(p) for v in self.viewports for m in self.modes]


CHECKS: dict[str, PageCheck] = {}


def view_params(views: Iterable[View]) -> list[Any]:
    """``views`` as pytest parameters: ids such as ``desktop-dark-book/index.html``, and the
    viewport as a marker (``pytest -m phone``), so that `make test` runs the two in parallel."""
    return [pytest.param(v, id=v.id, marks=[getattr(pytest.mark, v.viewport)]) for v in views]


def page_check(
    *,
    viewports: tuple[str, ...] = SITE_VIEWPORTS,
    modes: tuple[str, ...] = ("light",),
    pages: Callable[[str], bool] = all_pages,
    order: int = READS,
    kind: str = "site",
) -> Callable[[Callable[[Any, View], Iterable[str]]], Callable[..., None]]:
    """Register a check of a loaded page (``pages`` selects them by path), run at each of
    ``viewports`` in each of ``modes``. The function gets the Playwright page and its ``View``
    and returns its findings. The decorated name becomes a test, parametrised by view."""

    def register(function: Callable[[Any, View], Iterable[str]]) -> Callable[..., None]:
        name = function.__name__.removeprefix("test_")
        if name in CHECKS and CHECKS[name].run.__module__ != function.__module__:
            raise ValueError(f"two page checks are named {name!r}")
        check = PageCheck(name, function, tuple(viewports), tuple(modes), pages, order, kind)
        CHECKS[name] = check

        @pytest.mark.browser
        @pytest.mark.parametrize("view", view_params(check.views()))
        def test(view: View, page_reports: PageReports) -> None:
            findings = page_reports.get(view).findings.get(name)
            assert findings is not None, f"{name} did not run on {view.id}"
            assert not findings, f"{view.path} ({view.viewport}, {view.mode}):\n" + "\n".join(findings)

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
    test_wide_figures_at_each_viewport."""
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


def axe_violations(page: Any, rules: Iterable[str] | None = None) -> list[str]:
    """Serious and critical violations that axe-core finds on the page (only ``rules``, if given)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if rules is not None:
        options["runOnly"] = {"type": "rule", "values": list(rules)}
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


# What the page is, apart from its colours and sizes: every element with its attributes (less
# those that say the mode, and Font Awesome's random ids) and whether it is rendered. Equal in
# light and dark mode, axe's rules that read only structure, names and visibility find the same
# in both. The one designed difference is left out: the colour-mode button shows the icon of
# the mode (a sun or a moon; decorative, aria-hidden). Sizes are not equal: in dark mode
# pydata-sphinx-theme pads every cell output (its white background), 8 px on each side, so the
# checks of layout run in both modes, and the tab stop the theme gives a region that scrolls
# (tabindex) is left out too (chapter 4 has a table that scrolls at 1280 px in dark mode only), with
# what book/_assets/site.js sets on such a table by the same test (its marks, its cue's visibility).
FINGERPRINT = r"""() => {
    const skip = new Set(['data-theme', 'data-mode', 'id', 'aria-labelledby', 'style']);
    const regions = 'pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, '
                    + '.pst-scrollable-table-container';
    const lines = [];
    for (const e of document.querySelectorAll('body *')) {
        if (e.closest('mjx-assistive-mml')) continue;
        const value = a => a.name === 'class' ? a.value.replace(/\bdropdown-menu-dark\b/, '').trim() : a.value;
        const laidOut = e.matches(regions) ? ['tabindex'] : [];  // the theme's tab stop says whether it scrolls
        // book/_assets/site.js marks a table box that scrolls, and shows its cue, by the same layout
        if (e.matches('.table-scroll')) laidOut.push('tabindex', 'data-overflow', 'role', 'aria-label');
        const attrs = [...e.attributes].filter(a => !skip.has(a.name) && !laidOut.includes(a.name))
            .map(a => a.name + '=' + value(a));
        const layoutShown = e.closest('.theme-switch-button > *') || e.matches('.table-scroll-cue');
        const shown = layoutShown ? '' : ' ' + (e.getClientRects().length > 0);
        lines.push(e.tagName + ' ' + attrs.join(' ') + shown);
    }
    return lines.join('\n');
}"""


@dataclass
class Report:
    """What the checks of one view found, and what every view records."""

    findings: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # failed requests, HTTP errors, console errors
    fingerprint: str = ""  # the FINGERPRINT lines: equal views have equal texts
    theme: str = ""  # the theme the page shows (<html data-theme>)

    def fingerprint_diff(self, other: Report, lines: int = 40) -> str:
        """The first ``lines`` lines of a unified diff of this view's fingerprint against ``other``'s."""
        mine, theirs = self.fingerprint.splitlines(), other.fingerprint.splitlines()
        diff = difflib.unified_diff(mine, theirs, "this view", "the other view", n=1, lineterm="")
        return "\n".join(line[:300] for _, line in zip(range(lines), diff, strict=False))

    @classmethod
    def failed(cls, checks: Iterable[PageCheck], reason: str) -> Report:
        """The report of a view that could not be checked: ``reason`` is every check's finding."""
        return cls(findings={c.name: [reason] for c in checks}, problems=[reason])


def run_checks(page: Any, view: View, checks: Iterable[PageCheck], report: Report | None = None) -> Report:
    """Run ``checks`` on the loaded ``page`` in their order, into ``report`` (a new one, which
    first records the page's theme and fingerprint) or the report of the view's earlier checks."""
    if report is None:
        report = Report()
        report.theme = page.evaluate("document.documentElement.dataset.theme || ''")
        report.fingerprint = page.evaluate(FINGERPRINT)
    checks = sorted(checks, key=lambda c: c.order)
    for check in checks:
        if check.order == LEAVES and not report.problems:
            report.problems = reader_problems(page)
        try:
            report.findings[check.name] = [str(f) for f in check.run(page, view)]
        except Exception:  # one check's error is that check's finding, not every check's
            report.findings[check.name] = [f"the check raised:\n{traceback.format_exc(limit=4)}"]
        try:  # wherever the check left the pointer (the header check scrolls with the wheel)
            park_pointer(page)
        except Exception as error:  # recorded as this check's finding: the page may be gone
            report.findings[check.name].append(f"the pointer could not be parked after the check: {error}")
    if not any(c.order == LEAVES for c in checks):
        report.problems = reader_problems(page)
    return report


class PageReports:
    """Loads each page once per viewport, on first demand, and runs the checks that the session
    selected for its views: light, then dark after a click on the colour-mode button."""

    def __init__(self, browser: Any, site_url: str, selected: dict[str, set[str]]):
        self.browser, self.site_url, self.selected = browser, site_url, selected
        self.contexts: dict[str, Any] = {}  # viewport -> context (a reader who has chosen light)
        self.pages: dict[str, Any] = {}  # one page per context, loaded again for each view
        self.reports: dict[View, Report] = {}

    def checks(self, view: View) -> list[PageCheck]:
        return [CHECKS[name] for name in sorted(self.selected.get(view.id, set())) if name in CHECKS]

    def get(self, view: View) -> Report:
        if view not in self.reports:
            self.visit(view.path, view.viewport)
        return self.reports[view]

    def visit(self, path: str, viewport: str) -> None:
        """One load of ``path`` at ``viewport``: the reports of its light and its dark view."""
        light, dark = View(path, viewport, "light"), View(path, viewport, "dark")
        light_checks, dark_checks = self.checks(light), self.checks(dark)
        if viewport not in self.contexts:
            self.contexts[viewport] = new_context(self.browser, viewport, "light")
        if viewport not in self.pages:
            self.pages[viewport] = new_page(self.contexts[viewport])
        kind = "deck" if is_deck(path) else "site"
        try:
            page = load(self.contexts[viewport], f"{self.site_url}/{path}", kind, self.pages[viewport])
        except Exception as error:  # every check of both views fails with the reason, once
            reason = f"the page did not load and settle: {error}"
            for view, checks in ((light, light_checks), (dark, dark_checks)):
                self.reports[view] = Report.failed(checks, reason)
            self.pages.pop(viewport).close()  # the next view starts from a fresh page
            return
        # the light checks that leave the page as it was, the dark view, then those that change it
        stays = [c for c in light_checks if c.order < INTERACTS]
        report = run_checks(page, light, stays)
        rest = [c for c in light_checks if c not in stays]
        if kind == "site":
            self.reports[dark] = self.dark_view(page, dark, dark_checks)
            try:  # as the reader found it, for the light checks that follow
                switch_mode(page, "light")
            except Exception as error:  # those checks would read a page in another mode
                reason = f"the colour-mode button did not switch the page back to light: {error}"
                report.findings.update({c.name: [reason] for c in rest})
                report.problems.append(reason)
                self.reports[light] = report
                self.pages.pop(viewport).close()  # the next view starts from a fresh page
                return
        self.reports[light] = run_checks(page, light, rest, report)
        if any(c.order == LEAVES for c in light_checks):
            # a check that followed a link leaves a page that is still loading another document:
            # the next view starts from a fresh page, so that nothing of that document's loading
            # (a request the next load cancels, an event delivered late) reaches its problems
            self.pages.pop(viewport).close()

    def dark_view(self, page: Any, view: View, checks: list[PageCheck]) -> Report:
        try:
            switch_mode(page, "dark")
        except Exception as error:
            reason = f"the colour-mode button did not switch the page to dark: {error}"
            return Report.failed(checks, reason)
        try:
            return run_checks(page, view, checks)
        except Exception as error:  # the view's theme or fingerprint could not be read
            reason = f"the dark view could not be read: {error}"
            return Report.failed(checks, reason)

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()


def selected_checks(items: Iterable[Any]) -> dict[str, set[str]]:
    """view id -> names of the page checks whose test for that view the session runs."""
    selected: dict[str, set[str]] = {}
    for item in items:
        check = getattr(getattr(item, "function", None), "page_check", None)
        view = getattr(item, "callspec", None) and item.callspec.params.get("view")
        if check is not None and isinstance(view, View):
            selected.setdefault(view.id, set()).add(check.name)
    return selected
