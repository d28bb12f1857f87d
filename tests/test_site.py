"""The built site: it builds without a warning, loads nothing from the network,
and every page reads correctly in a real browser (math typeset, images loaded).

The browser checks are page checks (tests/browser.py): each page of both editions is loaded
once per viewport (desktop, phone), in light mode, and every check below reads that one load;
the dark view is the same page after a click on the theme's colour-mode button, as a reader
switches (a stored dark mode, shown from the first load, is checked on the landing pages:
``test_a_stored_dark_mode_is_shown_on_load``).

What a page's own content decides is checked on every page, at both widths and in both modes:
no failed request or console error, math typeset and unclipped, nothing wider than the page,
figures loaded and legible, axe on the content. What the theme decides (the colour mode shown,
dark mode keeping the DOM, axe on the chrome, the phone's navigation, the header's buttons) is
the same on every page of a template, and is checked on one page per template and edition
(``scope=TEMPLATE``; test_pages_of_one_template_share_their_chrome holds the other pages to
their template's controls). Dark mode keeps the light mode's DOM but not its layout:
pydata-sphinx-theme 0.16.1 pads cell outputs and their images by 8 px in dark mode
(``html[data-theme=dark] .bd-content div.cell_output img`` in its stylesheet). So the layout
checks run in both modes, axe runs in dark mode the rules whose result the colours or that
padding can change (every rule in light mode), and phone navigation runs once, in light."""

from __future__ import annotations

import difflib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests import extension
from tests.browser import (
    EDITIONS,
    FAILED_REQUEST,
    INTERACTS,
    LEAVES,
    MODES,
    SHOWN_MODE,
    SITE_VIEWPORTS,
    TEMPLATE,
    UNSHOWN_FALLBACKS,
    axe_violations,
    load,
    new_context,
    page_check,
    reader_problems,
    redirect_pages,
    representatives,
    site_pages,
    switch_mode,
    template,
    tick_label_px,
)
from tools.figures import FIGURE_TEXT_PX
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
    plain_title = extension("site_tweaks").plain_title

    assert plain_title(r"Where the scale \(1/\sqrt{d_k}\) sits") == "Where the scale 1/√dₖ sits"
    assert plain_title(r"Why $\sqrt{d_k}$, not $d_k$") == "Why √dₖ, not dₖ"
    assert plain_title("No math") == "No math"
    assert plain_title(r"Which scale for \sigma \neq 1? q \cdot k, \ln n, 1 - \max_j p_j") == (
        "Which scale for σ ≠ 1? q · k, ln n, 1 - maxⱼ pⱼ"
    )


def test_search_index_titles_are_plain_text(built_site):
    """The search page showed four of nine chapter titles as raw TeX (``\\(1/\\sqrt{d_k}\\)``) and
    section titles as ``1/\\sqrt{d_k}``: in either edition's index, every page and section title is
    plain text (book/_ext/site_tweaks.py, plain_index_titles), ``1/√dₖ`` as in the browser tab."""
    import json

    for edition in ("", "zh/"):
        text = (built_site / edition / "searchindex.js").read_text(encoding="utf-8")
        index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
        titles = [*index["titles"], *index["alltitles"]]
        raw = [t for t in titles if "\\" in t or "$" in t or 'class="math' in t]
        assert not raw, f"{edition or 'en/'}searchindex.js: titles with TeX {raw}"
        assert any("√dₖ" in t for t in index["titles"]), f"{edition or 'en/'}searchindex.js: no title reads √dₖ"


# the chrome around a page's article that Sphinx's snippets used to quote ([role=main] holds it)
SEARCH_CHROME = ("中文", "English", "Contents", "目录", "Binder", "Colab", "Open issue", "previous", "上一页")


@pytest.mark.browser
@pytest.mark.parametrize(("edition", "query", "stem"), [("", "saturation", "saturat"), ("zh/", "饱和", "饱和")])
def test_search_snippets_quote_the_content_not_the_chrome(browser, site_url, edition, query, stem):
    """The review's search for "saturation" showed chapter 3's snippet as "…中文 Without the scale: softmax
    saturation Contents…", and snippets with raw TeX (``\\(d_k\\)``). Now every snippet of a search in
    either edition quotes the query from the article itself (book/_assets/site.js), with no chrome and no TeX."""
    context = new_context(browser, "desktop")
    page = context.new_page()
    page.goto(f"{site_url}/{edition}search.html?q={query}")
    page.wait_for_function("document.querySelectorAll('#search-results li p.context').length >= 3", timeout=60000)
    page.wait_for_timeout(1500)  # the snippets of the remaining results arrive one page fetch at a time
    snippets = page.eval_on_selector_all("#search-results li p.context", "ps => ps.map(p => p.textContent)")
    context.close()
    assert len(snippets) >= 3, snippets
    chrome = [s for s in snippets if any(word in s for word in SEARCH_CHROME)]
    assert not chrome, chrome
    assert not [s for s in snippets if "\\(" in s or "\\sqrt" in s], snippets
    # Sphinx finds the word's stem (saturated, saturate); most snippets show it
    assert sum(stem in s.lower() for s in snippets) >= len(snippets) // 2, snippets


def test_glued_values_were_all_pasted(pages):
    for page in pages:
        # code blocks may quote a role (the helpers page shows helpers/book.py, which writes them)
        text = re.sub(r"<pre\b.*?</pre>", "", page.read_text(encoding="utf-8"), flags=re.S)
        assert "{glue:" not in text and "glue:text" not in text, page.name


# The chrome's controls: every button, and every link styled as one, outside the article. The
# button that opens a page's contents (secondary-toggle) is left out: a page has it when it has
# sections, which its content decides.
CONTROL = re.compile(r"""<(button|a)\b[^>]*\bclass="([^"]*\bbtn\b[^"]*)\"""")


def chrome_controls(page: Path) -> set[tuple[str, str]]:
    text = re.sub(r'<article class="bd-article".*?</article>', "", page.read_text(encoding="utf-8"), flags=re.S)
    found = {(tag, " ".join(sorted(classes.split()))) for tag, classes in CONTROL.findall(text)}
    return {(tag, classes) for tag, classes in found if "secondary-toggle" not in classes}


def test_pages_of_one_template_share_their_chrome(built_site):
    """The checks of the theme's chrome run on one page per template (tests/browser.py, template):
    every other page of the template must have its representative's controls, or it is a template
    of its own, to be named in tests/browser.py."""
    stand_ins = representatives()
    controls = {path: chrome_controls(built_site / path) for path in stand_ins.values()}
    assert all(controls.values()), "the representatives have no controls: the pattern no longer reads the theme"
    for path in site_pages():
        mine, theirs = chrome_controls(built_site / path), controls[stand_ins[template(path)]]
        assert mine == theirs, (
            f"{path} ({template(path)}) differs from {stand_ins[template(path)]}: "
            f"only here {sorted(mine - theirs)}, only there {sorted(theirs - mine)}"
        )


# --- in the browser: one load per page and viewport; the dark view after the colour-mode button --

MATH_REPORT = r"""() => {
    const raw = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (node.parentElement.closest('pre, code, script, style, mjx-container, .highlight')) continue;
        const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\sqrt|\\frac/;
        if (tex.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 80));
    }
    // Sphinx's markup of every formula (span.math inline, div.math displayed): MathJax typesets each
    const formulas = [...document.querySelectorAll('span.math, div.math')].filter(m => !m.closest('pre, code'));
    return {
        raw: raw,
        untypeset: formulas.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 60)),
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
    return [img.src.split('/').pop().slice(0, 40), Array.from(context.getImageData(1, 1, 1, 1).data)];
})"""
# axe's rules whose result dark mode can change. With the same elements, attributes and
# visibility in both modes (test_dark_mode_changes_no_element), what differs is the colours and
# the 8 px padding of cell outputs: the contrast rules read colours, and the padding can make a
# table scroll at 1280 px in dark mode only (chapter 4's did), which scrollable-region-focusable
# reads. target-size is left out: the padding moves an output's content away from every target
# outside it and keeps the sizes and distances of the targets inside it, so no target is
# smaller or closer in dark mode (it was the costliest rule here: about 1 of 4 CPU s per dark view).
DARK_MODE_RULES = ("color-contrast", "link-in-text-block", "scrollable-region-focusable")
# axe's rules of colour, which read the colours of text, links and their backgrounds. A page's
# content has the same colours at every width: the colours the theme sets by width are its
# chrome's (the sidebars' drawers) and margin notes' (the book has none), and book.css's one
# colour for phones is the card labels of a table, text that CSS generates and axe does not read.
# A Chinese page has its English twin's colours too: the same CSS (book.css sets only the
# font family for it), the same outputs, code and figures' backgrounds. They are most of axe's
# time on a chapter (1.9 of 3.4 CPU s on chapter 3), so they run at 1280 px on every English
# page, in both modes, and elsewhere (a phone; a Chinese page) on one page per template and
# edition, for the chrome: its phone layout, its Chinese labels.
COLOUR_RULES = ("color-contrast", "link-in-text-block")
# What a phone changes in a page's own content, of axe's rules: which boxes scroll sideways, and
# the tables, whose header row book.css hides on a phone (each cell is labelled instead), which
# the header rules read. The DOM, its names and roles are the page's at 1280 px, where every rule
# runs; the chrome's phone layout runs every rule on one page per template (axe's fixed cost is
# its walk of the page, about 0.4 CPU s a run on a chapter: a phone view costs that, not 1.3 s).
# (Only rules axe runs by default: its experimental td-has-header and table-fake-caption stay off.)
PHONE_PAGE_RULES = ("scrollable-region-focusable", "td-headers-attr", "th-has-data-cells")


def is_representative(path: str) -> bool:
    return path in representatives().values()


# --- the theme's chrome: one page per template and edition, both widths --------------------------


@page_check(scope=TEMPLATE, modes=MODES)
def test_shows_the_mode_asked_for(page, view):
    """The page shows the reader's colour mode: light as stored, dark after the colour-mode button."""
    shown = page.evaluate(SHOWN_MODE)
    return [] if shown == [view.mode, view.mode] else [f"mode and theme {shown}"]


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


@page_check(scope=TEMPLATE, modes=("dark",))
def test_dark_mode_changes_no_element(page, view):
    """The page in dark mode has the light mode's elements, attributes and visibility (FINGERPRINT),
    so axe's rules of structure and names, and phone navigation, find there what they find in light
    mode: the theme's switch, the same on every page of a template. (The check clicks the button
    back to light to compare, and again to dark.)"""
    dark = page.evaluate(FINGERPRINT)
    switch_mode(page, "light")
    light = page.evaluate(FINGERPRINT)
    switch_mode(page, "dark")
    if dark == light:
        return []
    diff = list(difflib.unified_diff(light.splitlines(), dark.splitlines(), "light", "dark", n=1, lineterm=""))
    return ["the dark page differs from the light one:\n" + "\n".join(line[:300] for line in diff[:40])]


# whether the page is scrolling (from its first scroll event to its scrollend)
SCROLL_WATCH = """() => {
    window.bookScrolling = false;
    addEventListener('scroll', () => { window.bookScrolling = true; });
    addEventListener('scrollend', () => { window.bookScrolling = false; });
}"""
SECTION_SHOWN = """anchor => {
    const target = location.hash === anchor && document.getElementById(decodeURIComponent(anchor.slice(1)));
    return !!target && !window.bookScrolling && Math.abs(target.getBoundingClientRect().top) < innerHeight / 3;
}"""


def has_contents(path: str) -> bool:
    """A page with sections, whose contents the theme lists (Sphinx's index and search pages have none)."""
    return not template(path).endswith(("index", "search"))


@page_check(scope=TEMPLATE, viewports=("phone",), order=INTERACTS, pages=has_contents)
def test_phone_contents_open_and_navigate(page, view):
    """At 390 x 844, "On this page" opens the page's contents, and a link there takes the reader
    to its section."""
    secondary = page.locator("button.secondary-toggle:visible")
    if not secondary.count():
        return ["no 'On this page' button"]
    secondary.first.click()
    links = page.locator(".bd-sidebar-secondary a.nav-link:visible")
    try:
        links.first.wait_for(timeout=5000)
    except Exception:
        return ["'On this page' does not open the contents"]
    link = links.nth(min(1, links.count() - 1))
    anchor = link.get_attribute("href")
    page.evaluate(SCROLL_WATCH)
    link.click()
    try:  # the theme scrolls smoothly: the section's heading reaches the top, and the scroll ends
        page.wait_for_function(SECTION_SHOWN, arg=anchor, polling="raf", timeout=10000)
    except Exception:
        return [f"the contents link {anchor} did not take the reader to its section (at {page.url})"]
    # leave the page as the checks that follow expect it: the contents closed (the theme's dialog;
    # its close event puts the contents back in the page), no section targeted, at the top
    page.evaluate("document.querySelectorAll('dialog[open]').forEach(d => d.close())")
    page.wait_for_function("!document.querySelector('dialog[open]')")
    page.evaluate("history.replaceState(null, '', location.pathname); scrollTo({top: 0, behavior: 'instant'})")
    page.wait_for_function("scrollY === 0", polling="raf", timeout=10000)
    return []


@page_check(scope=TEMPLATE, viewports=("phone",), order=LEAVES)
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


@pytest.mark.parametrize("path", [f"{edition}book/index.html" for edition in EDITIONS])
@pytest.mark.parametrize("viewport", SITE_VIEWPORTS)
def test_a_stored_dark_mode_is_shown_on_load(path, viewport, browser, site_url):
    """A reader who chose dark mode on an earlier visit gets it from the first load (the theme
    reads localStorage in its <head> script): the same script on every page, so the landing
    pages stand for all; every other dark view comes from the colour-mode button."""
    context = new_context(browser, viewport, "dark")
    try:
        page = load(context, f"{site_url}/{path}")
        shown = page.evaluate(SHOWN_MODE)
        assert shown == ["dark", "dark"], f"{path}: mode and theme {shown} after a stored dark mode"
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


# --- each page's own content: every page, both widths, both modes ---------------------------------


@pytest.mark.parametrize("path", site_pages())
def test_loads_cleanly(path, page_reports):
    """No failed request, no HTTP error, no console error and no uncaught exception, from the
    load to the end of the last check that stays on the page (the dark view's included), at
    either width."""
    problems = [f"{viewport}: {p}" for viewport in SITE_VIEWPORTS for p in page_reports.problems(path, viewport)]
    assert not problems, f"{path}:\n" + "\n".join(problems)


@page_check(modes=MODES)
def test_math_is_typeset(page, view):
    """Every formula typeset (Sphinx's span.math and div.math each hold MathJax's output), no raw
    TeX in the text, and the math in the navigation's titles typeset too."""
    report = page.evaluate(MATH_REPORT)
    findings = [f"untypeset TeX {report['raw']}"] if report["raw"] else []
    findings += [f"a formula MathJax did not typeset: {text!r}" for text in report["untypeset"]]
    if report["sidebarMath"] != report["sidebarTypeset"]:
        findings.append(f"{report['sidebarMath'] - report['sidebarTypeset']} sidebar titles with raw math")
    return findings


# The page's Tab stops, and those of them that are formulas (MathJax's mjx-container or inside one).
FORMULA_TAB_STOPS = """() => {
    const stops = [...document.querySelectorAll('*')].filter(e => e.tabIndex >= 0 && !e.disabled);
    return [stops.length, stops.filter(e => e.closest('mjx-container')).length,
            document.querySelectorAll('mjx-container mjx-assistive-mml').length];
}"""


@page_check(viewports=("desktop",))
def test_formulas_are_not_tab_stops(page, view):
    """MathJax's menu put every formula in the tab order: chapter 3 had 250 formulas among its 605
    Tab stops. None now at 1280 px (_config.yml, mathjax3_config), and each formula keeps the hidden
    MathML a screen reader reads. (On a phone a display equation that scrolls sideways takes the
    focus, as axe's scrollable-region-focusable asks: book/_assets/site.js.)"""
    stops, formulas, readable = page.evaluate(FORMULA_TAB_STOPS)
    containers = page.locator("mjx-container").count()
    findings = [f"{formulas} of the page's {stops} Tab stops are formulas"] if formulas else []
    if readable < containers:
        findings.append(f"{containers - readable} of {containers} formulas without MathML for a screen reader")
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
    """Every image is decoded; no figure is shrunk so far that its smallest text falls under 12 CSS px
    (FIGURE_TEXT_PX; the review measured 8.9-9.3 px on a desktop and 9.2-9.8 px on a phone when this
    floor was 9 px); and in dark mode every figure keeps its opaque white background (a transparent PNG
    would put black axes on a near-black page)."""
    report = page.evaluate(IMAGE_REPORT)
    findings = [f"images that did not load {report['broken']}"] if report["broken"] else []
    findings += [
        f"figure {f['src']} shrunk to {f['scale']:.2f}: its smallest text is "
        f"{f['scale'] * tick_label_px(f['url']):.1f} px, under {FIGURE_TEXT_PX:g}"
        for f in report["figures"]
        if f["scale"] * tick_label_px(f["url"]) < FIGURE_TEXT_PX
    ]
    if view.mode == "dark":
        corners = page.evaluate(FIGURE_CORNERS)
        findings += [f"figure {src}: background {c} is not opaque white" for src, c in corners if c != [255] * 4]
    return findings


@page_check(modes=MODES)
def test_no_serious_accessibility_violation(page, view):
    """axe-core, no serious or critical violation: every rule in light mode at 1280 px, DARK_MODE_RULES
    in dark mode, PHONE_PAGE_RULES on a phone; the rules of colour on the English pages at 1280 px
    (COLOUR_RULES); and on one page per template and edition, every rule at both widths and modes."""
    representative = is_representative(view.path)
    if view.mode == "dark":
        rules: tuple[str, ...] | None = DARK_MODE_RULES
    else:
        rules = PHONE_PAGE_RULES if view.viewport == "phone" and not representative else None
    colours = representative or (view.viewport == "desktop" and not view.path.startswith("zh/"))
    return axe_violations(page, rules, skip=() if colours else COLOUR_RULES)


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
    explains (the zh read's EN4: "Toggle hidden content", "Main", "Page"): the chrome's, and those of
    the page's own folds and tables."""
    from tests.test_locale import allowed_english, english_words

    allowed = allowed_english()
    return [
        f"an English label: {label!r}"
        for label in sorted(set(page.evaluate(CONTROL_LABELS)))
        if any(w not in allowed and w.lower() not in allowed for w in english_words(label))
    ]


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
