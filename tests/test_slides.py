"""Lecture slides: every chapter's deck and the 90-minute lecture deck, built with the
site (book/_ext/book_slides.py), work offline in a real browser and fit their slides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import SCREENSHOTS, load, new_context
from tools.notebook_format import chapter_notebooks

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
def decks(built_site) -> dict[str, Path]:
    slides = built_site / "slides"
    found = {p.stem: p for p in slides.glob("*.html")}
    expected = {p.stem for p in chapter_notebooks()} | {"lecture"}
    assert expected <= set(found), f"missing decks: {sorted(expected - set(found))}"
    return found


def test_decks_are_offline_and_fully_rendered(decks):
    for name, deck in decks.items():
        text = deck.read_text(encoding="utf-8")
        loads = re.findall(r"""<(?:script|link|img)[^>]*(?:src|href)=["']([^"']+)""", text)
        assert loads and not [url for url in loads if re.match(r"(https?:)?//", url)], (name, loads)
        for raw in ("{glue", "{term}", "{cite}", "{ref}", "{eq}", "{prf:", ":::{", "```{", "{solution}", "{dropdown}"):
            assert raw not in text, f"{name}: raw MyST {raw!r} on a slide"


def test_decks_in_a_real_browser(browser, site_url, decks):
    """Every deck opens with no error; no slide is empty or spills out of its 1280 x 720 box;
    every image loads and has alt text; math is typeset; the lecture has at most 40 slides,
    each with speaker notes."""
    context = new_context(browser, "desktop")
    problems = []
    for name, deck in sorted(decks.items()):
        page = load(context, f"{site_url}/slides/{deck.name}")
        page.set_viewport_size({"width": 1280, "height": 720})
        page.wait_for_function("window.Reveal && Reveal.isReady && Reveal.isReady()", timeout=60000)
        slides = page.evaluate(SLIDE_REPORT)
        if page.locator("mjx-container").count() == 0:
            problems.append(f"{name}: no typeset math")
        problems += [f"{name}: {p}" for p in page.problems]
        if name == "lecture":
            page.evaluate("Reveal.slide(1)")
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "lecture.anchor-slide.png"))
            if len(slides) > MAX_LECTURE_SLIDES:
                problems.append(f"lecture: {len(slides)} slides (at most {MAX_LECTURE_SLIDES})")
            problems += [f"lecture slide {s['index'] + 1}: no speaker notes" for s in slides if not s["notes"]]
        elif len(slides) < 5:
            problems.append(f"{name}: only {len(slides)} slides")
        for s in slides:
            where = f"{name} slide {s['index'] + 1}"
            if s["spill"] or s["tall"]:
                problems.append(f"{where}: content outside the slide {s['spill']}")
            if s["text"] == 0 and s["images"] == 0:
                problems.append(f"{where}: empty")
            if s["noAlt"] or s["broken"]:
                problems.append(f"{where}: {s['noAlt']} images without alt text, {s['broken']} not loaded")
        page.close()
    context.close()
    assert not problems, "\n".join(problems)
