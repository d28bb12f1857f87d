"""The lecture kit, as the built site ships it: the "For teachers" page in both editions,
two clicks from the landing page, links every deck and PDF, and every link opens; the PDFs
(printed by the build, tools/print_pdf.py) have the pages and sizes they should, and render;
the cheat sheet prints on exactly one page with the book's computed numbers, and the quiz has
at least ten questions, each answered with a computed number."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest

from tests.browser import EDITIONS, SCREENSHOTS
from tools.notebook_format import ROOT, chapter_notebooks, glue_roles

PAGES = ROOT / "book"
PDFS = ("lecture.pdf", "lecture-notes.pdf", "cheatsheet.pdf", "quiz.pdf", "quiz-answers.pdf")
KIT = ("slides/lecture.html", *(f"lecture/{name}" for name in PDFS))
MAX_LECTURE_SLIDES = 40  # as tests/test_slides.py
# a lecture slide's written text, its title included (tests/test_slides.py counts the rendered slide)
MAX_SLIDE_WORDS = 40
# (width, height) of a page in PostScript points: the deck is 1280 x 720 CSS px (16:9), the notes
# version adds a 400 px band; the rest is A4
PAGE_SIZES = {
    "lecture.pdf": (960, 540),
    "lecture-notes.pdf": (960, 840),
    "cheatsheet.pdf": (595.9, 842.9),
    "quiz.pdf": (595.9, 842.9),
    "quiz-answers.pdf": (595.9, 842.9),
}


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href and not re.match(r"[a-z]+:|//|#", href):
            self.hrefs.append(href)


def links(site: Path, page: str) -> set[str]:
    """The pages and files ``page`` (a path in ``site``) links, as paths in ``site``."""
    parser = Links()
    parser.feed((site / page).read_text(encoding="utf-8"))
    return {urldefrag(urljoin(page, href)).url for href in parser.hrefs}


def computed_numbers(text: str) -> list[str]:
    """The values ``text`` quotes from the chapters' notebooks ({glue:text} roles that name their notebook)."""
    return [role.key for role in glue_roles(text) if role.kind == "text" and role.path]


@pytest.fixture(scope="module")
def kit(built_site) -> dict[str, Path]:
    """Each edition's folder of PDFs, as the build printed them (book/_ext/book_slides.py)."""
    folders = {edition: built_site / edition / "lecture" for edition in EDITIONS}
    missing = [
        f"{edition}lecture/{name}"
        for edition, folder in folders.items()
        for name in PDFS
        if not (folder / name).is_file()
    ]
    assert not missing, f"the build printed no {missing}: is Chromium installed (make browser)?"
    return folders


@pytest.mark.parametrize("edition", EDITIONS)
def test_for_teachers_is_two_clicks_from_the_landing_page(built_site, kit, edition):
    landing = f"{edition}book/index.html"  # the site's index.html redirects there
    assert "book/index.html" in (built_site / edition / "index.html").read_text(encoding="utf-8")
    teachers = f"{edition}book/teachers.html"
    one_click = links(built_site, landing)
    assert teachers in one_click, f"{landing} does not link {teachers}"
    pages = [p for p in one_click if p.endswith(".html") and (built_site / p).is_file()]
    two_clicks = set().union(*(links(built_site, p) for p in pages))
    wanted = {f"{edition}{path}" for path in KIT}
    assert wanted <= two_clicks | one_click, f"not within two clicks of {landing}: {sorted(wanted - two_clicks)}"
    linked = links(built_site, teachers)
    assert wanted <= linked, f"{teachers} does not link {sorted(wanted - linked)}"
    decks = {p for p in linked if "/slides/" in f"/{p}"}
    assert len(decks) >= 9, f"{teachers} links {len(decks)} decks: the lecture and one per chapter"
    broken = sorted(p for p in linked if not (built_site / p).is_file())
    assert not broken, f"{teachers} links files the site does not have: {broken}"


def test_the_instructor_guide_links_the_kit(built_site):
    for edition in EDITIONS:
        linked = links(built_site, f"{edition}book/instructor_guide.html")
        assert f"{edition}slides/lecture.html" in linked and f"{edition}book/teachers.html" in linked
    source = (PAGES / "instructor_guide.md").read_text(encoding="utf-8")
    assert "_build/html" not in source, "the guide names a build path instead of linking the deck"
    teachers = (PAGES / "teachers.md").read_text(encoding="utf-8").lower()
    for needed in ("softmax", "backpropagation", "variance"):  # the prerequisites, stated on both pages
        assert needed in source.lower() and needed in teachers, needed


def test_the_chinese_decks_declare_their_language(built_site):
    for deck in sorted((built_site / "zh" / "slides").glob("*.html")):
        assert '<html lang="zh-CN">' in deck.read_text(encoding="utf-8"), deck.name
    for deck in sorted((built_site / "slides").glob("*.html")):
        assert '<html lang="en">' in deck.read_text(encoding="utf-8"), deck.name


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_pdfs_have_their_pages_and_sizes(kit, edition):
    from pypdf import PdfReader

    folder = kit[edition]
    pages = {}
    for name in PDFS:
        path = folder / name
        reader = PdfReader(path)
        pages[name] = len(reader.pages)
        assert 20_000 < path.stat().st_size < 8_000_000, f"{edition}{name}: {path.stat().st_size} bytes"
        for number, page in enumerate(reader.pages, 1):
            size = (float(page.mediabox.width), float(page.mediabox.height))
            assert all(abs(a - b) < 1.5 for a, b in zip(size, PAGE_SIZES[name], strict=True)), (
                f"{name} p. {number}: {size} pt"
            )
    assert 10 <= pages["lecture.pdf"] <= MAX_LECTURE_SLIDES, pages
    # one written slide, one page: a slide too tall for 1280 x 720 is split by the deck (slides/deck.js) and
    # prints as two pages, its continuation under a repeated title
    written = (folder.parent / "slides" / "lecture.html").read_text(encoding="utf-8").count("<section")
    assert pages["lecture.pdf"] == written, f"{edition}lecture.pdf: {pages['lecture.pdf']} pages for {written} slides"
    assert pages["lecture-notes.pdf"] == pages["lecture.pdf"], "one notes page per slide"
    assert pages["cheatsheet.pdf"] == 1, pages
    assert 2 <= pages["quiz.pdf"] <= 6 and 2 <= pages["quiz-answers.pdf"] <= 8, pages


def test_the_students_quiz_has_a_name_line_and_no_teacher_text(kit):
    from pypdf import PdfReader

    for edition, name_word in (("", "Name:"), ("zh/", "姓名:")):
        students = " ".join(p.extract_text() for p in PdfReader(kit[edition] / "quiz.pdf").pages)
        key = " ".join(p.extract_text() for p in PdfReader(kit[edition] / "quiz-answers.pdf").pages)
        assert name_word in students.replace(" ", "").replace("：", ":"), f"{edition}quiz.pdf has no name line"
        html = (kit[edition].parent / "book" / "quiz.html").read_text(encoding="utf-8")
        teacher = re.search(r'<div class="teacher-only[^"]*">\s*<p>(.{30})', html, flags=re.S)
        assert teacher, "the quiz page marks its teacher's note (.teacher-only)"
        opening = re.sub(r"<[^>]+>|\s+", "", teacher.group(1))[:20]
        assert opening not in re.sub(r"\s+", "", students), f"{edition}quiz.pdf prints the teacher's note"
        assert "Contents" not in students and "目录" not in students, "site chrome on the students' quiz"
        assert len(key) > len(students), "the key prints the answers the students' copy leaves blank"


def test_pdf_pages_render(kit):
    """Render pages of every PDF to PNG (poppler's pdftoppm) for a look, in _build/screenshots/lecture/;
    a page that renders blank fails."""
    if shutil.which("pdftoppm") is None:
        reason = "no pdftoppm (Debian: apt-get install poppler-utils; `make browser` installs it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI renders the PDFs: {reason}")
        pytest.skip(reason)
    from PIL import Image

    out = SCREENSHOTS / "lecture"
    out.mkdir(parents=True, exist_ok=True)
    blank = []
    for edition, folder in kit.items():
        for name in PDFS:
            stem = f"{edition.strip('/') or 'en'}-{Path(name).stem}"
            subprocess.run(
                ["pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "4", str(folder / name), str(out / stem)], check=True
            )
            for png in sorted(out.glob(f"{stem}-*.png")):
                low, high = Image.open(png).convert("L").getextrema()
                if high - low < 100:
                    blank.append(png.name)
    assert not blank, f"blank pages: {blank}"


def pasted_values(page: str, built_site) -> list[str]:
    """What the built page shows where its source glues a number."""
    html = (built_site / "book" / f"{page}.html").read_text(encoding="utf-8")
    return re.findall(r'<span class="pasted-text">([^<]+)</span>', html)


def test_cheat_sheet_is_one_page_with_the_computed_numbers(kit, built_site):
    from pypdf import PdfReader

    source = (PAGES / "cheatsheet.md").read_text(encoding="utf-8")
    assert len(computed_numbers(source)) >= 5, "the cheat sheet quotes the book's computed numbers"
    reader = PdfReader(kit[""] / "cheatsheet.pdf")
    assert len(reader.pages) == 1, f"the cheat sheet prints on {len(reader.pages)} pages"
    text = re.sub(r"\s+", "", reader.pages[0].extract_text())
    values = pasted_values("cheatsheet", built_site)
    assert len(values) >= 5
    missing = [v for v in values if re.sub(r"\s+", "", v) not in text]
    assert not missing, f"glued numbers missing from the PDF: {missing}"


def test_quiz_has_ten_questions_answered_with_computed_numbers(kit):
    from pypdf import PdfReader

    source = (PAGES / "quiz.md").read_text(encoding="utf-8")
    answers = re.findall(r"^(`{3,}|:{3,})\{dropdown\}[^\n]*\n(.*?)^\1\s*$", source, flags=re.S | re.M)
    assert len(answers) >= 10, f"{len(answers)} folded answers (at least 10)"
    for _, answer in answers:
        assert computed_numbers(answer), f"an answer without a computed number: {answer[:80]!r}"
    students = " ".join(p.extract_text() for p in PdfReader(kit[""] / "quiz.pdf").pages)
    key = " ".join(p.extract_text() for p in PdfReader(kit[""] / "quiz-answers.pdf").pages)
    assert len(key) > len(students), "the teacher's key prints the answers the students' copy folds"


def slide_words(text: str) -> int:
    """Words of a slide's written text as the room reads them: a formula or a glued value is one word."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$]+\$", " x ", " ".join(glue_role_free(text).split()))
    return len([w for w in text.split() if re.search(r"\w", w)])


def glue_role_free(text: str) -> str:
    return re.sub(r"\{glue:text\}`[^`]+`", " 0 ", text)


def test_the_lecture_is_written_as_slides():
    """book/lecture.yml writes the lecture: every slide has a title and at most 40 words of text
    (title included), every listed cell exists and can be shown, a markdown cell's slide has its own
    text (never a leftover sentence of the book), a figure cell's slide shows its figure; the notes'
    minutes run from 0:00 to 1:30 without a gap or an overlap, in the order the deck shows them; at
    most 40 slides before splitting."""
    import sys

    import yaml

    from tools.notebook_format import is_plumbing, read, tags

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from book_slides import NEVER_ON_SLIDES  # noqa: PLC0415  (Sphinx loads it from book/_ext)

    frame = yaml.safe_load((PAGES / "lecture.yml").read_text(encoding="utf-8"))
    problems, notes = [], [frame["title_notes"], frame["anchor"]["notes"]]
    for where, spec in (("anchor", frame["anchor"]), ("closing", frame["closing"])):
        words = slide_words(" ".join([spec["heading"], *spec.get("points", [])]))
        if words > MAX_SLIDE_WORDS:
            problems.append(f"the {where} slide: {words} words")
    for stem, entries in frame["slides"].items():
        cells = {c.get("id"): c for c in read(ROOT / "notebooks" / f"{stem}.ipynb").cells}
        for entry in entries:
            where = f"{stem}: cell {entry['cell']!r}"
            cell = cells.get(entry["cell"])
            text = entry.get("text", "")
            text = " ".join(text) if isinstance(text, list) else str(text)
            if cell is None:
                problems.append(f"{stem}: no cell {entry['cell']!r}")
                continue
            if set(tags(cell)) & NEVER_ON_SLIDES or (cell.cell_type == "code" and is_plumbing(cell.source)):
                problems.append(f"{where} never becomes a slide")
            if not str(entry.get("title", "")).strip():
                problems.append(f"{where}: no title")
            if cell.cell_type == "markdown" and not text.strip():
                problems.append(f"{where}: a markdown cell's slide needs its own text, not the book's prose")
            words = slide_words(f"{entry.get('title', '')} {text}")
            if words > MAX_SLIDE_WORDS:
                problems.append(f"{where}: {words} words (at most {MAX_SLIDE_WORDS})")
            if not str(entry.get("notes", "")).strip():
                problems.append(f"{where}: no speaker notes")
            notes.append(str(entry.get("notes", "")))
    notes.append(frame["closing"]["notes"])
    stems = [p.stem for p in chapter_notebooks()]
    assert list(frame["slides"]) == [s for s in stems if s in frame["slides"]], "the chapters out of the book's order"
    assert not problems, "\n".join(problems)
    assert len(notes) <= MAX_LECTURE_SLIDES, f"{len(notes)} slides (at most {MAX_LECTURE_SLIDES})"
    spans = [re.match(r"(\d+):(\d\d)-(\d+):(\d\d)\.", n) for n in notes]
    minutes = [(int(m[1]) * 60 + int(m[2]), int(m[3]) * 60 + int(m[4])) for m in spans if m]
    assert minutes[0][0] == 0 and minutes[-1][1] == 90, minutes
    gaps = [(a, b) for a, b in zip(minutes, minutes[1:], strict=False) if a[1] != b[0]]
    assert not gaps, f"the notes' minutes do not chain: {gaps}"
    assert sum(b - a for a, b in minutes) == 90, minutes


EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}[ \t]*([^\n]*)$", re.M)
LEVEL_EN = re.compile(r"\((★{1,3}), (\d+) min\)$")
LEVEL_ZH = re.compile(r"（(★{1,3})，(\d+) 分钟）$")


def test_every_exercise_has_a_difficulty_and_minutes():
    """Every exercise of every chapter names its difficulty (★ to ★★★) and the minutes a student
    needs in its title line, `Title (★★, 15 min)`, and its Chinese title says the same, `（★★，15 分钟）`."""
    from tools.locale import catalog
    from tools.notebook_format import read

    problems, count = [], 0
    for path in chapter_notebooks():
        translated = {m.id: m.string for m in catalog(f"notebooks/{path.stem}") if m.id}
        for cell in read(path).cells:
            for match in EXERCISE.finditer(cell.source if cell.cell_type == "markdown" else ""):
                count += 1
                title = match.group(2).strip()
                english = LEVEL_EN.search(title)
                # the catalog's message of a title is its text: math without its dollars
                zh = translated.get(title) or translated.get(title.replace("$", "")) or ""
                chinese = LEVEL_ZH.search(str(zh))
                if not english:
                    problems.append(f"{path.stem}: {title!r} has no (★…, N min)")
                elif not chinese or chinese.groups() != english.groups():
                    problems.append(f"{path.stem}: the Chinese title of {title!r} is {zh!r}")
    assert count >= 28, f"{count} exercises found"
    assert not problems, "\n".join(problems)


def test_the_lecture_catalog_is_current():
    """The lecture's messages (book/lecture.yml) are exactly those of its catalog, each translated;
    tests/test_locale.py checks the translations keep every role, number and formula."""
    from tools import lecture_catalog

    catalog = {m.id: m for m in lecture_catalog.read() if m.id}
    wanted = lecture_catalog.messages()
    missing = [m[:70] for m in wanted if m not in catalog]
    stale = [m[:70] for m in catalog if m not in wanted]
    assert not missing and not stale, f"run python -m tools.lecture_catalog: new {missing}, stale {stale}"


def test_the_chinese_lecture_is_chinese(built_site):
    """The Chinese deck shows the catalog's titles and notes (its lang is zh-CN: see above)."""
    import yaml

    from tools import lecture_catalog

    table = lecture_catalog.translations()
    frame = yaml.safe_load((PAGES / "lecture.yml").read_text(encoding="utf-8"))
    deck = (built_site / "zh" / "slides" / "lecture.html").read_text(encoding="utf-8")
    headings = {re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<h2>(.*?)</h2>", deck, re.S)}
    for entries in frame["slides"].values():
        for entry in entries:
            chinese = table[lecture_catalog.fold(entry["title"])]
            if "$" not in chinese:  # a title with math is typeset: the plain ones are compared
                assert chinese in headings, f"the Chinese deck lacks the slide {chinese!r}"
    notes = " ".join(re.findall(r'<aside class="notes">(.*?)</aside>', deck, re.S))
    chinese_characters = len(re.findall(r"[\u4e00-\u9fff]", notes))
    assert chinese_characters > 1500, f"the Chinese deck's notes have {chinese_characters} Chinese characters"
