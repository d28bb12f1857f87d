"""One term per concept: every catalog keeps to locales/zh_CN/terms.yml (tools/terms.py), and the
check catches a planted variant and a dropped rendering, so a pass means something."""

from __future__ import annotations

import re

import pytest

from tests import extension
from tools import terms as T
from tools.locale import CATALOGS, catalog

TERMS = T.load()
CONCEPTS = [t for t in TERMS if t.match is not None and t.use is not None]


def test_the_term_list_has_its_concepts():
    assert len(CONCEPTS) >= 15
    # each concept's rendering is not also one of its variants
    for term in CONCEPTS:
        assert not any(a.search(term.chinese.split("（")[0]) for a in term.avoid), term.english


def test_every_catalog_keeps_to_the_term_list():
    found = T.catalog_violations(TERMS)
    assert not found, f"{len(found)} messages that break locales/zh_CN/terms.yml:\n" + "\n".join(found[:40])


def first_message(term: T.Term) -> tuple[str, str]:
    """A real translated message that names the concept (English) and uses its rendering (Chinese)."""
    for po in sorted(CATALOGS.rglob("*.po")):
        for m in catalog(str(po.relative_to(CATALOGS).with_suffix(""))):
            if m.id and m.string and m.id != m.string and term.match.search(T.english_text(m.id)):
                rendering = term.use.search(T.chinese_text(m.string))
                if rendering and not T.violations(m.id, m.string, TERMS):
                    return m.id, m.string
    pytest.skip(f"no message names {term.english!r}")


def plantable(term: T.Term) -> str | None:
    """A literal variant to plant: the first `avoid` pattern that is plain text."""
    for pattern in term.avoid:
        literal = re.sub(r"\(\?<?[!=][^)]*\)", "", pattern.pattern)
        if literal and not re.search(r"[\\\[\](){}?*+|^$.]", literal) and pattern.search(literal):
            return literal
    return None


@pytest.mark.parametrize("term", [t for t in CONCEPTS if plantable(t)], ids=lambda t: t.english[:30])
def test_a_planted_variant_fails(term):
    english, chinese = first_message(term)
    rendering = term.use.search(T.chinese_text(chinese)).group(0)
    planted = chinese.replace(rendering, plantable(term), 1)
    assert planted != chinese
    assert T.violations(english, planted, TERMS), f"planting {plantable(term)!r} went unnoticed"


@pytest.mark.parametrize("term", CONCEPTS, ids=lambda t: t.english[:30])
def test_a_dropped_rendering_fails(term):
    english, chinese = first_message(term)
    dropped = term.use.sub("", chinese)
    assert T.violations(english, dropped, TERMS), f"dropping {term.use.pattern!r} went unnoticed"


def test_a_variant_in_a_copy_of_a_catalog_fails(tmp_path, monkeypatch):
    """End to end: a copy of chapter 8's catalog with 召回 turned back into 回忆 in one message fails."""
    import tools.locale as L

    copy = tmp_path / "LC_MESSAGES"
    (copy / "notebooks").mkdir(parents=True)
    text = (CATALOGS / "notebooks" / "08_after_sqrt_dk.po").read_text(encoding="utf-8")
    assert "的召回模型" in text
    planted = text.replace("的召回模型", "的回忆模型", 1)
    (copy / "notebooks" / "08_after_sqrt_dk.po").write_text(planted, encoding="utf-8")
    monkeypatch.setattr(L, "CATALOGS", copy)
    found = T.catalog_violations(TERMS)
    assert any("回忆" in line for line in found), found[:5]


def test_code_and_math_are_not_terms():
    bug = next(t for t in CONCEPTS if t.english.startswith("bug"))
    assert not T.violations("Call `buggy_attention_a`.", "调用 `buggy_attention_a`。", [bug])
    assert T.violations("bug A is wrong.", "bug A 是错的。", [bug])
    assert not T.violations("bug A is wrong.", "错误 A 是错的。", [bug])


def glossary_terms() -> dict[str, str]:
    """book/glossary.md: headword -> its Chinese term (the 【】 at the start of its definition)."""
    from tools.notebook_format import ROOT

    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    return {english.strip(): chinese for english, chinese in re.findall(r"^(\S[^\n]*)\n\s+【([^】]+)】", text, re.M)}


def test_the_glossary_and_the_term_list_agree():
    """The glossary page and terms.yml name one term per concept: a concept's headword gives its rendering
    in 【】, and no glossary term is a variant that terms.yml rejects."""
    glossary = glossary_terms()
    linked = [t for t in CONCEPTS if t.glossary]
    assert len(linked) >= 3
    for term in linked:
        assert term.glossary in glossary, f"no glossary entry {term.glossary!r}"
        assert term.use.search(glossary[term.glossary]), (term.glossary, glossary[term.glossary], term.use.pattern)
    variants = [(t.english, a.pattern) for t in CONCEPTS for a in t.avoid for c in glossary.values() if a.search(c)]
    assert not variants, variants


def test_the_explorers_chinese_labels_keep_to_the_term_list():
    """The scale explorer's words (book/_ext/scale_explorer.py's LABELS) live outside the catalogs: each
    Chinese label is held to the term list against its English twin, as a catalog's message is."""
    words = {edition: {k: re.sub(r"\{\w+\}", " ", v) for k, v in labels.items()}  # not a placeholder's name
             for edition, labels in extension("scale_explorer").LABELS.items()}  # fmt: skip
    english, chinese = words["en"], words["zh_CN"]
    assert set(english) == set(chinese)
    found = [f"{key}: {v}" for key in english for v in T.violations(english[key], chinese[key], TERMS)]
    assert not found, "\n".join(found)
    planted = {**chinese, "q_dead": chinese["q_dead"].replace("梯度失效的行", "死行")}  # the check can fail
    assert T.violations(english["q_dead"], planted["q_dead"], TERMS)
