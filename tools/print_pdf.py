"""Print pages of the built site to PDF with headless Chromium (make lecture).

    python -m tools.print_pdf          # the cheat sheet and the quiz, into _build/lecture/

The pages carry their own print styles (book/_assets/book.css, ``@media print``):
the theme's navigation is hidden and the cheat sheet fits one A4 page. The quiz
is printed twice: for students with the answers folded, and as the teacher's key
with every answer open.
"""

from __future__ import annotations

import sys

from tools.browser import CHROMIUM_FLAGS, chromium, serve, settle
from tools.notebook_format import ROOT

HTML = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "lecture"
# (page of the site, PDF, open every folded answer?)
PRINTS = [
    ("book/cheatsheet.html", "cheatsheet.pdf", False),
    ("book/quiz.html", "quiz.pdf", False),
    ("book/quiz.html", "quiz-answers.pdf", True),
]


def main() -> int:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    if executable is None:
        print("print_pdf: no chromium on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with serve(HTML) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        for page_path, pdf, open_answers in PRINTS:
            if not (HTML / page_path).is_file():
                print(f"print_pdf: {page_path} is not built", file=sys.stderr)
                return 1
            page = browser.new_page()
            page.goto(f"{url}/{page_path}", wait_until="load")
            settle(page)  # math typeset, fonts loaded, the page's scripts done (tools/browser.py)
            if open_answers:
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            page.emulate_media(media="print")
            page.evaluate("document.fonts.ready.then(() => true)")  # the print styles may use other faces
            page.pdf(
                path=str(OUT / pdf),
                format="A4",
                print_background=True,
                margin={"top": "12mm", "bottom": "12mm", "left": "12mm", "right": "12mm"},
            )
            page.close()
            print(f"print_pdf: {OUT / pdf}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
