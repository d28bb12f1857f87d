"""Lecture slides: every chapter has slide metadata, fits on slides, and exports
to reveal.js slides that work offline in a real browser."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import serve

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_slide_metadata_is_set_and_code_cells_fit_a_slide():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "slides.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, f"run `python tools/slides.py --write`:\n{result.stdout}"


@pytest.fixture(scope="module")
def slides(tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("slides")
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "build_slides.py"), str(output), *map(str, NOTEBOOKS)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    return output


def test_every_chapter_exports_to_slides(slides):
    for notebook in NOTEBOOKS:
        html = (slides / f"{notebook.stem}.slides.html").read_text(encoding="utf-8")
        assert html.count("<section") >= 5, notebook.name
        loads = re.findall(r"""<(?:script|link)[^>]*(?:src|href)=["']([^"']+)""", html)
        assert loads and not [url for url in loads if re.match(r"(https?:)?//", url)], loads
        # MyST is rewritten for nbconvert: no raw roles, directives or unpasted glue on a slide
        for raw in ("{glue:", "{term}", "{cite}", "{ref}", "{prf:", ":::{", "```{", "{solution}"):
            assert raw not in html, f"{notebook.name}: raw MyST {raw!r} on a slide"


def test_slides_in_a_real_browser(browser, slides):
    problems = []
    with serve(slides) as url:
        for notebook in NOTEBOOKS:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.route(re.compile(r"^(?!http://127\.0\.0\.1:).*"), lambda route: route.abort())
            failed, errors = [], []
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{url}/{notebook.stem}.slides.html", wait_until="load")
            page.wait_for_function("window.Reveal && Reveal.isReady() && window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.evaluate("MathJax.startup.promise")
            total = page.evaluate("Reveal.getTotalSlides()")
            typeset = page.locator("mjx-container").count()
            if failed or errors or total < 5 or typeset == 0:
                problems.append(f"{notebook.name}: failed {failed}, errors {errors}, {total} slides, {typeset} formulas")
            (ROOT / "_build" / "screenshots").mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ROOT / "_build" / "screenshots" / f"{notebook.stem}.slides.png"))
            page.close()
    assert not problems, "\n".join(problems)
