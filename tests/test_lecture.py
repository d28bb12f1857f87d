"""The lecture kit: the cheat sheet prints on exactly one page with the book's computed
numbers, and the quiz has at least ten questions, each answered with a computed number."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tools.notebook_format import ROOT, glue_roles

PAGES = ROOT / "book"


def computed_numbers(text: str) -> list[str]:
    """The values ``text`` quotes from the chapters' notebooks ({glue:text} roles that name their notebook)."""
    return [role.key for role in glue_roles(text) if role.kind == "text" and role.path]


@pytest.fixture(scope="module")
def printed(built_site, browser):
    """`make lecture`'s PDFs, printed from the freshly built site."""
    result = subprocess.run([sys.executable, "-m", "tools.print_pdf"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return ROOT / "_build" / "lecture"


def pasted_values(page: str, built_site) -> list[str]:
    """What the built page shows where its source glues a number."""
    html = (built_site / "book" / f"{page}.html").read_text(encoding="utf-8")
    return re.findall(r'<span class="pasted-text">([^<]+)</span>', html)


def test_cheat_sheet_is_one_page_with_the_computed_numbers(printed, built_site):
    from pypdf import PdfReader

    source = (PAGES / "cheatsheet.md").read_text(encoding="utf-8")
    assert len(computed_numbers(source)) >= 5, "the cheat sheet quotes the book's computed numbers"
    reader = PdfReader(printed / "cheatsheet.pdf")
    assert len(reader.pages) == 1, f"the cheat sheet prints on {len(reader.pages)} pages"
    text = re.sub(r"\s+", "", reader.pages[0].extract_text())
    values = pasted_values("cheatsheet", built_site)
    assert len(values) >= 5
    missing = [v for v in values if re.sub(r"\s+", "", v) not in text]
    assert not missing, f"glued numbers missing from the PDF: {missing}"


def test_quiz_has_ten_questions_answered_with_computed_numbers(printed):
    from pypdf import PdfReader

    source = (PAGES / "quiz.md").read_text(encoding="utf-8")
    answers = re.findall(r"^(`{3,}|:{3,})\{dropdown\}[^\n]*\n(.*?)^\1\s*$", source, flags=re.S | re.M)
    assert len(answers) >= 10, f"{len(answers)} folded answers (at least 10)"
    for _, answer in answers:
        assert computed_numbers(answer), f"an answer without a computed number: {answer[:80]!r}"
    students = " ".join(p.extract_text() for p in PdfReader(printed / "quiz.pdf").pages)
    key = " ".join(p.extract_text() for p in PdfReader(printed / "quiz-answers.pdf").pages)
    assert len(key) > len(students), "the teacher's key prints the answers the students' copy folds"
