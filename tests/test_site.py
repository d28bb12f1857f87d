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


def toc_files() -> list[str]:
    """Every file the table of contents lists, at any depth."""
    import yaml

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                yield entry["file"]
            for key in ("parts", "chapters", "sections"):
                yield from walk(entry.get(key, []))

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], *walk(toc.get("parts", []) + toc.get("chapters", []))]


def test_every_toc_page_is_built(pages, built_site):
    names = {page.relative_to(built_site).as_posix() for page in pages}
    files = toc_files()
    assert len(files) >= 5 and any(f.startswith("notebooks/") for f in files)
    for file in files:
        assert f"{file}.html" in names, (file, sorted(names))


def test_every_notebook_is_in_the_book():
    listed = set(toc_files())
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{notebook.stem}" in listed, f"{notebook.name} is not in _toc.yml"


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


def test_figures_stay_readable_in_dark_mode(browser, site_url, pages, built_site):
    """In the theme's dark mode every figure keeps its opaque white background
    (a transparent PNG would put black axes on a near-black page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    chapters = [p for p in pages if p.parent.name == "notebooks"]
    assert chapters
    for chapter in chapters:
        page = context.new_page()
        page.goto(f"{site_url}/{chapter.relative_to(built_site).as_posix()}", wait_until="load")
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        corners = page.evaluate(
            """() => [...document.querySelectorAll('.cell_output img')].map(img => {
                const canvas = document.createElement('canvas');
                canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
                const context = canvas.getContext('2d');
                context.drawImage(img, 0, 0);
                return Array.from(context.getImageData(1, 1, 1, 1).data);
            })"""
        )
        assert corners, f"{chapter.name}: no figures found"
        for corner in corners:
            assert corner == [255, 255, 255, 255], f"{chapter.name}: figure background {corner} is not opaque white"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{chapter.stem}.dark.png"))
        page.close()
    context.close()
