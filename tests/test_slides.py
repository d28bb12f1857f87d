"""Lecture slides: every chapter's deck and the 90-minute lecture deck, built with the
site (book/_ext/book_slides.py), work offline in a real browser and fit their slides."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.browser import SCREENSHOTS, decks, figure_text, page_check
from tools.notebook_format import ROOT, glued_outputs, read, tags

MAX_LECTURE_SLIDES = 40
SLIDE_REPORT = r"""() => Reveal.getSlides().map((slide, index) => {
    Reveal.slide(index);
    const box = slide.getBoundingClientRect();
    // an equation is measured by its own box (it scrolls inside it); its glyphs and its hidden
    // assistive MathML are not
    const spill = [...slide.querySelectorAll('*')].filter(e => !e.closest('aside.notes'))
        .filter(e => e.tagName === 'MJX-CONTAINER' || !e.closest('mjx-container'))
        .filter(e => { const r = e.getBoundingClientRect();
                       return r.width > 0 && (r.right > box.right + 2 || r.bottom > box.bottom + 2); })
        .slice(0, 2).map(e => e.tagName + '.' + e.className);
    return {index: index, spill: spill, tall: slide.scrollHeight > slide.clientHeight + 2,
            text: slide.innerText.replace(/\s+/g, ' ').trim().length, images: slide.querySelectorAll('img').length,
            notes: (slide.querySelector('aside.notes') || {textContent: ''}).textContent.trim().length,
            noAlt: [...slide.querySelectorAll('img')].filter(i => !(i.alt || '').trim()).length,
            broken: [...slide.querySelectorAll('img')].filter(i => !(i.complete && i.naturalWidth > 0)).length};
})"""


@pytest.fixture(scope="module")
def built_decks(built_site) -> dict[str, Path]:
    """The English decks as built; the browser checks load the same list (tests/browser.py, decks)."""
    found = {p.stem: p for p in (built_site / "slides").glob("*.html")}
    expected = {Path(path).stem for path in decks()}
    assert expected == set(found), (
        f"missing decks: {sorted(expected - set(found))}, unchecked: {sorted(set(found) - expected)}"
    )
    return found


def test_decks_are_offline_and_fully_rendered(built_decks):
    for name, deck in built_decks.items():
        text = deck.read_text(encoding="utf-8")
        loads = re.findall(r"""<(?:script|link|img)[^>]*(?:src|href)=["']([^"']+)""", text)
        assert loads and not [url for url in loads if re.match(r"(https?:)?//", url)], (name, loads)
        for raw in ("{glue", "{term}", "{cite}", "{ref}", "{eq}", "{prf:", ":::{", "```{", "{solution}", "{dropdown}"):
            assert raw not in text, f"{name}: raw MyST {raw!r} on a slide"
        # a fold cannot be opened in the room: a verdict box shows its grade and bottom line only
        assert "<details" not in text, f"{name}: a dropdown on a slide"


@page_check(kind="deck", viewports=("slide",))
def test_deck_in_a_real_browser(page, view):
    """Every deck opens with no error; no slide is empty or spills out of its 1280 x 720 box;
    every image loads and has alt text; math is typeset; the lecture has at most 40 slides,
    each with speaker notes."""
    name = Path(view.path).stem
    slides = page.evaluate(SLIDE_REPORT)
    problems = [] if page.locator("mjx-container").count() else ["no typeset math"]
    problems += list(page.problems)
    if name == "lecture":
        if len(slides) > MAX_LECTURE_SLIDES:
            problems.append(f"{len(slides)} slides (at most {MAX_LECTURE_SLIDES})")
        problems += [f"slide {s['index'] + 1}: no speaker notes" for s in slides if not s["notes"]]
    elif len(slides) < 5:
        problems.append(f"only {len(slides)} slides")
    for s in slides:
        where = f"slide {s['index'] + 1}"
        if s["spill"] or s["tall"]:
            problems.append(f"{where}: content outside the slide {s['spill']}")
        if s["text"] == 0 and s["images"] == 0:
            problems.append(f"{where}: empty")
        if s["noAlt"] or s["broken"]:
            problems.append(f"{where}: {s['noAlt']} images without alt text, {s['broken']} not loaded")
    return problems


# --- every slide has a title; the lecture's slides are short ------------------------------------

TITLES_AND_WORDS = r"""() => Reveal.getSlides().map((slide, index) => {
    const text = slide.cloneNode(true);
    // prose only: a code cell, its output, a results table and a figure are not the slide's words;
    // a typeset formula counts as one word
    text.querySelectorAll('aside.notes, pre, .cell_code_source, .cell_code_output, table, figure, img')
        .forEach(e => e.remove());
    text.querySelectorAll('mjx-container').forEach(e => e.replaceWith(' x '));
    const words = text.textContent.split(/\s+/).filter(w => /\w/.test(w)).length;
    return {index: index, title: !!slide.querySelector('h1, h2, h3'), words: words};
})"""
MAX_LECTURE_WORDS = 40


@page_check(kind="deck", viewports=("slide",))
def test_every_slide_has_a_title(page, view):
    """Every slide of every deck has a heading, a slide that splits included (deck.js repeats it);
    the lecture's slides, written for the talk, have at most 40 words of prose each."""
    name = Path(view.path).stem
    slides = page.evaluate(TITLES_AND_WORDS)
    problems = [f"slide {s['index'] + 1}: no title" for s in slides if not s["title"]]
    if name == "lecture":
        problems += [
            f"slide {s['index'] + 1}: {s['words']} words (at most {MAX_LECTURE_WORDS})"
            for s in slides
            if s["words"] > MAX_LECTURE_WORDS
        ]
    return problems


# --- every figure a chapter shows is on its deck, in its wide layout, drawn for a slide ------------


def shown_figures(stem: str) -> dict[str, str | None]:
    """The chapter's figures as its page shows them: cell id -> the name of its wide version (or None).
    A figure is a PNG output of a code cell whose output the page shows (not hide-cell, remove-cell or
    hide-output; a folded input, hide-input, still shows the figure)."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from book_slides import NEVER_ON_SLIDES  # noqa: PLC0415  (Sphinx loads it from book/_ext)

    notebook = read(ROOT / "notebooks" / f"{stem}.ipynb")
    glued = {g.name for g in glued_outputs(notebook) if g.is_figure}
    figures: dict[str, str | None] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code" or set(tags(cell)) & NEVER_ON_SLIDES:
            continue
        if any("image/png" in output.get("data", {}) for output in cell.get("outputs", [])):
            name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name", "")
            wide = name.replace("-", "_") + "_wide"
            figures[cell.get("id")] = wide if name and wide in glued else None
    return figures


def test_every_figure_of_a_chapter_is_on_its_deck(built_decks):
    problems = []
    for stem, deck in built_decks.items():
        if stem == "lecture":
            continue
        sections = re.findall(
            r'<section data-cell="[^":]+:([^"]+)">(.*?)</section>', deck.read_text(encoding="utf-8"), re.S
        )
        images = {}
        for cell, body in sections:
            images.setdefault(cell, []).extend(re.findall(r'<img[^>]*\bsrc="([^"]+)"', body))
        for cell, wide in shown_figures(stem).items():
            if wide is None:  # every figure a deck shows is drawn for a slide (CONTRIBUTING.md, "How a page reads")
                problems.append(
                    f"{stem}: the figure of cell {cell} has no `<figure name>_wide` glue, drawn for a slide"
                )
            if not images.get(cell):
                problems.append(f"{stem}: the figure of cell {cell} is on no slide")
            elif wide and not any(src.endswith(f"{wide}.png") for src in images[cell]):
                problems.append(f"{stem}: cell {cell} shows {images[cell]}, not its wide version {wide}")
    lecture = built_decks["lecture"].read_text(encoding="utf-8")
    shown = dict(re.findall(r'<section data-cell="([^"]+)">(.*?)</section>', lecture, re.S))
    for stem in {s.split(":")[0] for s in shown}:
        for cell, wide in shown_figures(stem).items():
            body = shown.get(f"{stem}:{cell}")
            if body is not None and not re.search(rf'src="[^"]*{wide or ""}[^"]*\.png"', body):
                problems.append(f"lecture: the slide of {stem}:{cell} does not show its figure {wide or ''}")
    assert not problems, "\n".join(problems)


# --- the text inside the figures, as a room sees it --------------------------------------------
# Text inside a PNG is not in the DOM. Its rendered size is derived instead: a font of s points,
# drawn at the PNG's DPI, is s * dpi / 72 image pixels tall, and the slide shows the image at
# (rendered width / natural width) CSS pixels per image pixel, at 1280 x 720. A figure drawn for a
# slide (tools.figures.slide_png, the `<figure>_wide` glue of every figure a deck shows) records in
# its PNG the smallest size its drawn text has (``Min-Font-Pt``: tick labels, legend entries,
# annotations, titles), read from the figure itself as it was saved.
MIN_FIGURE_TEXT_PX = 18.0  # the smallest slide text; tools/figures.py derives its slide sizes from it
FIGURES = r"""() => Reveal.getSlides().flatMap((slide, index) => {
    Reveal.slide(index);
    return [...slide.querySelectorAll('img')].map(img => ({index: index, src: img.currentSrc || img.src,
        title: (slide.querySelector('h1, h2, h3') || {textContent: ''}).textContent.trim().slice(0, 50),
        rendered: img.getBoundingClientRect().width, natural: img.naturalWidth}));
})"""


@page_check(kind="deck", viewports=("slide",))
def test_figure_text_is_legible(page, view):
    """The smallest text of every figure on every slide, at 1280 x 720, is at least MIN_FIGURE_TEXT_PX
    CSS pixels tall (from the PNG's recorded smallest font, its DPI and its rendered scale; see above);
    a figure not drawn for a slide fails. The sizes it measured, worst first, are written to
    _build/screenshots/figure-text-<deck>.txt."""
    import urllib.request

    stem = Path(view.path).stem
    problems, measured = [], []
    for figure in page.evaluate(FIGURES):
        name = Path(urllib.request.urlparse(figure["src"]).path).name
        where = f"slide {figure['index'] + 1} ({figure['title']})"
        points, dpi = figure_text(figure["src"])
        if points is None:
            problems.append(f"{where}: {name} is not drawn for a slide (no Min-Font-Pt: tools.figures.slide_png)")
            continue
        px = points * dpi / 72 * figure["rendered"] / figure["natural"]
        measured.append((px, f"{stem}\t{where}\t{name}\t{points:g} pt\t{figure['rendered'] / figure['natural']:.2f}x"))
        if px < MIN_FIGURE_TEXT_PX:
            problems.append(f"{where}: {name}: {points:g}-pt text at {px:.1f} px")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    lines = [f"{line}\t{px:.1f} px" for px, line in sorted(measured)]
    (SCREENSHOTS / f"figure-text-{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return problems


CODE_TEXT = r"""() => Reveal.getSlides().flatMap((slide, index) => {
    Reveal.slide(index);
    const scale = Reveal.getScale();
    return [...slide.querySelectorAll('pre')].filter(pre => pre.textContent.trim()).map(pre => ({
        index: index, title: (slide.querySelector('h1, h2, h3') || {textContent: ''}).textContent.trim().slice(0, 50),
        px: parseFloat(getComputedStyle(pre).fontSize) * scale,
        lines: pre.textContent.replace(/\n$/, '').split('\n').length}));
})"""


@page_check(kind="deck", viewports=("slide",), pages=lambda path: Path(path).stem == "lecture")
def test_the_lectures_code_is_set_for_a_room(page, view):
    """The review found two lecture slides with code at 15 px (slide 4, "Four lines of attention", and
    slide 19, 23 lines of the article's experiment). Every code cell and printed output on the lecture's
    slides is at least MIN_FIGURE_TEXT_PX as a 1280 x 720 window shows it, and a slide shows at most 14
    lines of it (book/lecture.yml's code_lines picks them from a longer cell)."""
    blocks = page.evaluate(CODE_TEXT)
    problems = [] if blocks else ["the lecture shows no code (book/lecture.yml has code: true slides)"]
    for block in blocks:
        where = f"slide {block['index'] + 1} ({block['title']})"
        if block["px"] < MIN_FIGURE_TEXT_PX:
            problems.append(f"{where}: code at {block['px']:.1f} px")
        if block["lines"] > 14:
            problems.append(f"{where}: {block['lines']} lines of code")
    return problems


def test_the_lecture_shows_chapter_6s_slowdown(built_decks):
    """Chapter 6's slowdown, steps to 90 % accuracy against d_k with each arm at its own rate, is a figure of
    the lecture deck (its wide layout), on the slide of the cell that draws it."""
    lecture = built_decks["lecture"].read_text(encoding="utf-8")
    shown = dict(re.findall(r'<section data-cell="([^"]+)">(.*?)</section>', lecture, re.S))
    slide = shown.get("06_the_experiment:ch6-24", "")
    assert re.search(r'<img[^>]+src="[^"]*fig_slowdown_dk_wide\.png"', slide), slide[:300]


def test_the_decks_margin_is_the_slide_styles():
    """tools/figures.py derives its slide sizes at the scale reveal.js shows a slide in a 1280 x 720
    window; that scale follows from deck.js's margin."""
    from tools import figures

    deck = (ROOT / "book" / "_ext" / "slides" / "deck.js").read_text(encoding="utf-8")
    margin = float(re.search(r"margin: printing \? 0 : ([0-9.]+)", deck).group(1))
    assert abs(figures.SLIDE_VIEW_SCALE - 1 / (1 + margin)) < 1e-9
