"""Helpers of the browser tests: a loopback server, Chromium's flags, and pages that
record every problem a reader would meet (failed loads, HTTP errors, console errors)."""

from __future__ import annotations

import re
from pathlib import Path

from tools.browser import CHROMIUM_FLAGS, serve  # noqa: F401  (re-exported for the tests)

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "screenshots"
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}
AXE = ROOT / "tests" / "_vendor" / "axe-core" / "axe.min.js"


def tick_label_px() -> float:
    """The CSS-pixel height of a tick label in a figure shown at its natural size."""
    import helpers.style as style

    return style.TICK_FONT_PT * style.DPI / 72


def load(context, url: str):
    """Open ``url``; record failed requests, HTTP errors and console errors; wait for MathJax."""
    page = context.new_page()
    page.problems = []
    page.on("requestfailed", lambda request: page.problems.append(f"failed request {request.url}"))
    page.on("response", lambda r: page.problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: page.problems.append(f"console error {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: page.problems.append(f"page error {error}"))
    page.goto(url, wait_until="load")
    page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=15000)
    page.evaluate("MathJax.startup.promise")
    return page


def axe_violations(page) -> list[str]:
    """Serious and critical WCAG violations that axe-core finds on the page."""
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; '))"
    )
    return list(found)


def new_context(browser, viewport: str, mode: str = "light"):
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
    # Anything that is not the local server is a network load: fail it loudly.
    context.route(re.compile(r"^(?!http://127\.0\.0\.1:).*"), lambda route: route.abort())
    return context
