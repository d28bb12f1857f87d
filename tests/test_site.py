"""The built site: it builds without a warning, loads nothing from the network,
and every page reads correctly in a real browser (math typeset, images loaded).

The browser checks are page checks (tests/browser.py): each page of both editions is loaded
once per viewport (desktop, phone), in light mode, and every check below reads that one load;
the dark view is the same page after a click on the theme's colour-mode button, as a reader
switches (a stored dark mode, shown from the first load, is checked on the landing pages:
``test_a_stored_dark_mode_is_shown_on_load``). Dark mode keeps the light mode's DOM
(``test_dark_mode_changes_no_element`` holds every page to it) but not its layout:
pydata-sphinx-theme 0.16.1 pads cell outputs and their images by 8 px in dark mode
(``html[data-theme=dark] .bd-content div.cell_output img`` in its stylesheet). So the layout
checks run in both modes, axe runs in dark mode the rules whose result the colours or that
padding can change (every rule in light mode), and phone navigation runs once, in light."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser import (
    EDITIONS,
    FAILED_REQUEST,
    INTERACTS,
    LEAVES,
    MODES,
    ROOT,
    SCREENSHOTS,
    SHOWN_MODE,
    SITE_VIEWPORTS,
    UNSHOWN_FALLBACKS,
    View,
    axe_violations,
    load,
    new_context,
    page_check,
    reader_problems,
    redirect_pages,
    site_pages,
    tick_label_px,
    view_params,
)
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


def is_redirect(page: Path) -> bool:
    return 'http-equiv="refresh"' in page.read_text(encoding="utf-8").lower()


# --- the built HTML ---------------------------------------------------------------------------


def test_every_toc_page_is_built(pages, built_site):
    names = {page.relative_to(built_site).as_posix() for page in pages}
    files = toc_files()
    assert len(files) >= 5 and any(f.startswith("notebooks/") for f in files)
    for file in files:
        assert f"{file}.html" in names, (file, sorted(names))


def test_every_built_page_is_checked_in_the_browser(pages, built_site):
    """The browser checks are collected from the sources, before the build: the built site must
    have exactly those pages (a page Sphinx starts writing is named in tests/browser.py)."""
    built = {page.relative_to(built_site).as_posix() for page in pages}
    assert built == set(site_pages()) | set(redirect_pages()), (
        f"built, not checked: {sorted(built - set(site_pages()) - set(redirect_pages()))}; "
        f"checked, not built: {sorted(set(site_pages()) | set(redirect_pages()) - built)}"
    )
    assert all(is_redirect(built_site / p) for p in redirect_pages())


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


def test_colour_mode_icons_are_decorative(pages):
    """The colour-mode button's icons carry no title, so Font Awesome's <svg> has no text that
    the button's name lacks (book/_templates/theme-switcher.html): fixed when the page is built,
    not raced by a script when it loads."""
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for button in re.findall(r"<button[^>]*theme-switch-button.*?</button>", text, re.S):
            assert "title=" not in button.split(">", 1)[1], f"{page.name}: a titled colour-mode icon"


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
        # code blocks may quote a role (the helpers page shows helpers/book.py, which writes them)
        text = re.sub(r"<pre\b.*?</pre>", "", page.read_text(encoding="utf-8"), flags=re.S)
        assert "{glue:" not in text and "glue:text" not in text, page.name


# --- in the browser: one load per page, viewport and mode ------------------------------------

MATH_REPORT = r"""() => {
    const raw = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (node.parentElement.closest('pre, code, script, style, mjx-container, .highlight')) continue;
        const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\sqrt|\\frac/;
        if (tex.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 80));
    }
    return {
        raw: raw,
        sidebarMath: document.querySelectorAll('.bd-sidebar-primary span.math, nav span.math').length,
        sidebarTypeset: document.querySelectorAll(
            '.bd-sidebar-primary span.math mjx-container, nav span.math mjx-container').length,
    };
}"""
LAYOUT_REPORT = r"""() => ({
    displays: [...document.querySelectorAll('mjx-container[display="true"]')].map(c => {
        const box = c.getBoundingClientRect();
        const label = c.parentElement.querySelector('.eqno');
        const l = label ? label.getBoundingClientRect() : null;
        return {text: (c.parentElement.textContent || '').replace(/\s+/g, ' ').slice(0, 60),
                overflows: c.scrollWidth > c.clientWidth + 1,
                clipped: ['auto', 'scroll', 'hidden'].includes(getComputedStyle(c).overflowX),
                labelOverlaps: l !== null && l.width > 0 && l.left < box.right - 1 && l.right > box.left + 1
                               && l.top < box.bottom && l.bottom > box.top};
    }),
    pageOverflow: document.documentElement.scrollWidth > window.innerWidth + 1,
})"""
IMAGE_REPORT = r"""() => ({
    broken: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
    figures: [...document.querySelectorAll('.cell_output img, figure img')]
        .filter(i => i.naturalWidth > 200)
        .map(i => ({src: i.src.split('/').pop().slice(0, 40), url: i.currentSrc,
                    scale: i.getBoundingClientRect().width / i.naturalWidth})),
})"""
FIGURE_CORNERS = """() => [...document.querySelectorAll('.cell_output img')].map(img => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    return Array.from(context.getImageData(1, 1, 1, 1).data);
})"""
SHOWCASE = ("notebooks/03_softmax_saturation.html", "notebooks/06_the_experiment.html")
# axe's rules whose result dark mode can change. With the same elements, attributes and
# visibility in both modes (test_dark_mode_changes_no_element), what differs is the colours and
# the 8 px padding of cell outputs: the contrast rules read colours, and the padding can make a
# table scroll at 1280 px in dark mode only (chapter 4's did), which scrollable-region-focusable
# reads. target-size is left out: the padding moves an output's content away from every target
# outside it and keeps the sizes and distances of the targets inside it, so no target is
# smaller or closer in dark mode (it was the costliest rule here: about 1 of 4 CPU s per dark view).
DARK_MODE_RULES = ("color-contrast", "link-in-text-block", "scrollable-region-focusable")


def is_showcase(path: str) -> bool:
    return path in SHOWCASE


@page_check(modes=MODES)
def test_shows_the_mode_asked_for(page, view):
    """The page shows the reader's colour mode: light as stored, dark after the colour-mode button."""
    theme = page.evaluate("document.documentElement.dataset.theme")
    return [] if theme == view.mode else [f"the page shows the {theme} theme"]


@page_check(modes=MODES)
def test_math_is_typeset(page, view):
    """No raw TeX in the text, and the sidebar's math titles are typeset too."""
    report = page.evaluate(MATH_REPORT)
    findings = [f"untypeset TeX {report['raw']}"] if report["raw"] else []
    if report["sidebarMath"] != report["sidebarTypeset"]:
        findings.append(f"{report['sidebarMath'] - report['sidebarTypeset']} sidebar titles with raw math")
    return findings


@page_check(
    viewports=("desktop",), pages=lambda path: path.endswith(("01_where_the_scale_sits.html", "bibliography.html"))
)
def test_math_is_typeset_where_the_book_has_math(page, view):
    """Not merely free of raw TeX: chapter 1's equations and the sidebar's math titles are typeset."""
    if "01_where_the_scale_sits" in view.path:
        displays = page.locator("mjx-container[display='true']").count()
        return [] if displays >= 3 else [f"{displays} typeset display equations (at least 3)"]
    sidebar = page.locator(".bd-sidebar-primary mjx-container").count()
    return [] if sidebar >= 1 else ["sidebar title math not typeset"]


@page_check(modes=MODES)
def test_nothing_is_wider_than_the_page(page, view):
    """No sideways scrolling of the page; no display equation wider than the text at 1280 px (on
    a phone it may scroll in its own box), and no equation label over its equation."""
    report = page.evaluate(LAYOUT_REPORT)
    findings = ["the page scrolls sideways"] if report["pageOverflow"] else []
    for display in report["displays"]:
        if display["overflows"] and (view.viewport == "desktop" or not display["clipped"]):
            findings.append(f"display equation wider than the text: {display['text']}")
        if display["labelOverlaps"]:
            findings.append(f"equation label overlaps its equation: {display['text']}")
    return findings


@page_check(modes=MODES)
def test_images_load_and_figures_stay_legible(page, view):
    """Every image is decoded, and no figure is shrunk so far that its tick labels fall under 9 CSS px."""
    report = page.evaluate(IMAGE_REPORT)
    findings = [f"images that did not load {report['broken']}"] if report["broken"] else []
    findings += [
        f"figure {f['src']} shrunk to {f['scale']:.2f}: tick labels under 9 px"
        for f in report["figures"]
        if f["scale"] * tick_label_px(f["url"]) < 9
    ]
    return findings


@page_check()
def test_no_serious_accessibility_violation(page, view):
    """axe-core, every rule: no serious or critical violation."""
    return axe_violations(page)


@page_check(modes=("dark",))
def test_no_serious_accessibility_violation_in_dark_mode(page, view):
    """axe-core's rules of colour and size in dark mode: no serious or critical violation."""
    return axe_violations(page, DARK_MODE_RULES)


# What a screen reader announces for the page's controls, after every script has run: the labels
# upstream types in English are renamed by book/_assets/a11y.js on a Chinese page. A label that
# a11y.js prefixes with the text the control shows ("7.1. 混合精度 … (本页导航)") is read without that
# text, which the static test of the page's words checks already, code and all.
CONTROL_LABELS = r"""() => [...document.querySelectorAll('[aria-label]')].map(e => {
    const label = e.getAttribute('aria-label');
    const shown = (e.innerText || '').trim().replace(/\s+/g, ' ');
    return shown && label.startsWith(shown) ? label.slice(shown.length).trim() : label;
})"""


@page_check(viewports=("desktop",), pages=lambda path: path.startswith("zh/"))
def test_chinese_pages_name_their_controls_in_chinese(page, view):
    """Every accessible label on a Chinese page is Chinese, but for the words locales/zh_CN/english.yml
    explains (the zh read's EN4: "Toggle hidden content", "Main", "Page")."""
    from tests.test_locale import allowed_english, english_words

    allowed = allowed_english()
    return [
        f"an English label: {label!r}"
        for label in sorted(set(page.evaluate(CONTROL_LABELS)))
        if any(w not in allowed and w.lower() not in allowed for w in english_words(label))
    ]


@page_check(modes=("dark",))
def test_dark_mode_figures_keep_their_white_background(page, view):
    """A transparent PNG would put black axes on a near-black page."""
    corners = page.evaluate(FIGURE_CORNERS)
    return [f"figure background {c} is not opaque white" for c in corners if c != [255, 255, 255, 255]]


@page_check(modes=MODES)
def test_screenshots(page, view):
    """Screenshots for reviewers, in _build/screenshots/: every page as a reader first sees it
    (light), and chapters 3 and 6 whole, in both modes."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if view.mode == "light":
        page.screenshot(path=str(SCREENSHOTS / f"{view.path.replace('/', '_')}.{view.viewport}.png"))
    if is_showcase(view.path):
        name = f"{Path(view.path).stem}.{view.viewport}.{view.mode}.full.png"
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
    return []


@page_check(viewports=("phone",), order=INTERACTS)
def test_phone_contents_open_and_navigate(page, view):
    """At 390 x 844, "On this page" opens the page's contents, and a link there takes the reader
    to its section (a page without sections has no such button)."""
    secondary = page.locator("button.secondary-toggle:visible")
    if not secondary.count():
        return []
    secondary.first.click()
    links = page.locator(".bd-sidebar-secondary a.nav-link:visible")
    try:
        links.first.wait_for(timeout=5000)
    except Exception:
        return ["'On this page' does not open the contents"]
    link = links.nth(min(1, links.count() - 1))
    anchor = link.get_attribute("href")
    link.click()
    try:
        page.wait_for_function("anchor => location.hash === anchor", arg=anchor, timeout=5000)
    except Exception:
        return [f"the contents link {anchor} did not navigate (at {page.url})"]
    # close the contents again for the checks that follow (the theme's dialog; its close event
    # puts the contents back in the page)
    page.evaluate("document.querySelectorAll('dialog[open]').forEach(d => d.close())")
    page.wait_for_function("!document.querySelector('dialog[open]')")
    return []


@page_check(viewports=("phone",), order=LEAVES)
def test_phone_menu_opens_and_navigates(page, view):
    """At 390 x 844, the menu button opens the book's navigation, and a link in it takes the
    reader to that page."""
    page.locator("button.primary-toggle:visible").first.click()
    sidebar = page.locator(".bd-sidebar-primary")
    try:
        sidebar.locator("nav a.reference.internal:visible").first.wait_for(timeout=5000)
    except Exception:
        return ["the menu button does not open the navigation"]
    target = sidebar.locator("nav a.reference.internal:visible").last
    href = target.get_attribute("href")
    expected = href.split("#")[0].split("/")[-1]
    try:
        with page.expect_navigation(wait_until="commit", timeout=10000):
            target.click()
    except Exception:
        return [f"the navigation link {href} did not navigate (at {page.url})"]
    return [] if expected in page.url else [f"the navigation link {href} led to {page.url}"]


SITE_VIEWS = [View(p, v, m) for p in site_pages() for v in SITE_VIEWPORTS for m in MODES]


@pytest.mark.parametrize("view", view_params(SITE_VIEWS))
def test_loads_cleanly(view, page_reports):
    """No failed request, no HTTP error, no console error and no uncaught exception, from the
    load to the end of the last check that stays on the page."""
    problems = page_reports.get(view).problems
    assert not problems, f"{view.path} ({view.viewport}, {view.mode}):\n" + "\n".join(problems)


def test_only_a_shown_pictures_cancelled_fallback_is_not_a_problem():
    """A check of the harness (reader_problems): it drops an aborted fallback of a <picture> that
    shows another image, and keeps every other failure, an aborted request of a shown image too."""

    class Page:
        problems = [
            f"{FAILED_REQUEST}http://x/_images/stacked.png (net::ERR_ABORTED)",
            f"{FAILED_REQUEST}http://x/_images/shown.png (net::ERR_ABORTED)",
            f"{FAILED_REQUEST}http://x/_images/stacked.png (net::ERR_FAILED)",
            "HTTP 404 http://x/_images/stacked.png",
        ]

        def evaluate(self, script):
            assert script == UNSHOWN_FALLBACKS
            return ["http://x/_images/stacked.png"]

    assert reader_problems(Page()) == Page.problems[1:]


@pytest.mark.parametrize("view", view_params(v for v in SITE_VIEWS if v.mode == "dark"))
def test_dark_mode_changes_no_element(view, page_reports):
    """The page in dark mode has the light mode's elements, attributes and visibility
    (tests/browser.py, FINGERPRINT), so axe's rules of structure and names, and phone navigation,
    find there what they find in light mode."""
    dark = page_reports.get(view)
    light = page_reports.get(View(view.path, view.viewport, "light"))
    assert dark.theme == "dark" and light.theme == "light", (light.theme, dark.theme)
    assert dark.fingerprint == light.fingerprint, (
        f"{view.path}: the dark page differs from the light one (- light, + dark):\n" + light.fingerprint_diff(dark)
    )


@pytest.mark.parametrize(
    "view", view_params(View(f"{e}book/index.html", v, "dark") for e in EDITIONS for v in SITE_VIEWPORTS)
)
def test_a_stored_dark_mode_is_shown_on_load(view, browser, site_url):
    """A reader who chose dark mode on an earlier visit gets it from the first load (the theme
    reads localStorage in its <head> script): the same script on every page, so the landing
    pages stand for all; every page's dark view comes from the colour-mode button."""
    context = new_context(browser, view.viewport, "dark")
    try:
        page = load(context, f"{site_url}/{view.path}")
        shown = page.evaluate(SHOWN_MODE)
        assert shown == ["dark", "dark"], f"{view.path}: mode and theme {shown} after a stored dark mode"
        assert not page.problems, page.problems
    finally:
        context.close()


@pytest.mark.parametrize("path", redirect_pages())
def test_redirect_pages_forward_to_the_landing_page(path, browser, site_url):
    context = new_context(browser, "desktop")
    page = context.new_page()
    page.goto(f"{site_url}/{path}")
    page.wait_for_url(re.compile(r".*/book/index\.html$"), timeout=15000)
    context.close()
