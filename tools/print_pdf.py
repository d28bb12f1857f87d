"""The lecture kit's PDFs, printed from the built site with headless Chromium.

    python -m tools.print_pdf                 # into _build/html/lecture/ (and zh/lecture/ if built)
    python -m tools.print_pdf _build/zh/_build/html

``make book`` needs no separate step: each edition's build ends by calling ``print_kit`` on
its own output (book/_ext/book_slides.py), so the PDFs ship in the site beside the decks, in
``lecture/`` (the names are ``book_slides.PDFS``; the "For teachers" page links them):

- ``lecture.pdf``: the 90-minute deck, one 1280 x 720 (16:9) slide a page (reveal.js's
  print-pdf mode, ``slides/deck.js``);
- ``lecture-notes.pdf``: the same slides, each above a band with its speaker notes;
- ``cheatsheet.pdf``: the cheat sheet on one A4 page, its checklist as printed boxes;
- ``quiz.pdf``: the quiz for students: a name line, the questions, room under each for the
  answer; no site chrome and nothing meant for the teacher (``.teacher-only``);
- ``quiz-answers.pdf``: the key, every answer open and none split across two pages.

Everything is loaded from a loopback server of the built site: nothing leaves the machine.
Without Chromium the PDFs cannot be made: ``print_kit`` raises ``NoChromium`` and the build
says so and goes on (CI, with ``CI`` set, fails instead: tests/test_lecture.py needs them).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tools.browser import CHROMIUM_FLAGS, chromium, serve, settle
from tools.notebook_format import ROOT

HTML = ROOT / "_build" / "html"
A4 = {"format": "A4", "margin": {"top": "14mm", "bottom": "14mm", "left": "14mm", "right": "14mm"}}
# the part of an A4 page inside those margins, in CSS px (96 per inch): pages are laid out at it
A4_CONTENT = {"width": round((210 - 28) / 25.4 * 96), "height": round((297 - 28) / 25.4 * 96)}

# Print styles of the kit's pages, added to the page only while it is printed (the site's own
# print rules, book/_assets/book.css, already hide the theme's navigation).
PRINT_CSS = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer, .bd-footer-content, .bd-footer-article,
.prev-next-area, .header-article, .bd-header-article, .headerlink, #pst-back-to-top, .skip-link,
#jb-print-toc,
.bd-toc, .sidebar-toggle, .learner-links, .language-switch { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-article { max-width: none !important; width: 100% !important;
  margin: 0 !important; padding: 0 !important; }
body { font-size: 11pt; }
#jb-print-docs-body h1, article h1 {
  font-size: 18pt !important; text-align: left !important; margin: 0 0 0.5em !important; }
article h2, .bd-article h2 { font-size: 13pt !important; margin: 0.8em 0 0.3em !important; }
"""
# The cheat sheet: MyST writes a checklist item as "[ ]" text; print a box instead, and let the
# sheet fill its page.
CHEATSHEET_JS = """() => {
    for (const li of document.querySelectorAll('.cheatsheet li')) {
        const first = li.querySelector('p') || li;
        const node = [...first.childNodes].find(n => n.nodeType === 3 && n.textContent.trim());
        if (node && /^\\s*\\[ \\]\\s*/.test(node.textContent)) {
            node.textContent = node.textContent.replace(/^\\s*\\[ \\]\\s*/, '');
            li.classList.add('kit-check');
        }
    }
}"""
CHEATSHEET_CSS = """
.cheatsheet ul:has(> li.kit-check) { list-style: none; padding-left: 0.2em; }
li.kit-check { position: relative; padding-left: 1.6em; }
li.kit-check::before { content: ""; position: absolute; left: 0; top: 0.2em; width: 0.95em; height: 0.95em;
  border: 1.5px solid #222; border-radius: 2px; }
.cheatsheet { font-size: var(--kit-size, 10.5pt); line-height: 1.35; }
.cheatsheet p, .cheatsheet li { margin-bottom: 0.35em; }
h1 { font-size: 17pt; margin: 0 0 0.4em; }
"""
NAME_LINE = {"en": ("Name", "Date"), "zh": ("姓名", "日期")}
QUIZ_STUDENT_JS = """([name, date]) => {
    document.querySelectorAll('.teacher-only').forEach(e => e.remove());
    const title = document.querySelector('#jb-print-docs-body h1') || document.querySelector('article h1');
    const line = document.createElement('div');
    line.className = 'kit-name-line';
    line.innerHTML = `<span>${name}:</span><span class="kit-blank wide"></span>`
        + `<span>${date}:</span><span class="kit-blank"></span>`;
    title.after(line);
    for (const d of document.querySelectorAll('article details')) {
        const space = document.createElement('div');
        space.className = 'kit-answer-space';
        d.replaceWith(space);
    }
}"""
QUIZ_STUDENT_CSS = """
.kit-name-line { display: flex; gap: 0.6em; align-items: flex-end; margin: 0.6em 0 1.2em; font-size: 12pt; }
.kit-blank { border-bottom: 1px solid #222; width: 8em; height: 1.2em; }
.kit-blank.wide { width: 22em; }
.kit-answer-space { height: 5.2em; margin: 0.3em 0 0.9em;
  background: repeating-linear-gradient(to bottom, transparent 0, transparent 1.7em,
                                        #bbb 1.7em, #bbb calc(1.7em + 1px)); }
article p:has(+ .kit-answer-space) { break-after: avoid; }
.kit-answer-space { break-before: avoid; break-inside: avoid; }
"""
QUIZ_KEY_JS = """() => { document.querySelectorAll('article details').forEach(d => d.open = true); }"""
QUIZ_KEY_CSS = """
article details { break-inside: avoid; }
article p:has(+ details) { break-after: avoid; }
details summary .sd-summary-state-marker { display: none; }
"""


class NoChromium(RuntimeError):
    pass


def fit_one_page(page, path: Path) -> float:
    """Print the cheat sheet at the largest text size (13 pt down to 8 pt) that keeps it on one
    page, measured on the printed PDF itself; return that size."""
    from pypdf import PdfReader

    for tenths in range(130, 79, -5):
        size = tenths / 10
        page.evaluate(f"document.querySelector('.cheatsheet').style.setProperty('--kit-size', '{size}pt')")
        page.pdf(path=str(path), print_background=True, **A4)
        if len(PdfReader(path).pages) == 1:
            return size
    return size  # the test (tests/test_lecture.py) fails on a second page


def print_kit(site: Path, log=print) -> list[Path]:
    """Print the kit's PDFs from the built ``site`` into ``site/lecture/``; return their paths."""
    from playwright.sync_api import sync_playwright

    executable = chromium()
    if executable is None:
        raise NoChromium("no chromium on PATH (Debian: apt-get install chromium; `make browser`)")
    out = site / "lecture"
    out.mkdir(parents=True, exist_ok=True)
    declared = re.search(r'<html lang="([^"]+)"', (site / "book" / "index.html").read_text(encoding="utf-8"))
    lang = "zh" if declared and declared.group(1).startswith("zh") else "en"
    written = []
    with serve(site) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            for query, name in (("?print-pdf", "lecture.pdf"), ("?print-pdf&notes", "lecture-notes.pdf")):
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"{url}/slides/lecture.html{query}", wait_until="load")
                page.wait_for_function("document.documentElement.dataset.deckPrint === 'ready'", timeout=120_000)
                page.pdf(path=str(out / name), print_background=True, prefer_css_page_size=True)
                page.close()
                written.append(out / name)

            page = browser.new_page(viewport=A4_CONTENT)
            page.goto(f"{url}/book/cheatsheet.html", wait_until="load")
            settle(page)
            page.emulate_media(media="print")
            page.add_style_tag(content=PRINT_CSS + CHEATSHEET_CSS)
            page.evaluate(CHEATSHEET_JS)
            size = fit_one_page(page, out / "cheatsheet.pdf")
            page.close()
            written.append(out / "cheatsheet.pdf")
            log(f"print_pdf: the cheat sheet at {size} pt")

            for name, script, css, args in (
                ("quiz.pdf", QUIZ_STUDENT_JS, QUIZ_STUDENT_CSS, list(NAME_LINE[lang])),
                ("quiz-answers.pdf", QUIZ_KEY_JS, QUIZ_KEY_CSS, None),
            ):
                page = browser.new_page(viewport=A4_CONTENT)
                page.goto(f"{url}/book/quiz.html", wait_until="load")
                settle(page)
                page.emulate_media(media="print")
                page.add_style_tag(content=PRINT_CSS + css)
                page.evaluate(script, args) if args else page.evaluate(script)
                page.pdf(path=str(out / name), print_background=True, **A4)
                page.close()
                written.append(out / name)
        finally:
            browser.close()
    for path in written:
        log(f"print_pdf: {path}")
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    sites = [Path(a) for a in args] or [s for s in (HTML, HTML / "zh") if (s / "index.html").is_file()]
    for site in sites:
        if not (site / "slides" / "lecture.html").is_file():
            print(f"print_pdf: {site} has no built lecture deck (make book)", file=sys.stderr)
            return 1
        try:
            print_kit(site)
        except NoChromium as error:
            print(f"print_pdf: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
