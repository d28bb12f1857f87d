"""The claims ledger: ``book/claims.yml`` read, checked, graded by one rubric and rendered.

``book/claims.yml`` is the one place where the book grades a claim of the source article.
This module reads it, checks its shape (a clear ``ValueError`` naming the claim and the
field), grades each part from the facts it records (the rubric, :func:`part_grade`) and each claim from its
parts (:func:`overall_verdict`): the only code that grades. It writes what is derived from it:

- the **verdict box** of each claim, in the chapter that tests it (:func:`verdict_box`);
- the **ledger page** ``book/claims.md`` (:func:`ledger_page`): the rubric, a table of all
  claims, and one entry per claim, labelled ``claim-c3-2`` for ``C3.2``;
- the **counts** on the landing page, between two markers in ``book/index.md``;
- the **Chinese messages that are not translations** (:func:`derived_messages`): where the
  English edition shows the book's translation of the article, the Chinese edition shows
  the article's own sentence (原文), and the boxes' frames (titles, part heads, counts) are
  filled from the same data. ``tools/locale.py`` writes them into the catalogs.

``tools/tidy.py`` (``make tidy``) calls this module; the tests call it too.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from tools.notebook_format import GLUE_ROLE, parse_glue_role

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "book" / "claims.yml"
LEDGER_PAGE = ROOT / "book" / "claims.md"
LANDING_PAGE = ROOT / "book" / "index.md"

# The four grades, in the order the pages list them, with the Chinese edition's words.
VERDICTS = {
    "confirmed": "成立",
    "half right": "对了一半",
    "corrected": "需要更正",
    "not tested": "未检验",
}
NOT_TESTED = "not tested"
PREMISE = "premise"
CLAIM_FIELDS = {
    "article": True,
    "article_section": True,
    "translation": True,
    "gist": True,
    "scope": True,
    "parts": False,
    "verdict": False,
    "reason": True,
    "chapter": True,
    "section": True,
    "facts": False,
}
PART_FIELDS = {
    "article": True,
    "translation": True,
    "verdict": True,
    "facts": True,
    "reason": True,
    "role": False,
    "same_as": False,
}
# The facts a grade is read from (the rubric, `part_grade`): each with the values it may take. `tested`: whether the
# book measures or reads anything that bears on the part at its own scope (the widths, keys, optimizer, task or source
# it speaks of); `direction`: whether what it says happens holds there, under every condition tested, some or none;
# `size`: whether the numbers or magnitudes it states hold (none: it states none); `reason`: whether the cause or
# mechanism it gives holds (none: it gives none). A part that is not tested has `untested` for the other three.
FACTS = {
    "tested": (True, False),
    "direction": ("holds", "partly", "fails", "untested"),
    "size": ("holds", "partly", "fails", "none", "untested"),
    "reason": ("holds", "partly", "fails", "none", "untested"),
}
UNTESTED = "untested"
CLAIM_ID = re.compile(r"C([1-7])\.(\d+)")
ELLIPSIS = {"zh": "……", "en": "…"}
SECTIONS = {
    "1": "Where the scale sits",
    "2": "Why dot products grow with dₖ",
    "3": "Without the scale: softmax saturation",
    "4": "What dividing by √dₖ does",
    "5": "Why √dₖ, and not dₖ or 2√dₖ",
    "6": "The experiment",
    "7": "Questions and pitfalls",
}
COUNTS_BEGIN = "<!-- claims-counts: written by tools/tidy.py from book/claims.yml -->"
COUNTS_END = "<!-- /claims-counts -->"

Entry = dict[str, Any]


# ---------------------------------------------------------------------------------------- reading


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML keeps the last of two equal keys without a word; in the ledger the first one is then dead text."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        repeated = sorted({str(k) for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"line {node.start_mark.line + 1}: key {', '.join(repeated)} given twice")
        return super().construct_mapping(node, deep=deep)


def load_ledger(path: Path = LEDGER) -> dict[str, Entry]:
    """Every claim, checked: ``{"C1.1": {...}, ...}`` in the file's order."""
    ledger = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    if not isinstance(ledger, dict):
        raise ValueError(f"{path.name}: expected a mapping of claim IDs")
    for claim_id, entry in ledger.items():
        check_entry(claim_id, entry)
    return ledger


def _require(where: str, entry: Any, fields: dict[str, bool]) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping of fields")
    unknown = sorted(set(entry) - set(fields))
    missing = sorted(f for f, required in fields.items() if required and f not in entry)
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {unknown}, missing fields {missing}")
    for field, value in entry.items():
        if field not in ("parts", "facts") and not (isinstance(value, str) and value.strip()):
            raise ValueError(f"{where}: field {field!r} must be a non-empty string")
        if isinstance(value, str) and "\n" in value.strip():
            raise ValueError(f"{where}: field {field!r} must be one paragraph (use >- in YAML)")


def check_facts(where: str, facts: Any, verdict: Any) -> None:
    """The facts of a part (or of a claim of one assertion) are complete and give the grade it states."""
    if not isinstance(facts, dict) or set(facts) != set(FACTS):
        raise ValueError(f"{where}: `facts` names each of {list(FACTS)} once, e.g. {FACTS_EXAMPLE}")
    for fact, allowed in FACTS.items():
        if facts[fact] not in allowed:
            raise ValueError(f"{where}: fact {fact!r} is {facts[fact]!r}, not one of {list(allowed)}")
    if (facts["tested"] is False) != all(facts[f] == UNTESTED for f in FACTS if f != "tested"):
        raise ValueError(f"{where}: a part is untested in direction, size and reason exactly when `tested: false`")
    if verdict != part_grade(facts):
        raise ValueError(f"{where}: its facts give {part_grade(facts)!r}, not {verdict!r} (the rubric: part_grade)")


def check_entry(claim_id: str, entry: Entry) -> None:
    """The shape of one claim; a ``ValueError`` that names the claim and the field otherwise."""
    if not CLAIM_ID.fullmatch(str(claim_id)):
        raise ValueError(f"{claim_id!r}: a claim ID reads C<section>.<n>, e.g. C3.2")
    _require(claim_id, entry, CLAIM_FIELDS)
    parts = entry.get("parts")
    if parts is None:
        if entry.get("verdict") not in VERDICTS:
            raise ValueError(f"{claim_id}: verdict {entry.get('verdict')!r} is not one of {list(VERDICTS)}")
        check_facts(claim_id, entry.get("facts"), entry["verdict"])
        return
    if "verdict" in entry or "facts" in entry:
        raise ValueError(f"{claim_id}: a claim with parts gets its verdict from them (remove `verdict`, `facts`)")
    if not isinstance(parts, list) or len(parts) < 2:
        raise ValueError(f"{claim_id}: `parts` lists two or more parts (one assertion needs no parts)")
    for index, part in enumerate(parts):
        where = f"{claim_id} ({part_letter(index)})"
        _require(where, part, PART_FIELDS)
        if part["verdict"] not in VERDICTS:
            raise ValueError(f"{where}: verdict {part['verdict']!r} is not one of {list(VERDICTS)}")
        if part.get("role", PREMISE) != PREMISE:
            raise ValueError(f"{where}: role is {PREMISE!r} or absent (a point of the claim)")
        if (part["verdict"] == NOT_TESTED) != part["reason"].startswith("Not tested here"):
            raise ValueError(f"{where}: a part is 'not tested' exactly when its reason starts 'Not tested here'")
        check_facts(where, part["facts"], part["verdict"])
        for language, field in (("zh", "article"), ("en", "translation")):
            if not is_excerpt(part[field], entry[field], ELLIPSIS[language]):
                raise ValueError(f"{where}: its {field} is not an excerpt of the claim's {field}")
    if all(part.get("role") == PREMISE for part in parts):
        raise ValueError(f"{claim_id}: every part is a premise; which part is the claim's point?")


def squeeze(text: str) -> str:
    """Text without whitespace and the ``=`` signs and full-width commas the flattened copy of the article lost
    (a quote restores every ``=``, and a comma where two numbers or words would otherwise run together)."""
    return re.sub(r"[\s=，]", "", text)


def is_excerpt(excerpt: str, text: str, ellipsis: str) -> bool:
    """True if the pieces of ``excerpt`` between ellipses occur in ``text``, in order
    (whitespace, ``=`` and ``，`` aside: :func:`squeeze`)."""
    position, text = 0, squeeze(text)
    for piece in excerpt.split(ellipsis):
        found = text.find(squeeze(piece), position)
        if not squeeze(piece) or found < 0:
            return False
        position = found + len(squeeze(piece))
    return True


def part_letter(index: int) -> str:
    return "abcdefghij"[index]


def anchor(claim_id: str) -> str:
    """``C3.2`` → ``claim-c3-2``, the label of its entry on the ledger page."""
    return "claim-" + claim_id.lower().replace(".", "-")


def slug(verdict: str) -> str:
    return verdict.replace(" ", "-")


# ---------------------------------------------------------------------------------------- the rubric

RUBRIC = (
    "Each claim is graded against the article's own sentence, not a paraphrase. "
    "A sentence that asserts more than one thing is split into parts. A part is a premise when it is a fact the "
    "article states on the way to its point (a number, a definition), and a point otherwise. "
    "Each part records four facts, read from the evidence at the part's own scope (the widths, keys, optimizer, "
    "task or source it speaks of; evidence outside that scope is reported beside it but grades nothing): "
    "whether the book **tested** it there; whether its **direction** holds (what it says happens: under every "
    "condition tested, under some, or under none); whether its **size** holds (the numbers it states, if any); and "
    "whether its **reason** holds (the cause it gives, if any). The grade follows from the facts alone:"
)
PART_RULES = [
    "**not tested**: the book measures or reads nothing that bears on the part at its scope.",
    "**corrected**: its direction fails under every condition tested.",
    "**confirmed**: its direction holds under every condition tested, and so do the size and the reason it states.",
    "**half right**: every other case. Its direction holds under some of the conditions tested only, or it holds "
    "while the size or the reason does not: “the direction holds, the sizes fail” is half right, and so is "
    "“right, but for another reason”.",
]
RUBRIC_CLAIMS = "A claim's grade follows from its parts' grades:"
RUBRIC_RULES = [
    "A claim is **confirmed** when every part that the book tests is confirmed.",
    "A claim is **corrected** when every point that the book tests is corrected: its conclusion fails, "
    "even if a premise holds.",
    "A claim is **half right** in every other case: some of it holds and some does not.",
    "A claim is **not tested** when none of its parts is tested. Parts left untested are named in the box "
    "and counted above; they never raise or lower a grade.",
    "The same evidence gets the same grade wherever it is cited: a part that rests on the same runs as a part "
    "of another claim says so (“as C1.4 (a)”), and a test checks that the two grades agree.",
]
FACTS_EXAMPLE = "{tested: true, direction: holds, size: fails, reason: none}"


def part_grade(facts: dict[str, Any]) -> str:
    """The rubric for one part (or a claim of one assertion): its grade from its facts (FACTS) alone."""
    if not facts["tested"]:
        return NOT_TESTED
    if facts["direction"] == "fails":
        return "corrected"
    if all(facts[fact] in ("holds", "none") for fact in ("direction", "size", "reason")):
        return "confirmed"
    return "half right"


def overall_verdict(entry: Entry) -> str:
    """The rubric: a claim's verdict from the verdicts and roles of its parts (or its own verdict)."""
    parts = entry.get("parts")
    if not parts:
        return str(entry["verdict"])
    tested = [p for p in parts if p["verdict"] != NOT_TESTED]
    if not tested:
        return NOT_TESTED
    if all(p["verdict"] == "confirmed" for p in tested):
        return "confirmed"
    points = [p for p in tested if p.get("role") != PREMISE]
    if points and all(p["verdict"] == "corrected" for p in points):
        return "corrected"
    return "half right"


def recomputed_verdict(entry: Entry) -> str:
    """A claim's grade from its facts alone: each part graded by `part_grade`, the claim by `overall_verdict`."""
    if not entry.get("parts"):
        return part_grade(entry["facts"])
    parts = [{**part, "verdict": part_grade(part["facts"])} for part in entry["parts"]]
    return overall_verdict({"parts": parts})


FACT_WORDS = {
    "en": {
        "direction": "direction",
        "size": "size",
        "reason": "reason",
        "holds": "holds",
        "partly": "holds in part",
        "fails": "fails",
        "none": "none stated",
        "untested": "not tested",
    },
    "zh": {
        "direction": "方向",
        "size": "大小",
        "reason": "原因",
        "holds": "成立",
        "partly": "部分成立",
        "fails": "不成立",
        "none": "原文未给出",
        "untested": "未检验",
    },
}


def facts_line(facts: dict[str, Any], language: str = "en") -> str:
    """The facts a grade was read from, as the ledger page shows them under each part."""
    words = FACT_WORDS[language]
    if not facts["tested"]:
        return "*事实*：在其范围内未检验" if language == "zh" else "*Facts:* not tested at its scope"
    separator = "；" if language == "zh" else "; "
    listed = separator.join(
        f"{words[fact]}{'：' if language == 'zh' else ': '}{words[facts[fact]]}"
        for fact in ("direction", "size", "reason")
    )
    return f"*事实*：{listed}" if language == "zh" else f"*Facts:* {listed}"


def untested_parts(entry: Entry) -> int:
    return sum(p["verdict"] == NOT_TESTED for p in entry.get("parts") or [])


def counts(ledger: dict[str, Entry]) -> Counter[str]:
    return Counter(overall_verdict(e) for e in ledger.values())


def same_as_target(reference: str) -> tuple[str, int]:
    """``"C1.4 (a)"`` → ``("C1.4", 0)``."""
    match = re.fullmatch(r"(C\d\.\d+) \(([a-j])\)", reference)
    if not match:
        raise ValueError(f"same_as {reference!r}: write it as 'C1.4 (a)'")
    return match.group(1), "abcdefghij".index(match.group(2))


def check_same_evidence(ledger: dict[str, Entry]) -> list[str]:
    """Each ``same_as`` link names an existing part with the same grade; the problems found."""
    problems = []
    for claim_id, entry in ledger.items():
        for index, part in enumerate(entry.get("parts") or []):
            if "same_as" not in part:
                continue
            other_id, other_index = same_as_target(part["same_as"])
            other_parts = ledger.get(other_id, {}).get("parts") or []
            if other_index >= len(other_parts):
                problems.append(f"{claim_id} ({part_letter(index)}): same_as {part['same_as']} does not exist")
            elif other_parts[other_index]["verdict"] != part["verdict"]:
                problems.append(
                    f"{claim_id} ({part_letter(index)}) is {part['verdict']!r} but rests on the same evidence as "
                    f"{part['same_as']}, which is {other_parts[other_index]['verdict']!r}"
                )
    return problems


# ---------------------------------------------------------------------------------------- rendering


def cross_page_glue(text: str, chapter: str) -> str:
    """Every ``{glue:text}`key``` of ``chapter`` in the form that works on any page of the book
    (book/ and notebooks/ are both one folder below the root),
    ``{glue:text}`../notebooks/<chapter>.ipynb::key:s```; a key that already names its notebook
    keeps it, and gets ``:s`` if it has no format (``notebook_format.GlueRole``: myst-nb would
    misread it without one)."""

    def replace(match: re.Match[str]) -> str:
        role = parse_glue_role(match.group(0))
        return str(dataclasses.replace(role, path=role.path or f"../notebooks/{chapter}.ipynb"))

    return GLUE_ROLE.sub(replace, text)


def title(claim_id: str, entry: Entry, language: str = "en") -> str:
    verdict = overall_verdict(entry)
    if language == "zh":
        return f"论断 {claim_id}：{VERDICTS[verdict]}"
    return f"Claim {claim_id}: {verdict}"


def article_label(entry: Entry, language: str = "en") -> str:
    if language == "zh":
        return f"**原文**（§{entry['article_section']}）："
    return f"**The article** (its §{entry['article_section']}), in the book's translation:"


def part_head(index: int, part: Entry, language: str = "en") -> str:
    letter = part_letter(index)
    if language == "zh":
        grade = ("前提，" if part.get("role") == PREMISE else "") + VERDICTS[part["verdict"]]
        same = f"（同 {part['same_as']}）" if "same_as" in part else ""
        return f"**({letter}) {grade}**{same}：「{part['article']}」"
    grade = ("premise, " if part.get("role") == PREMISE else "") + part["verdict"]
    same = f" (as {part['same_as']})" if "same_as" in part else ""
    return f"**({letter}) {grade[0].upper() + grade[1:]}**{same}: “{part['translation']}”"


def ledger_link(claim_id: str, language: str = "en") -> str:
    if language == "zh":
        return f"{{ref}}`论断清单中的 {claim_id} <{anchor(claim_id)}>`"
    return f"{{ref}}`{claim_id} in the claims ledger <{anchor(claim_id)}>`"


def quote_and_scope(entry: Entry) -> list[str]:
    """The article's sentence (the book's translation; 原文 in the Chinese edition) and the scope."""
    return [
        article_label(entry),
        "",
        f"> {entry['translation']}",
        "",
        f"**Scope:** {cross_page_glue(entry['scope'], entry['chapter'])}",
    ]


def bottom_line(entry: Entry) -> str:
    return f"**The book:** {cross_page_glue(entry['reason'], entry['chapter'])}"


def part_lines(entry: Entry, with_facts: bool = False) -> list[str]:
    """Each part: its head, its reason and (on the ledger page) the facts its grade is read from."""
    lines: list[str] = []
    for index, part in enumerate(entry.get("parts") or []):
        lines += ["", f"- {part_head(index, part)}", "", f"  {cross_page_glue(part['reason'], entry['chapter'])}"]
        if with_facts:
            lines += ["", f"  {facts_line(part['facts'])}"]
    if with_facts and not entry.get("parts"):
        lines += ["", facts_line(entry["facts"])]
    return lines


def details_title(language: str = "en") -> str:
    if language == "zh":
        return "原文、检验范围与各部分的结论"
    return "The article's words, the scope and the grade of each part"


def verdict_box(claim_id: str, entry: Entry) -> str:
    """The verdict box of one claim, as its chapter shows it: the grade and the bottom line on the page,
    the article's sentence, the scope and the parts folded (the ledger page shows them unfolded, in the
    same words: one message each)."""
    verdict = overall_verdict(entry)
    return "\n".join(
        [
            f"::::{{admonition}} {title(claim_id, entry)}",
            f":class: verdict verdict-{slug(verdict)}",
            "",
            bottom_line(entry),
            "",
            f":::{{dropdown}} {details_title()}",
            *quote_and_scope(entry),
            *part_lines(entry),
            ":::",
            "",
            ledger_link(claim_id),
            "::::",
        ]
    )


def counts_sentence(ledger: dict[str, Entry], language: str = "en") -> str:
    """How many claims got each grade, and how many of their parts are left untested."""
    found = counts(ledger)
    parts = sum(len(e.get("parts") or []) for e in ledger.values())
    split = sum(bool(e.get("parts")) for e in ledger.values())
    untested = sum(untested_parts(e) for e in ledger.values())
    if language == "zh":
        grades = "，".join(f"{found[v]} 条{VERDICTS[v]}" for v in VERDICTS)
        return (
            f"本书把原文的 {len(ledger)} 条论断逐一定级：{grades}。"
            f"其中 {split} 条断言了不止一件事，共拆成 {parts} 个部分，其中 {untested} 个部分未检验。"
        )
    grades = ", ".join(f"{found[v]} {v}" for v in VERDICTS)
    return (
        f"The book grades all {len(ledger)} claims of the article: {grades}. "
        f"The {split} claims that assert more than one thing are split into {parts} parts, "
        f"of which {untested} {'is' if untested == 1 else 'are'} not tested."
    )


def entry_line(claim_id: str, entry: Entry, language: str = "en") -> str:
    verdict, where = overall_verdict(entry), f"{{numref}}`§%s <{entry['section']}>`"
    if language == "zh":
        return f"**{claim_id}** · {{verdict}}`{VERDICTS[verdict]} <{slug(verdict)}>` · 检验于 {where}"
    return f"**{claim_id}** · {{verdict}}`{verdict} <{slug(verdict)}>` · tested in {where}"


def table_row(claim_id: str, entry: Entry, language: str = "en") -> tuple[str, str]:
    """The cells of a claim's row that are the same in both editions but for their words: claim, verdict."""
    verdict = overall_verdict(entry)
    words = VERDICTS[verdict] if language == "zh" else verdict
    return f"{{ref}}`{claim_id} <{anchor(claim_id)}>`", f"{{verdict}}`{words} <{slug(verdict)}>`"


LEDGER_INTRO = (
    "The book follows a Chinese-language blog article on the $\\sqrt{d_k}$ scale and treats each of its claims "
    "as a hypothesis. This page gathers the verdicts. Each entry quotes the article's sentence (in the Chinese "
    "edition, in its own words; here, in the book's translation), says under which conditions the book tested "
    "it, grades each of its parts, and links the section that holds the evidence."
)


def ledger_page(ledger: dict[str, Entry]) -> str:
    lines = [
        "<!-- Generated by tools/tidy.py from book/claims.yml: edit that file, then run `make tidy`. -->",
        "(claims-ledger)=",
        "# The claims ledger",
        "",
        LEDGER_INTRO,
        "",
        counts_sentence(ledger),
        "",
        "(claims-rubric)=",
        "## How a claim is graded",
        "",
        RUBRIC,
        "",
        *[f"- {rule}" for rule in PART_RULES],
        "",
        RUBRIC_CLAIMS,
        "",
        *[f"- {rule}" for rule in RUBRIC_RULES],
        "",
        "## All claims at a glance",
        "",
        "| Claim | What the article says | Verdict | Tested in |",
        "|---|---|---|---|",
    ]
    for claim_id, entry in ledger.items():
        claim, verdict = table_row(claim_id, entry)
        lines.append(f"| {claim} | {entry['gist']} | {verdict} | {{numref}}`§%s <{entry['section']}>` |")
    for number, name in SECTIONS.items():
        entries = [(cid, e) for cid, e in ledger.items() if cid.startswith(f"C{number}.")]
        if not entries:
            continue
        lines += ["", f"## {number}. {name}"]
        for claim_id, entry in entries:
            lines += ["", f"({anchor(claim_id)})=", f"### {entry['gist']}", "", entry_line(claim_id, entry), ""]
            lines += [*quote_and_scope(entry), "", bottom_line(entry), *part_lines(entry, with_facts=True)]
    return "\n".join(lines).rstrip() + "\n"


def landing_counts(ledger: dict[str, Entry]) -> str:
    """The block of ``book/index.md`` between the markers (the markers included)."""
    return "\n\n".join([COUNTS_BEGIN, landing_sentence(ledger), COUNTS_END])


def landing_sentence(ledger: dict[str, Entry], language: str = "en") -> str:
    found = counts(ledger)
    if language == "zh":
        grades = "，".join(f"{found[v]} 条{VERDICTS[v]}" for v in VERDICTS)
        return f"{{ref}}`论断清单 <claims-ledger>`按同一套标准给原文的 {len(ledger)} 条论断定级：{grades}。"
    grades = ", ".join(f"{found[v]} {v}" for v in VERDICTS)
    ledger_link = "{ref}`claims ledger <claims-ledger>`"
    return f"The {ledger_link} grades the article's {len(ledger)} claims by one rubric: {grades}."


def with_landing_counts(page: str, ledger: dict[str, Entry]) -> str:
    """``book/index.md`` with its counts block rewritten; a ValueError if the markers are missing."""
    begin, end = page.find(COUNTS_BEGIN), page.find(COUNTS_END)
    if begin < 0 or end < begin:
        raise ValueError(f"{LANDING_PAGE.name}: the markers {COUNTS_BEGIN!r} … {COUNTS_END!r} are missing")
    return page[:begin] + landing_counts(ledger) + page[end + len(COUNTS_END) :]


# ---------------------------------------------------------------------------------------- the Chinese edition


def derived_messages(ledger: dict[str, Entry]) -> dict[str, str]:
    """msgid → msgstr for every message of a box, the ledger page or the landing page's counts that is
    not a translation but follows from the data: the article's own sentences (原文), titles, part
    heads, table cells, counts. ``tools/locale.py`` writes them; nobody types them. A ValueError if
    one English message would need two Chinese ones."""
    pairs: list[tuple[str, str]] = [
        (counts_sentence(ledger), counts_sentence(ledger, "zh")),
        (landing_sentence(ledger), landing_sentence(ledger, "zh")),
    ]
    for claim_id, entry in ledger.items():
        pairs += [
            (title(claim_id, entry), title(claim_id, entry, "zh")),
            (article_label(entry), article_label(entry, "zh")),
            (entry["translation"], entry["article"]),
            (ledger_link(claim_id), ledger_link(claim_id, "zh")),
            (details_title(), details_title("zh")),
            (entry_line(claim_id, entry), entry_line(claim_id, entry, "zh")),
            *zip(table_row(claim_id, entry), table_row(claim_id, entry, "zh"), strict=True),
        ]
        for index, part in enumerate(entry.get("parts") or []):
            pairs.append((part_head(index, part), part_head(index, part, "zh")))
        for facts in [p["facts"] for p in entry.get("parts") or []] or [entry["facts"]]:
            pairs.append((facts_line(facts), facts_line(facts, "zh")))
    table: dict[str, str] = {}
    for english, chinese in pairs:
        if table.get(english, chinese) != chinese:
            raise ValueError(f"one message, two Chinese forms: {english!r} → {table[english]!r} or {chinese!r}")
        table[english] = chinese
    for entry in ledger.values():  # the table's section cells are the same in both editions
        cell = f"{{numref}}`§%s <{entry['section']}>`"
        table[cell] = cell
    return table
