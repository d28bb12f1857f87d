"""The built site: it builds without a warning, loads nothing from the network,
and every page reads correctly in a real browser (math typeset, images loaded)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "screenshots"
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}


class ResourceParser(HTMLParser):
    """Collects what a page loads (not what it links to) and its images."""

    def __init__(self):
        super().__init__()
        self.loads: list[str] = []
        self.images: list[dict[str, str | None]] = []
        self.figures = 0
        self.captions = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed") and attributes.get("src"):
            self.loads.append(attributes["src"])
        if tag == "link" and attributes.get("href"):
            rel = (attributes.get("rel") or "").lower()
            if any(word in rel for word in ("stylesheet", "preload", "icon", "modulepreload", "manifest")):
                self.loads.append(attributes["href"])
        if tag == "img":
            self.images.append(attributes)
        if tag == "figure":
            self.figures += 1
        if tag == "figcaption":
            self.captions += 1


def parse(page: Path) -> ResourceParser:
    parser = ResourceParser()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def is_external(url: str) -> bool:
    parsed = urlparse(url)
    return bool(parsed.netloc) or parsed.scheme not in ("", "data")


def test_every_toc_page_is_built(pages, built_site):
    names = {page.relative_to(built_site).as_posix() for page in pages}
    for expected in ("book/index.html", "book/how_to_use.html", "book/bibliography.html",
                     "notebooks/01_where_the_scale_sits.html",
                     "notebooks/07_pitfalls.html", "notebooks/07b_advanced_questions.html"):
        assert expected in names, sorted(names)


def test_pages_load_nothing_from_the_network(pages):
    offenders = {}
    for page in pages:
        external = [url for url in parse(page).loads if is_external(url)]
        if external:
            offenders[page.name] = external
    assert not offenders, f"pages load external resources: {offenders}"


def test_stylesheets_import_nothing_from_the_network(built_site):
    pattern = re.compile(r"""(?:@import\s+(?:url\()?|url\()\s*['"]?(https?:)?//""", re.I)
    offenders = [css.name for css in built_site.rglob("*.css") if pattern.search(css.read_text(errors="replace"))]
    assert not offenders, f"stylesheets load from the network: {offenders}"


def is_redirect(page: Path) -> bool:
    return 'http-equiv="refresh"' in page.read_text(encoding="utf-8").lower()


def test_mathjax_is_served_by_the_site(pages, built_site):
    for page in pages:
        if is_redirect(page):  # the root index.html only forwards to book/index.html
            continue
        scripts = [url for url in parse(page).loads if "mathjax" in url.lower()]
        assert scripts, f"{page.name} does not load MathJax"
        for script in scripts:
            assert (page.parent / script.split("?")[0]).resolve().is_file(), (page.name, script)
    assert (built_site / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()


def test_every_image_has_alt_text_and_every_figure_a_caption(pages):
    for page in pages:
        parsed = parse(page)
        content_images = [image for image in parsed.images if "logo" not in (image.get("class") or "")]
        for image in content_images:
            assert (image.get("alt") or "").strip(), f"{page.name}: image without alt text: {image.get('src')}"
        assert parsed.captions == parsed.figures, f"{page.name}: {parsed.figures} figures, {parsed.captions} captions"


def test_plain_titles_for_tabs_and_print():
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from site_tweaks import plain_title

    assert plain_title(r"Where the scale \(1/\sqrt{d_k}\) sits") == "Where the scale 1/√dₖ sits"
    assert plain_title(r"Why $\sqrt{d_k}$, not $d_k$") == "Why √dₖ, not dₖ"
    assert plain_title("No math") == "No math"


def test_glued_values_were_all_pasted(pages):
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "{glue:" not in text and "glue:text" not in text, page.name


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_pages_in_a_real_browser(browser, site_url, pages, built_site, viewport):
    """Every page: no failed request, no console error, all math typeset, all images decoded."""
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height})
    # Anything that is not the local server is a network load: fail it loudly.
    context.route(re.compile(r"^(?!http://127\.0\.0\.1:).*"), lambda route: route.abort())
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for page_file in pages:
        path = page_file.relative_to(built_site).as_posix()
        page = context.new_page()
        failed, errors = [], []
        page.on("requestfailed", lambda request: failed.append(request.url))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{site_url}/{path}", wait_until="load")
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=15000)
        page.evaluate("MathJax.startup.promise")
        report = page.evaluate(
            r"""() => {
                const raw = [];
                const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
                while (walker.nextNode()) {
                    const node = walker.currentNode;
                    if (node.parentElement.closest('pre, code, script, style, mjx-container, .highlight')) continue;
                    if (/\\\(|\\\)|\\\[|\\\]|\$\$|\\sqrt|\\frac/.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 80));
                }
                return {
                    typeset: document.querySelectorAll('mjx-container').length,
                    sidebarMath: document.querySelectorAll('.bd-sidebar-primary span.math, nav span.math').length,
                    sidebarTypeset: document.querySelectorAll('.bd-sidebar-primary span.math mjx-container, nav span.math mjx-container').length,
                    raw: raw,
                    brokenImages: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
                };
            }"""
        )
        page.screenshot(path=str(SCREENSHOTS / f"{path.replace('/', '_')}.{viewport}.png"), full_page=False)
        page.close()
        if failed:
            problems.append(f"{path}: failed requests {failed}")
        if errors:
            problems.append(f"{path}: console errors {errors}")
        if report["raw"]:
            problems.append(f"{path}: untypeset TeX {report['raw']}")
        if report["sidebarMath"] != report["sidebarTypeset"]:
            problems.append(f"{path}: {report['sidebarMath'] - report['sidebarTypeset']} sidebar titles with raw math")
        if report["brokenImages"]:
            problems.append(f"{path}: images that did not load {report['brokenImages']}")
    context.close()
    assert not problems, "\n".join(problems)


def test_math_is_typeset_where_the_book_has_math(browser, site_url):
    """The chapter's equations and the sidebar's math titles are typeset, not merely free of raw TeX."""
    page = browser.new_page()
    page.goto(f"{site_url}/notebooks/01_where_the_scale_sits.html", wait_until="load")
    page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("MathJax.startup.promise")
    assert page.locator("mjx-container[display='true']").count() >= 3
    page.goto(f"{site_url}/book/bibliography.html", wait_until="load")
    page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("MathJax.startup.promise")
    assert page.locator(".bd-sidebar-primary mjx-container").count() >= 1, "sidebar title math not typeset"
    page.close()
