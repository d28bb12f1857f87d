"""The Chinese edition: complete and current catalogs, translations that keep every glued
number, role, equation and reference of their source, one word per glossary term, and
Chinese notebooks that differ from the English ones in their prose only."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter

import nbformat
import pytest

from tools import claims
from tools.locale import CATALOGS, ZH_NOTEBOOKS, catalog, chinese_notebook
from tools.notebook_format import ROLE, ROOT, chapter_notebooks, read

PO_FILES = sorted(CATALOGS.rglob("*.po"))
MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$", re.S)
CODE = re.compile(r"(?<![`}])`[^`\n]+`")
LINK = re.compile(r"\]\(([^)]+)\)")
GLOSSARY_ENTRY = re.compile(r"^(\S[^\n]*)\n\s+【([^】]+)】", re.M)


def messages():
    for po in PO_FILES:
        name = str(po.relative_to(CATALOGS).with_suffix(""))
        for message in catalog(name):
            if message.id:
                yield name, message


def test_there_are_catalogs_for_every_page():
    pages = {f"notebooks/{p.stem}" for p in chapter_notebooks()}
    assert pages <= {str(p.relative_to(CATALOGS).with_suffix("")) for p in PO_FILES}, "run `make locale`"


def test_every_message_is_translated_and_none_is_fuzzy():
    untranslated = [f"{name}: {m.id[:70]!r}" for name, m in messages() if not m.string]
    fuzzy = [f"{name}: {m.id[:70]!r}" for name, m in messages() if m.fuzzy]
    assert not untranslated and not fuzzy, (
        f"{len(untranslated)} untranslated and {len(fuzzy)} fuzzy messages (make locale, then translate):\n"
        + "\n".join((untranslated + fuzzy)[:60])
    )


def role_target(role: str) -> str:
    """A role's name and target: `{doc}`Chapter 6 <06_x>`` and `{doc}`第 6 章 <06_x>`` are the same link,
    so the visible text of a role with an explicit target may be translated; a role without one is kept whole."""
    name, text = role.split("`", 1)
    text = text.rstrip("`")
    target = re.search(r"<([^<>]+)>\s*$", text)
    return f"{name}`{target.group(1) if target else text}`"


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
@pytest.mark.parametrize("po", PO_FILES, ids=lambda p: p.stem)
def test_catalogs_compile(po):
    result = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(po)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def spans(text: str) -> Counter[str]:
    """What a translation must carry over unchanged: roles, math, inline code, link targets."""
    found = Counter(role_target(r) for r in ROLE.findall(text)) + Counter(m.strip() for m in MATH.findall(text))
    without_roles = ROLE.sub("", text)
    found += Counter(CODE.findall(without_roles)) + Counter(LINK.findall(text))
    return found


def derived() -> dict[str, str]:
    """The messages `make locale` writes from book/claims.yml: the article's own sentences (原文) stand
    for the book's translation of them and carry none of its roles or code; tests/test_tidy_and_claims.py
    checks them word for word instead."""
    return claims.derived_messages(claims.load_ledger())


def test_translations_keep_every_glued_number_role_equation_and_reference():
    broken, quotes = [], derived()
    for name, m in messages():
        if m.id in quotes:
            continue
        if m.string and spans(m.id) != spans(m.string):
            missing, extra = spans(m.id) - spans(m.string), spans(m.string) - spans(m.id)
            broken.append(f"{name}: {m.id[:60]!r}\n    missing {dict(missing)}, extra {dict(extra)}")
    assert not broken, f"{len(broken)} translations that change a role, math, code or link:\n" + "\n".join(broken[:40])


def glossary() -> dict[str, list[str]]:
    """English term -> its accepted Chinese forms, from book/glossary.md."""
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    terms = {}
    for english, chinese in GLOSSARY_ENTRY.findall(text):
        forms = [f.strip() for f in re.split(r"[，/（）()]", chinese) if f.strip()]
        terms[english.strip()] = forms
    return terms


def is_symbol(term: str) -> bool:
    """A symbol such as ``d_k`` is written the same in both editions: it is not a word to translate,
    so a message that names it needs no Chinese gloss beside it (the zh review's finding F2)."""
    return "_" in term or not re.fullmatch(r"[A-Za-z][A-Za-z -]*", term)


def test_glossary_terms_are_translated_the_glossary_way():
    terms = {english: forms for english, forms in glossary().items() if not is_symbol(english)}
    assert len(terms) >= 15
    wrong, quotes = [], derived()
    for name, m in messages():
        if not m.string or m.string == m.id or m.id in quotes:  # an equation, a name, or the article itself
            continue
        source = MATH.sub(" ", ROLE.sub(lambda r: r.group(0).split("`")[1].split("<")[0], m.id))
        target = MATH.sub(" ", m.string)
        for english, forms in terms.items():
            mentioned = re.search(rf"(?<![\w-]){re.escape(english)}(?:s|es)?(?![\w-])", source, re.I)
            if mentioned and not any(form in target for form in forms):
                wrong.append(f"{name}: {english!r} -> none of {forms} in {m.string[:60]!r}")
    assert not wrong, f"{len(wrong)} messages that translate a glossary term otherwise:\n" + "\n".join(wrong[:40])


def test_one_sentence_has_one_translation():
    """A sentence that several pages share (a claim's reason in its chapter's box and on the ledger page)
    reads the same in each (the zh review's finding F5); `make locale` copies a translation across."""
    seen: dict[str, dict[str, str]] = {}
    for name, m in messages():
        # a message kept in English on purpose (a glossary headword, an equation) is not a second translation
        if m.string and not m.fuzzy and m.string != m.id:
            seen.setdefault(m.id, {})[name] = m.string
    differing = [
        f"{m_id[:70]!r}:\n" + "\n".join(f"    {name}: {string[:60]!r}" for name, string in where.items())
        for m_id, where in seen.items()
        if len(set(where.values())) > 1
    ]
    assert not differing, f"{len(differing)} messages translated two ways:\n" + "\n".join(differing[:20])


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chinese_notebooks_are_current_and_differ_only_in_prose(path):
    generated = ZH_NOTEBOOKS / path.name
    assert generated.is_file(), "run `make locale`"
    committed = json.loads(generated.read_text(encoding="utf-8"))
    expected = json.loads(nbformat.writes(chinese_notebook(path)))  # as written: sources split into lines
    assert committed == expected, f"{generated.name} is stale: run `python -m tools.locale --notebooks`"
    english = read(path)
    english_as_written = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert len(english.cells) == len(committed["cells"])
    for en, zh in zip(english_as_written, committed["cells"], strict=True):
        if en["cell_type"] == "code":
            assert zh["source"] == en["source"] and zh["outputs"] == en["outputs"]
    prose = [c for c in english.cells if c.cell_type == "markdown"]
    translated = [
        c
        for c, z in zip(english.cells, committed["cells"], strict=True)
        if c.cell_type == "markdown" and "".join(z["source"]) != c.source
    ]
    assert len(translated) >= 0.9 * len(prose), f"only {len(translated)} of {len(prose)} markdown cells translated"
