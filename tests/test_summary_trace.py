"""Every summary sentence is traced to its evidence (CONTRIBUTING.md, "Adding a chapter").

A *summary surface* is a place a reader takes a result from without reading the chapter: the
landing page's five-line answer, the cheat sheet, the quiz answers, the instructor guide's
misconceptions, each chapter's key takeaways and the lecture's speaker notes. Each *unit* of a
surface (a bullet, a numbered item, a quiz answer, a slide's notes) must

1. state no number by hand: a measured number is glued (``{glue:text}`key```, cross-page
   ``{glue:text}`../notebooks/NN_x.ipynb::key```); a setting stays in math (``$d_k = 64$``) or
   names its unit (``128 keys``, ``300 steps``);
2. name only claims and labels that exist: ``{ref}`C3.2 <claim-c3-2>``` for a claim of the ledger
   (the text names the same claim), ``{numref}`§%s <sec-label>``` for a section of a chapter;
3. end with such a trace: its last sentence names the claim or section that backs it.

Every chapter in ``_toc.yml`` is checked: there is no list of chapters to keep.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import yaml

from tools import claims
from tools.notebook_format import ROLE, ROOT, chapter_notebooks, count_words, read

BOOK = ROOT / "book"
TRACE = re.compile(r"\{ref\}`(C\d\.\d+) <(claim-c\d-\d+)>`|\{numref\}`§%s <([\w-]+)>`")
REFERENCE = re.compile(r"\{(?:ref|numref|doc|eq)\}`(?:[^`<]*<)?([^`<>]+?)>?`")
MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$", re.S)
CODE = re.compile(r"`[^`]+`")
BARE_CLAIM = re.compile(r"\bC(\d)\.(\d+)\b")
# Numbers a summary may write by hand: settings with their unit, names and ordinals, never a measurement.
SETTINGS = re.compile(
    "|".join(
        [
            r"\b\d+(?:\.\d+)? (?:keys?|seeds?|steps?|pairs?|heads?|tokens?|queries|rows|minutes|questions)\b",
            r"\b\d+-pair\b",
            r"\b\d+(?:\.\d+)? times (?:that|the) (?:rate|learning rate)\b",
            r"\b\d+%? accuracy\b",
            r"\b(?:[Cc]hapters?|[Qq]uestions?) \d+(?:[–-]\d+)?\b",
            r"\b(?:b?float(?:16|32|64)|GPT-2|T5|PyTorch 2\.\d+|1/√dₖ|√dₖ|C\d\.\d+)",
            r"\(theory 8\)",
            r"\b\d+:\d+\b",
            r"\bgaps? of \d+(?:\.\d+)?",
            # a setting's value: a width, a key count, a unit variance; a measured number never lands on these
            r"(?<![\d.])(?:0|1|2|10|16|32|64|128|256|512|768|1024|1600|4096|16384)(?![\d%]|\.\d)",
        ]
    )
)
QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")  # the article's own words and numbers, quoted, are not the book's results
DIGIT = re.compile(r"\d")


def labels() -> set[str]:
    """Every label a page may point at: MyST targets, and the names of figures, equations and exercises."""
    found = set()
    texts = [p.read_text(encoding="utf-8") for p in BOOK.glob("*.md")]
    for path in chapter_notebooks():
        texts += [c.source for c in read(path).cells if c.cell_type == "markdown"]
        texts += [str(c.metadata.get("mystnb", "")) for c in read(path).cells]
    for text in texts:
        found |= set(re.findall(r"^\(([\w-]+)\)=\s*$", text, re.M))
        found |= set(re.findall(r":(?:label|name):\s*([\w-]+)", text))
        found |= set(re.findall(r"\$\$\s*\(([\w-]+)\)", text))
        found |= set(re.findall(r"'name': '([\w-]+)'", text))
    found |= {p.stem for p in BOOK.glob("*.md")} | {f"../notebooks/{p.stem}" for p in chapter_notebooks()}
    found |= {p.stem for p in chapter_notebooks()}
    return found


# ---------------------------------------------------------------------------------------- the surfaces


def list_items(text: str) -> list[str]:
    """The items of the markdown lists in ``text`` (``-``, ``1.``), each joined into one line."""
    items, current = [], None
    for line in text.splitlines():
        if re.match(r"^\s{0,3}(?:[-*]|\d+\.)\s+\S", line):
            if current is not None:
                items.append(current)
            current = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", line)
        elif current is not None and line.startswith("  ") and line.strip():
            current += " " + line.strip()
        elif current is not None and not line.strip():
            items.append(current)
            current = None
    if current is not None:
        items.append(current)
    return items


def section(text: str, heading: str) -> str:
    """The text under a ``## heading`` up to the next heading of that level or above."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^#{{1,2}} |\Z)", text, re.M | re.S)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def landing_answer() -> list[str]:
    return list_items(section((BOOK / "index.md").read_text(encoding="utf-8"), "The answer in five lines"))


def visible_words(text: str) -> int:
    """Words as a reader sees them: a glued value is one number, a reference its one label (C2.1, §3.4)."""
    text = re.sub(r"\{glue(?::\w+)?\}`[^`]*`", "0.5", text)
    text = re.sub(r"\{(?:ref|numref|doc)\}`[^`]*`", "ref", text)
    return count_words(text)


def test_the_landing_answer_is_five_linked_sentences_within_120_words():
    """Issue: the landing page's answer is five lines, one sentence each, at most 120 words in all, each linking
    the section or claim that backs it (fails if a line loses its link, or the lines grow past 120 words)."""
    lines = landing_answer()
    assert len(lines) == 5
    assert all(re.search(r"\{(?:ref|numref)\}`", line) for line in lines), "every line links its evidence"
    assert all(
        len(re.findall(r"[.!?](?:\s|$)", re.sub(r"\$[^$]*\$|`[^`]*`", "x", line.strip()))) <= 1 for line in lines
    )
    assert sum(visible_words(line) for line in lines) <= 120


def cheat_sheet() -> list[str]:
    text = (BOOK / "cheatsheet.md").read_text(encoding="utf-8")
    body = text[text.index(":::{container} cheatsheet") : text.index("**The diagnostic call**")]
    body = re.sub(r"\$\$.*?\$\$", "", body, flags=re.S)
    items = [item.replace("[ ] ", "") for item in list_items(body)]
    paragraphs = [p.strip() for p in body.split("\n\n")]
    headings = re.compile(r"^(?:[-*]|\d+\.|:::|\*\*[^*]+\*\*$|\*\*The formula\.\*\*)")
    return items + [p for p in paragraphs if p and not headings.match(p)]


def quiz_answers() -> list[str]:
    text = (BOOK / "quiz.md").read_text(encoding="utf-8")
    return [" ".join(a.split()) for a in re.findall(r"```\{dropdown\} Answer\n(.*?)\n```", text, re.S)]


def guide_misconceptions() -> list[str]:
    text = (BOOK / "instructor_guide.md").read_text(encoding="utf-8")
    return list_items(section(text, "Common misconceptions, and the measurement that answers each"))


def takeaways(stem: str) -> list[str]:
    notebook = read(ROOT / "notebooks" / f"{stem}.ipynb")
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return list_items(section(text, "Key takeaways"))


def speaker_notes(stem: str) -> list[str]:
    """The lecture's notes on the slides of one chapter (book/lecture.yml, which the deck builder reads)."""
    selection = yaml.safe_load((BOOK / "lecture.yml").read_text(encoding="utf-8")).get("slides", {})
    return [" ".join(str(entry["notes"]).split()) for entry in selection.get(stem, [])]


STEMS = [p.stem for p in chapter_notebooks()]
# the chapters the lecture shows slides of (a chapter without slides has no notes to check)
LECTURE_STEMS = [s for s in STEMS if s in yaml.safe_load((BOOK / "lecture.yml").read_text(encoding="utf-8"))["slides"]]
SURFACES = {
    "the landing page's five-line answer": landing_answer,
    "the cheat sheet": cheat_sheet,
    "the quiz answers": quiz_answers,
    "the instructor guide's misconceptions": guide_misconceptions,
    **{f"the key takeaways of {stem}": (lambda s=stem: takeaways(s)) for stem in STEMS},
    **{f"the speaker notes of {stem}": (lambda s=stem: speaker_notes(s)) for stem in LECTURE_STEMS},
}


# ---------------------------------------------------------------------------------------- the checks


def sentences(unit: str) -> list[str]:
    """A unit split into sentences, not inside roles or math."""
    masked = ROLE.sub(lambda m: "R" * len(m.group(0)), MATH.sub(lambda m: "M" * len(m.group(0)), unit))
    cuts = [m.end() for m in re.finditer(r"[.!?](?:\)|”|\")*\s+(?=[A-Z*“\"(`$])", masked)]
    return [unit[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(unit)], strict=True) if unit[a:b].strip()]


def problems(unit: str, ledger: dict[str, claims.Entry], known: set[str]) -> list[str]:
    found = []
    visible = CODE.sub(" ", MATH.sub(" ", ROLE.sub(" ", unit)))
    visible = SETTINGS.sub(" ", QUOTED.sub(" ", visible))
    if DIGIT.search(visible):
        numbers = re.findall(r"\S*\d\S*", visible)
        found.append(f"a number without glue: {numbers}")
    for match in TRACE.finditer(unit):
        claim_id, label, section_label = match.groups()
        if claim_id and (claim_id not in ledger or claims.anchor(claim_id) != label):
            found.append(f"{match.group(0)}: no such claim, or the text names another")
        if section_label and section_label not in known:
            found.append(f"{match.group(0)}: no such label")
    for match in REFERENCE.finditer(unit):
        if match.group(1) not in known:
            found.append(f"{match.group(0)}: no such label")
    for match in BARE_CLAIM.finditer(ROLE.sub(" ", unit)):
        if match.group(0) not in ledger:
            found.append(f"{match.group(0)}: no such claim")
    last = sentences(unit)[-1] if unit.strip() else ""
    if not TRACE.search(last):
        found.append("no trace at its end ({ref}`Cn.m <claim-cn-m>` or {numref}`§%s <label>`)")
    return found


def surface_problems(name: str) -> Iterator[str]:
    ledger, known = claims.load_ledger(), labels()
    units = SURFACES[name]()
    assert units, f"{name}: found nothing to check"
    for unit in units:
        for problem in problems(unit, ledger, known):
            yield f"{unit[:70]!r}: {problem}"


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_summary_surface_is_traced(name):
    found = list(surface_problems(name))
    assert not found, f"{name}:\n" + "\n".join(found)


def test_the_checks_catch_what_they_should():
    ledger, known = claims.load_ledger(), labels()
    glued = "{glue:text}`../notebooks/01_where_the_scale_sits.ipynb::std_raw_64:s`"
    good = f"At $d_k = 64$ the spread is {glued} ({{ref}}`C2.1 <claim-c2-1>`)."

    def caught(unit: str, what: str) -> bool:
        return any(what in problem for problem in problems(unit, ledger, known))

    assert problems(good, ledger, known) == []
    by_section = good.replace("{ref}`C2.1 <claim-c2-1>`", "{numref}`§%s <sec-ch2-monte-carlo>`")
    assert problems(by_section, ledger, known) == []
    assert caught(good.replace(glued, "7.99"), "without glue")
    assert caught(good.replace("C2.1 <claim-c2-1>", "C2.9 <claim-c2-9>"), "no such claim")
    assert caught(good.replace("C2.1 <claim-c2-1>", "C2.1 <claim-c2-2>"), "no such claim")
    assert caught(good.replace("{ref}`C2.1 <claim-c2-1>`", "{numref}`§%s <sec-nowhere>`"), "no such label")
    assert caught(good.replace(" ({ref}`C2.1 <claim-c2-1>`)", ""), "no trace")
    assert caught(good + " It also holds in C9.9.", "no such claim")
