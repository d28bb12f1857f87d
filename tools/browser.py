"""Headless Chromium for the tools and the tests: its flags, a loopback server for the built
site, and the one rule for when a loaded page may be read (``settle``)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# A page of the site may be read once every script that changes it has finished. Each of
# these is a promise or a condition on the page, never a delay:
# - the load event (images, stylesheets, deferred scripts) and every web font in use;
# - MathJax's first typesetting (its startup promise);
# - book scripts that render after load: each pushes a promise onto window.bookPending
#   (CONTRIBUTING.md, "Browser checks"), awaited here;
# - book/_assets/a11y.js has run (it marks <html data-a11y="done">);
# - Font Awesome has swapped every icon <i> for its <svg>, in an animation frame of its own;
# - pydata-sphinx-theme makes each scrollable code block, output and table focusable on load
#   and again 300 ms after the content changes (MathJax's typesetting changes it) or the window
#   is resized (book/_assets/site.js announces a change of colour mode as a resize): every such
#   region that scrolls is focusable;
# - every shown CSS transition has ended (a change of colour mode fades the buttons' colours:
#   axe read them half-way and found too little contrast);
# - book/_assets/site.js has marked every shown table box that scrolls sideways.
SETTLE_PROMISES = """async (timeoutMs) => {
    let waiting = 'the load event';
    const settled = (async () => {
        const loaded = new Promise(r => window.addEventListener('load', r, {once: true}));
        if (document.readyState !== 'complete') await loaded;
        waiting = 'the web fonts';
        await document.fonts.ready;
        waiting = "MathJax's typesetting";
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
        waiting = "the book's scripts (window.bookPending)";
        await Promise.all(window.bookPending || []);
        waiting = 'the web fonts';
        await document.fonts.ready;
        // colours fade for 150-300 ms when the colour mode changes (the theme's buttons): every
        // shown CSS transition has ended (one that is cancelled has ended too). Not one in a closed
        // fold: its content is not rendered, so its transitions never advance (a copy button's, on
        // chapter 6). Not CSS animations: reveal.js bounces its controls for 100 s ('bounce-right')
        waiting = 'CSS transitions';
        await Promise.all(document.getAnimations()
            .filter(a => a instanceof CSSTransition && a.effect.target && a.effect.target.checkVisibility())
            .map(a => a.finished.catch(() => null)));
    })();
    // a bound, not a wait: a promise that never settles fails the view, naming what it waited for
    const bound = new Promise((_, reject) => {
        setTimeout(() => reject(new Error('still waiting for ' + waiting)), timeoutMs);
    });
    await Promise.race([settled, bound]);
}"""
# What has not settled yet, as reasons (empty once the page has settled).
UNSETTLED = """() => {
    const unmet = [];
    const html = document.documentElement;
    const a11y = document.querySelector('script[src*="a11y.js"]');
    if (a11y && html.dataset.a11y !== 'done') unmet.push('a11y.js has not run');
    if (html.classList.contains('fontawesome-i2svg-pending')
        || document.querySelector('i.fa-solid, i.fa-regular, i.fa-brands, i.fas, i.far, i.fab')) {
        unmet.push('Font Awesome has icons to swap');
    }
    const theme = document.querySelector('script[src*="pydata-sphinx-theme.js"]');
    const regions = ['pre', '.nboutput > .output_area', '.cell_output > .output', '.jp-RenderedHTMLCommon',
                     '.pst-scrollable-table-container'].join(', ');
    for (const e of theme ? document.querySelectorAll(regions) : []) {
        const scrolls = e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight;
        if (scrolls && e.tabIndex < 0 && e.offsetParent !== null) {
            unmet.push('a region that scrolls has no tab stop: ' + e.className);
        }
    }
    // book/_assets/site.js marks a table box that scrolls (data-overflow) from a ResizeObserver:
    // wait until every mark agrees with the box's geometry. A box in a closed fold is not
    // rendered, so no observer sees it change (after a change of colour mode, say); it is
    // marked when the fold opens, and is left out here until then.
    for (const w of document.querySelectorAll('.table-scroll')) {
        if (!w.checkVisibility()) continue;
        const scrolls = w.scrollWidth > w.clientWidth;
        if (scrolls !== w.hasAttribute('data-overflow')) unmet.push('a table box is marked wrongly');
    }
    if (document.fonts.status !== 'loaded') unmet.push('fonts are loading');
    return unmet;
}"""
SETTLED = f"() => ({UNSETTLED})().length === 0"


def settle(page: Any, timeout_ms: float = 30000) -> None:
    """Return once ``page`` (a Playwright page of the site) has settled; see SETTLED."""
    page.evaluate(SETTLE_PROMISES, timeout_ms)
    try:
        page.wait_for_function(SETTLED, timeout=timeout_ms, polling="raf")
    except Exception as error:  # say which condition never held
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        if not isinstance(error, PlaywrightTimeout):
            raise
        raise TimeoutError(f"not settled after {timeout_ms / 1000:.0f} s: {page.evaluate(UNSETTLED)}") from error


def chromium() -> str | None:
    """The system's Chromium (Debian: apt-get install chromium); Playwright never downloads one."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on the loopback interface, as a reader's browser would load it; yields the URL."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass
