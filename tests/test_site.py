"""The built site: it builds without a warning, loads nothing from the network,
and every page reads correctly in a real browser (math typeset, images loaded)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser import ROOT, SCREENSHOTS, VIEWPORTS, axe_violations, load, new_context, tick_label_px
from tools.notebook_format import NOTEBOOK_DIR, toc_files


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
    files = toc_files()
    assert len(files) >= 5 and any(f.startswith("notebooks/") for f in files)
    for file in files:
        assert f"{file}.html" in names, (file, sorted(names))


def test_every_notebook_is_in_the_book():
    listed = set(toc_files())
    for notebook in sorted(NOTEBOOK_DIR.glob("*.ipynb")):  # every file there, listed or not
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
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_tweaks", ROOT / "book" / "_ext" / "site_tweaks.py")
    site_tweaks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(site_tweaks)
    plain_title = site_tweaks.plain_title

    assert plain_title(r"Where the scale \(1/\sqrt{d_k}\) sits") == "Where the scale 1/√dₖ sits"
    assert plain_title(r"Why $\sqrt{d_k}$, not $d_k$") == "Why √dₖ, not dₖ"
    assert plain_title("No math") == "No math"


def test_glued_values_were_all_pasted(pages):
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "{glue:" not in text and "glue:text" not in text, page.name


PAGE_REPORT = r"""() => {
    const raw = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (node.parentElement.closest('pre, code, script, style, mjx-container, .highlight')) continue;
        const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\sqrt|\\frac/;
        if (tex.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 80));
    }
    const displays = [...document.querySelectorAll('mjx-container[display="true"]')].map(c => {
        const box = c.getBoundingClientRect();
        const label = c.parentElement.querySelector('.eqno');
        const l = label ? label.getBoundingClientRect() : null;
        return {text: (c.parentElement.textContent || '').replace(/\s+/g, ' ').slice(0, 60),
                overflows: c.scrollWidth > c.clientWidth + 1,
                clipped: ['auto', 'scroll', 'hidden'].includes(getComputedStyle(c).overflowX),
                labelOverlaps: l !== null && l.width > 0 && l.left < box.right - 1 && l.right > box.left + 1
                               && l.top < box.bottom && l.bottom > box.top};
    });
    const figures = [...document.querySelectorAll('.cell_output img, figure img')]
        .filter(i => i.naturalWidth > 200)
        .map(i => ({src: i.src.split('/').pop().slice(0, 40),
                    scale: i.getBoundingClientRect().width / i.naturalWidth}));
    return {
        typeset: document.querySelectorAll('mjx-container').length,
        sidebarMath: document.querySelectorAll('.bd-sidebar-primary span.math, nav span.math').length,
        sidebarTypeset: document.querySelectorAll(
            '.bd-sidebar-primary span.math mjx-container, nav span.math mjx-container').length,
        raw: raw,
        brokenImages: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
        displays: displays,
        figures: figures,
        pageOverflow: document.documentElement.scrollWidth > window.innerWidth + 1,
    };
}"""


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_pages_in_a_real_browser(browser, site_url, pages, built_site, viewport):
    """Every page: no failed request, no console error, all math typeset, all images decoded,
    no display equation wider than the text at 1280 px (on a phone it may scroll, its label
    clear of it), figures whose tick labels stay >= 9 CSS px, no sideways scrolling of the page,
    and no serious or critical axe-core violation."""
    context = new_context(browser, viewport)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for page_file in pages:
        path = page_file.relative_to(built_site).as_posix()
        page = load(context, f"{site_url}/{path}")
        report = page.evaluate(PAGE_REPORT)
        page.screenshot(path=str(SCREENSHOTS / f"{path.replace('/', '_')}.{viewport}.png"), full_page=False)
        problems += [f"{path}: {p}" for p in page.problems]
        problems += [f"{path}: axe {v}" for v in axe_violations(page)]
        page.close()
        if report["raw"]:
            problems.append(f"{path}: untypeset TeX {report['raw']}")
        if report["sidebarMath"] != report["sidebarTypeset"]:
            problems.append(f"{path}: {report['sidebarMath'] - report['sidebarTypeset']} sidebar titles with raw math")
        if report["brokenImages"]:
            problems.append(f"{path}: images that did not load {report['brokenImages']}")
        if report["pageOverflow"]:
            problems.append(f"{path}: the page scrolls sideways")
        for display in report["displays"]:
            if display["overflows"] and (viewport == "desktop" or not display["clipped"]):
                problems.append(f"{path}: display equation wider than the text: {display['text']}")
            if display["labelOverlaps"]:
                problems.append(f"{path}: equation label overlaps its equation: {display['text']}")
        for figure in report["figures"]:
            if figure["scale"] * tick_label_px() < 9:
                problems.append(
                    f"{path}: figure {figure['src']} shrunk to {figure['scale']:.2f}: tick labels under 9 px"
                )
    context.close()
    assert not problems, "\n".join(problems)


def test_phone_navigation(browser, site_url, pages, built_site):
    """At 390 x 844, the menu button opens the book's navigation and "On this page" the
    page's contents, and a link in each takes the reader there."""
    context = new_context(browser, "phone")
    problems = []
    for page_file in pages:
        path = page_file.relative_to(built_site).as_posix()
        if is_redirect(page_file):
            continue
        page = load(context, f"{site_url}/{path}")
        page.locator("button.primary-toggle:visible").first.click()
        sidebar = page.locator(".bd-sidebar-primary")
        try:
            sidebar.locator("nav a.reference.internal:visible").first.wait_for(timeout=3000)
        except Exception:
            problems.append(f"{path}: the menu button does not open the navigation")
            page.close()
            continue
        target = sidebar.locator("nav a.reference.internal:visible").last
        href = target.get_attribute("href")
        target.click()
        page.wait_for_load_state("load")
        if href.split("#")[0].split("/")[-1] not in page.url:
            problems.append(f"{path}: the navigation link {href} did not navigate (at {page.url})")
        page.goto(f"{site_url}/{path}", wait_until="load")
        secondary = page.locator("button.secondary-toggle:visible")
        if secondary.count():
            secondary.first.click()
            links = page.locator(".bd-sidebar-secondary a.nav-link:visible")
            try:
                links.first.wait_for(timeout=3000)
            except Exception:
                problems.append(f"{path}: 'On this page' does not open the contents")
            else:
                anchor = links.nth(min(1, links.count() - 1)).get_attribute("href")
                links.nth(min(1, links.count() - 1)).click()
                page.wait_for_timeout(300)
                if not page.url.endswith(anchor):
                    problems.append(f"{path}: the contents link {anchor} did not navigate (at {page.url})")
        page.close()
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


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_dark_mode(browser, site_url, pages, built_site, viewport):
    """In the theme's dark mode every figure keeps its opaque white background (a
    transparent PNG would put black axes on a near-black page) and no page has a serious
    or critical axe-core violation (contrast included). Full-page screenshots of
    chapters 3 and 6 in both modes go to _build/screenshots/."""
    problems = []
    for mode in ("dark", "light"):
        context = new_context(browser, viewport, mode)
        for page_file in pages:
            path = page_file.relative_to(built_site).as_posix()
            if mode == "light" and not any(key in path for key in SHOWCASE):
                continue
            page = load(context, f"{site_url}/{path}")
            assert page.evaluate("document.documentElement.dataset.theme") == mode
            if any(key in path for key in SHOWCASE):
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / f"{page_file.stem}.{viewport}.{mode}.full.png"), full_page=True)
            if mode == "dark":
                corners = page.evaluate(FIGURE_CORNERS)
                problems += [
                    f"{path}: figure background {c} is not opaque white" for c in corners if c != [255, 255, 255, 255]
                ]
                problems += [f"{path}: axe (dark) {v}" for v in axe_violations(page)]
            page.close()
        context.close()
    assert not problems, "\n".join(problems)


SHOWCASE = ("03_softmax_saturation", "06_the_experiment")
FIGURE_CORNERS = """() => [...document.querySelectorAll('.cell_output img')].map(img => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    return Array.from(context.getImageData(1, 1, 1, 1).data);
})"""
