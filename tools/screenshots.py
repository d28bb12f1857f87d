"""Screenshots of the built site for a reviewer, in _build/screenshots/ (`make screenshots`):
every page of both editions as a reader first sees it, at 1280 x 900 and 390 x 844 (light);
chapters 3 and 6 whole, in both colour modes; the lecture deck's second slide. They check
nothing (the browser tests do): they are pictures to look at, and the README's picture of the
landing page is ``book_index.desktop.png``."""

from __future__ import annotations

import sys

from tools.browser import CHROMIUM_FLAGS, chromium, serve, settle
from tools.notebook_format import ROOT

HTML = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "screenshots"
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}
WHOLE = ("notebooks/03_softmax_saturation.html", "notebooks/06_the_experiment.html")  # in both modes
SKIP = {"_static", "_sources", "_images", "slides"}


def pages() -> list[str]:
    found = (p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html") if not SKIP & set(p.parts))
    return sorted(p for p in found if 'http-equiv="refresh"' not in (HTML / p).read_text(encoding="utf-8").lower())


def main() -> int:
    if not (HTML / "index.html").is_file() or chromium() is None:
        print("screenshots need the built site (make book) and Chromium (make browser)")
        return 1
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with serve(HTML) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        for viewport, (width, height) in VIEWPORTS.items():
            for mode in ("light", "dark"):
                context = browser.new_context(viewport={"width": width, "height": height})
                stored = f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}')"
                context.add_init_script(stored)  # a reader who chose this mode
                page = context.new_page()
                for path in pages() if mode == "light" else WHOLE:
                    page.goto(f"{url}/{path}", wait_until="load")
                    settle(page)
                    if mode == "light":
                        page.screenshot(path=str(OUT / f"{path.replace('/', '_')}.{viewport}.png"))
                    if path in WHOLE:
                        stem = path.rsplit("/", 1)[-1].removesuffix(".html")
                        page.screenshot(path=str(OUT / f"{stem}.{viewport}.{mode}.full.png"), full_page=True)
                context.close()
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(f"{url}/slides/lecture.html", wait_until="load")
        page.wait_for_function("window.Reveal && Reveal.isReady && Reveal.isReady()", timeout=60000)
        settle(page)
        page.evaluate("Reveal.slide(1)")
        page.screenshot(path=str(OUT / "lecture.anchor-slide.png"))
        browser.close()
    print(f"screenshots: {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
