"""What `make tidy` derives is in step, and the claims ledger is complete, graded by one rubric and used.

The ledger (``book/claims.yml``) is the one place where a claim of the source article is graded;
the chapters' verdict boxes, ``book/claims.md`` and the landing page's counts come from it
(``tools/claims.py``). The Chinese edition quotes the article itself where the English one shows
the book's translation, and that quote is written by the tools, never typed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tools import claims, tidy
from tools.locale import CATALOGS, catalog
from tools.notebook_format import ROLE, ROOT, chapter_notebooks, read

CLAIM_ID = re.compile(r"\bC([1-7])\.(\d+)\b")
ARTICLE_CLAIMS = {"1": 5, "2": 3, "3": 4, "4": 3, "5": 4, "6": 2, "7": 7}
EVIDENCE = re.compile(r"\{(?:glue(?::\w+)?|cite(?::\w+)?|ref|numref|eq|prf:ref)\}`")
MATH = re.compile(r"\$[^$]+\$")


def article_text() -> str | None:
    """The source article's flattened text, where this checkout can see it (the authors' workspace keeps
    it beside the repository, ../shared/article-zh.txt; BOOK_ARTICLE names another path)."""
    candidates = [os.environ.get("BOOK_ARTICLE", "")]
    candidates += [str(parent / "shared" / "article-zh.txt") for parent in ROOT.parents]
    return next((Path(c).read_text(encoding="utf-8") for c in candidates if c and Path(c).is_file()), None)


def test_tidy_has_nothing_to_do():
    stale = tidy.run(write=False)  # in-process: `tidy --check` as a subprocess cost 17 s
    assert not stale, "run `make tidy`:\n" + "\n".join(stale)


def test_the_ledger_holds_every_claim_of_the_article_complete():
    ledger = claims.load_ledger()  # raises on a missing field, a bad grade or a part that is not an excerpt
    expected = {f"C{section}.{n}" for section, count in ARTICLE_CLAIMS.items() for n in range(1, count + 1)}
    assert set(ledger) == expected
    for claim_id, entry in ledger.items():
        assert (ROOT / "notebooks" / f"{entry['chapter']}.ipynb").is_file(), (claim_id, entry["chapter"])
        assert "TODO" not in str(entry), claim_id


@pytest.mark.skipif(article_text() is None, reason="the source article is not beside this checkout")
def test_every_article_field_is_the_articles_own_words():
    text = article_text()
    assert text is not None
    for claim_id, entry in claims.load_ledger().items():
        # verbatim but for the `=` signs the flattened copy lost (and whitespace); pieces joined by ……
        assert claims.is_excerpt(entry["article"], text, "……"), f"{claim_id}: `article` is not in the article"


def test_the_halves_the_outline_once_dropped_are_quoted_and_graded():
    """The contested halves that a paraphrase dropped are in `article` and have a part of their own."""
    ledger = claims.load_ledger()
    for claim_id, half in {
        "C1.4": "实际根源在注意力分布已经“坏掉”了",
        "C2.3": "但后来的研究和大量实验都验证了这个猜测",
        "C3.3": "因为问题出在梯度信号本身已经消失了",
        "C5.2": "当然也行但效果完全不同",
        "C6.2": "如果attention的attention层忘记scale",
        "C7.7": "如果你发现它完全没影响那多半意味着任务太简单",
    }.items():
        entry = ledger[claim_id]
        assert half in entry["article"], claim_id
        assert any(half in part["article"] for part in entry.get("parts") or []), f"{claim_id}: no part grades {half}"


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([("confirmed", None), ("confirmed", "premise")], "confirmed"),
        ([("confirmed", None), ("not tested", None)], "confirmed"),
        ([("not tested", None), ("not tested", None)], "not tested"),
        ([("corrected", None), ("corrected", None)], "corrected"),
        ([("confirmed", "premise"), ("corrected", None)], "corrected"),  # the point fails, the premise holds
        ([("corrected", "premise"), ("confirmed", None)], "half right"),  # a wrong fact on the way
        ([("confirmed", None), ("corrected", None)], "half right"),
        ([("half right", None), ("confirmed", None)], "half right"),
        ([("half right", None), ("not tested", None)], "half right"),
        ([("corrected", None), ("not tested", None)], "corrected"),
    ],
)
def test_the_rubric(parts, expected):
    entry = {"parts": [{"verdict": v, **({"role": r} if r else {})} for v, r in parts]}
    assert claims.overall_verdict(entry) == expected


def facts(direction: str = "holds", size: str = "none", reason: str = "none", tested: bool = True) -> dict:
    if not tested:
        return {"tested": False, "direction": "untested", "size": "untested", "reason": "untested"}
    return {"tested": True, "direction": direction, "size": size, "reason": reason}


@pytest.mark.parametrize(
    ("part_facts", "expected"),
    [
        (facts(), "confirmed"),
        (facts(size="holds", reason="holds"), "confirmed"),
        (facts(size="fails"), "half right"),  # the direction holds, the sizes fail: one grade
        (facts(reason="fails"), "half right"),  # right, but for another reason: one grade
        (facts(reason="partly"), "half right"),
        (facts(direction="partly"), "half right"),  # holds under some of the conditions tested
        (facts(direction="fails"), "corrected"),
        (facts(direction="fails", size="fails", reason="fails"), "corrected"),
        (facts(tested=False), "not tested"),
    ],
)
def test_the_part_rubric(part_facts, expected):
    assert claims.part_grade(part_facts) == expected


def test_every_grade_is_recomputed_from_the_facts_it_records():
    """Each part's grade follows from its facts by the rubric alone, and each claim's from its parts'."""
    ledger = claims.load_ledger()
    for claim_id, entry in ledger.items():
        for index, part in enumerate(entry.get("parts") or [entry]):
            assert claims.part_grade(part["facts"]) == part["verdict"], f"{claim_id} ({claims.part_letter(index)})"
        assert claims.recomputed_verdict(entry) == claims.overall_verdict(entry), claim_id
    # a grade that its facts do not give is refused, naming the part
    broken = {**ledger["C6.1"], "parts": [dict(part) for part in ledger["C6.1"]["parts"]]}
    broken["parts"][1]["verdict"] = "corrected"  # its direction holds and only its sizes fail
    with pytest.raises(ValueError, match=r"C6.1 \(b\): its facts give 'half right'"):
        claims.check_entry("C6.1", broken)
    broken["parts"][1] = {**broken["parts"][1], "facts": {"tested": True, "direction": "holds"}}
    with pytest.raises(ValueError, match="names each of"):
        claims.check_entry("C6.1", broken)


def test_the_ledger_page_shows_the_facts_behind_every_grade():
    ledger = claims.load_ledger()
    page = claims.LEDGER_PAGE.read_text(encoding="utf-8")
    for rule in claims.PART_RULES:
        assert rule in page
    for claim_id, entry in ledger.items():
        section = page.split(f"({claims.anchor(claim_id)})=", 1)[1].split("\n(claim-", 1)[0]
        for part in entry.get("parts") or [entry]:
            assert claims.facts_line(part["facts"]) in section, claim_id


def test_a_claim_of_one_assertion_keeps_its_own_verdict_and_one_with_parts_has_none():
    for claim_id, entry in claims.load_ledger().items():
        assert ("verdict" in entry) != bool(entry.get("parts")), claim_id
    broken = {**claims.load_ledger()["C3.3"], "verdict": "confirmed"}
    with pytest.raises(ValueError, match="gets its verdict from them"):
        claims.check_entry("C3.3", broken)


def test_the_same_evidence_gets_the_same_grade():
    ledger = claims.load_ledger()
    assert claims.check_same_evidence(ledger) == []
    links = {(cid, p["same_as"]) for cid, e in ledger.items() for p in e.get("parts") or [] if "same_as" in p}
    assert ("C3.3", "C1.4 (a)") in links  # C1.4 and C3.3 rest on the same runs of chapter 6
    # a changed grade on one side is caught
    ledger["C1.4"]["parts"][0]["verdict"] = "half right"
    assert claims.check_same_evidence(ledger)


def test_every_tested_part_names_its_evidence():
    for claim_id, entry in claims.load_ledger().items():
        if not entry.get("parts"):
            assert EVIDENCE.search(entry["reason"]), f"{claim_id}: a reason without a number or a source"
        for index, part in enumerate(entry.get("parts") or []):
            if part["verdict"] != claims.NOT_TESTED and part.get("role") != claims.PREMISE:
                assert EVIDENCE.search(part["reason"]), f"{claim_id} ({claims.part_letter(index)}): no evidence named"


def test_visible_text_writes_dk_in_unicode_or_math():
    for claim_id, entry in claims.load_ledger().items():
        texts = [entry[f] for f in ("translation", "gist", "scope", "reason")]
        texts += [p[f] for p in entry.get("parts") or [] for f in ("translation", "reason")]
        for text in texts:
            visible = MATH.sub("", ROLE.sub("", text))
            assert "d_k" not in visible, f"{claim_id}: raw d_k in {text[:70]!r} (write dₖ or $d_k$)"
    page = claims.LEDGER_PAGE.read_text(encoding="utf-8")
    assert "d_k" not in MATH.sub("", ROLE.sub("", page.split("\n", 1)[1]))


def test_every_claim_is_tested_where_the_ledger_says():
    ledger = claims.load_ledger()
    for claim_id, entry in ledger.items():
        notebook = read(ROOT / "notebooks" / f"{entry['chapter']}.ipynb")
        boxes = [c for c in notebook.cells if claim_id in c.metadata.get("claims", [])]
        assert len(boxes) == 1, f"{claim_id}: {len(boxes)} verdict boxes in {entry['chapter']}"
        slug = claims.slug(claims.overall_verdict(entry))
        assert f":class: verdict verdict-{slug}" in boxes[0].source, claim_id
        labels = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        assert f"({entry['section']})=" in labels, f"{claim_id}: no label ({entry['section']})= in {entry['chapter']}"


def test_the_ledger_page_has_an_entry_label_for_every_claim_and_prints_the_counts():
    ledger = claims.load_ledger()
    page = claims.LEDGER_PAGE.read_text(encoding="utf-8")
    for claim_id in ledger:
        assert f"({claims.anchor(claim_id)})=" in page, claim_id
    assert claims.counts_sentence(ledger) in page
    assert claims.landing_sentence(ledger) in claims.LANDING_PAGE.read_text(encoding="utf-8")
    assert sum(claims.counts(ledger).values()) == len(ledger)


def test_every_claim_id_in_the_book_is_in_the_ledger():
    ledger = claims.load_ledger()
    for path in chapter_notebooks():
        for cell in read(path).cells:
            if cell.cell_type == "markdown":
                for match in CLAIM_ID.finditer(cell.source):
                    assert match.group(0) in ledger, f"{path.name}: {match.group(0)} is not in book/claims.yml"


def test_the_chinese_edition_quotes_the_article_in_every_box_and_entry():
    """Where a box or a ledger entry shows the book's translation, the Chinese catalog holds the article's
    own sentence, written by `make locale` (tools.claims.derived_messages), never a back-translation."""
    ledger = claims.load_ledger()
    derived = claims.derived_messages(ledger)
    pages = {"book/claims"} | {f"notebooks/{e['chapter']}" for e in ledger.values()}
    tables = {page: {m.id: m for m in catalog(page) if m.id} for page in pages}
    for claim_id, entry in ledger.items():
        for page in ("book/claims", f"notebooks/{entry['chapter']}"):
            message = tables[page].get(entry["translation"])
            assert message is not None, f"{claim_id}: {page}.po lacks the box's translation (run `make locale`)"
            assert message.string == entry["article"] and not message.fuzzy, f"{claim_id}: 原文 in {page}.po"
    wrong = []
    for po in sorted(CATALOGS.rglob("*.po")):
        for message in catalog(str(po.relative_to(CATALOGS).with_suffix(""))):
            if message.id in derived and (message.string != derived[message.id] or message.fuzzy):
                wrong.append(f"{po.name}: {message.id[:60]!r}")
    assert not wrong, "derived messages typed or stale (run `python -m tools.locale --fill`):\n" + "\n".join(wrong)


def test_a_key_given_twice_in_the_ledger_is_an_error(tmp_path):
    # YAML keeps the second `reason:` silently: C5.4 once carried a dead first one that no page showed
    ledger = tmp_path / "claims.yml"
    ledger.write_text("C1.1:\n  gist: a\n  reason: first\n  reason: second\n", encoding="utf-8")
    with pytest.raises(ValueError, match="reason given twice"):
        claims.load_ledger(ledger)
