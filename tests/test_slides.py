"""Lecture slides: every chapter's deck and the 90-minute lecture deck, built with the
site (book/_ext/book_slides.py), work offline in a real browser and fit their slides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import SCREENSHOTS, decks, page_check

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
        page.evaluate("Reveal.slide(1)")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "lecture.anchor-slide.png"))
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
