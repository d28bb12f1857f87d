"""The Chinese edition: complete and current catalogs, translations that keep every glued
number, role, equation and reference of their source, one word per glossary term, and
Chinese notebooks (built in memory from the catalogs) that differ from the English ones in their prose only."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tools import claims
from tools.locale import CATALOGS, catalog, chinese_notebook
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
    from tools.locale import CELL_CODE

    broken, quotes = [], derived()
    for name, m in messages():
        if m.id in quotes:
            continue
        # a code-printed table's cell has no markup in English; its translation marks the code in it
        # (`math.sqrt(d)`), which test_cell_translations_keep_every_number_and_invent_no_code checks
        string = CELL_CODE.sub(r"\1", m.string) if name == "cells" else m.string
        if string and spans(m.id) != spans(string):
            missing, extra = spans(m.id) - spans(string), spans(string) - spans(m.id)
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
        # a message kept in English on purpose (an equation, a name) is not a second translation, nor is a
        # glossary headword, which is its term with the English in parentheses: 熵（entropy）
        headword = name == "book/glossary" and m.string.endswith(f"（{m.id}）")
        if m.string and not m.fuzzy and m.string != m.id:
            seen.setdefault(m.id, {})[name] = m.string.removesuffix(f"（{m.id}）") if headword else m.string
    differing = [
        f"{m_id[:70]!r}:\n" + "\n".join(f"    {name}: {string[:60]!r}" for name, string in where.items())
        for m_id, where in seen.items()
        if len(set(where.values())) > 1
    ]
    assert not differing, f"{len(differing)} messages translated two ways:\n" + "\n".join(differing[:20])


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chinese_notebooks_differ_only_in_prose(path):
    english, chinese = read(path), chinese_notebook(path)
    assert len(english.cells) == len(chinese.cells)
    for en, zh in zip(english.cells, chinese.cells, strict=True):
        if en.cell_type == "code":
            assert zh.source == en.source and zh.outputs == en.outputs
    prose = [c for c in english.cells if c.cell_type == "markdown"]
    translated = [
        c
        for c, z in zip(english.cells, chinese.cells, strict=True)
        if c.cell_type == "markdown" and z.source != c.source
    ]
    assert len(translated) >= 0.9 * len(prose), f"only {len(translated)} of {len(prose)} markdown cells translated"


# ---- The built Chinese site: what a reader sees ------------------------------------------------

ENGLISH_ALLOWED = CATALOGS.parent / "english.yml"
# Not prose: code, math, the bibliography (printed in its own language, as Chinese books print it)
# and each citation's tooltip (the full reference). Code outputs printed as text are code too.
NOT_PROSE_TAGS = ["script", "style", "code", "pre", "kbd", "samp", "math", "svg", "noscript", "template", "head"]
NOT_PROSE_CLASSES = {"math", "highlight", "cell_input", "notranslate", "citation", "bibliography", "MathJax"}
SHOWN_ATTRIBUTES = ("title", "placeholder", "alt", "data-bs-title")  # tooltips, the search box, alt texts
# a URL, a file or a path names a thing: it is an identifier, whatever its letters
IDENTIFIER = re.compile(
    r"\b(?:https?://|www\.)\S+|[\w./-]+\.(?:py|ipynb|md|yml|yaml|cu|cuh|h|cpp|html|txt|json|toml|bib|cfg)\b|\S*/\S+"
)
GLOSS = re.compile(r"（[^（）]*）")
QUOTED = re.compile(r"“[^“”]*”")
TERM_GLOSS = re.compile(r"(?<=[\u4e00-\u9fff】])（[A-Za-z][A-Za-z '-]*）")
# Sphinx's generated indexes (and the search page) list their entries under the English keys.
GENERATED_PAGES = {"genindex.html", "prf-prf.html", "search.html"}
TOGGLE_HINT = re.compile(r"let toggleHint\w+ = '([^']*)'")
ENGLISH_WORD = re.compile(r"(?<![\w.\\/-])[A-Za-z][A-Za-z'’]*(?:-[A-Za-z]+)*(?![\w/\\])")


def visible_text(html: str) -> tuple[list[str], list[str]]:
    """What a reader of one built page sees as prose: its text outside code, math and the
    bibliography, its tooltips, placeholder and alt texts; and, apart, the text of the tables
    that code cells print (helpers.table), which the catalogs do not reach yet."""
    from bs4 import BeautifulSoup, Comment, Doctype

    hints = TOGGLE_HINT.findall(html)  # sphinx-togglebutton's "Click to show", set in a <script>
    soup = BeautifulSoup(html, "html.parser")
    for element in soup.find_all(NOT_PROSE_TAGS):
        element.decompose()
    for element in soup.find_all(class_=lambda c: bool(c) and bool(set(c.split()) & NOT_PROSE_CLASSES)):
        element.decompose()
    for citation in soup.select(".bibtex-citation a[title]"):
        del citation["title"]
    for headword in soup.select("dl.glossary dt"):  # 注意力权重（attention weights）: the English on purpose
        for text in headword.find_all(string=True):
            text.replace_with(GLOSS.sub("", str(text)))
    tables = [t.extract() for t in soup.select(".cell_output table.book-table")]
    table_text = [str(s) for t in tables for s in t.find_all(string=True)]
    texts = [str(s) for s in soup.find_all(string=True) if not isinstance(s, (Comment, Doctype))]
    # a source quoted in its own words (a code comment, a README's section): “Scale q, k before matmul”
    texts = [QUOTED.sub(" ", text) for text in texts]
    # the English term in parentheses after its Chinese one, at first use: 关联召回（associative recall）
    texts = [TERM_GLOSS.sub(" ", text) for text in texts]
    texts += [str(e[a]) for e in soup.find_all(True) for a in SHOWN_ATTRIBUTES if e.get(a)]
    return texts + hints, table_text


def english_words(text: str) -> list[str]:
    """English words of two letters or more; a one-letter word is a symbol (q, k, V, C3.2's C)."""
    return [w for w in ENGLISH_WORD.findall(IDENTIFIER.sub(" ", text)) if len(w) > 1]


def allowed_english() -> dict[str, str]:
    """word -> why the Chinese edition shows it (locales/english.yml), plus the article's own words:
    a claim box quotes the article verbatim, English identifiers and all."""
    allowed = {}
    for group in yaml.safe_load(ENGLISH_ALLOWED.read_text(encoding="utf-8"))["groups"]:
        for word in group["words"]:
            allowed[str(word)] = group["reason"]
    for entry in claims.load_ledger().values():
        for word in english_words(entry["article"]):
            allowed.setdefault(word, "the article's own words, quoted verbatim in a claim box")
    return allowed


def test_the_allowed_english_has_a_reason_for_every_word():
    groups = yaml.safe_load(ENGLISH_ALLOWED.read_text(encoding="utf-8"))["groups"]
    assert all(group["reason"].strip() and group["words"] for group in groups)
    words = [str(w) for group in groups for w in group["words"]]
    assert len(words) == len(set(words)), [w for w, n in Counter(words).items() if n > 1]


# The English words left in the tables that code cells print (their captions, headers and text
# cells, translated through cells.po), measured on the built Chinese site; it may only fall. Every
# word that stays (a name, a format, math in words) is in locales/zh_CN/english.yml with its reason.
CODE_TABLE_WORDS_AT_MOST = 0


def chinese_site_english(site: Path) -> tuple[dict[str, Counter[str]], set[str]]:
    """English words on the Chinese pages that locales/english.yml does not explain (word -> pages),
    and the English words of the code-printed tables."""
    allowed = allowed_english()
    unexplained: dict[str, Counter[str]] = {}
    in_tables: set[str] = set()
    for page in sorted(site.rglob("*.html")):
        relative = page.relative_to(site)
        if {"_static", "_sources", "slides", "_downloads", "lecture"} & set(relative.parts):
            continue  # assets, and the decks (the lecture helper's, tests/test_slides.py)
        if relative.name in GENERATED_PAGES:
            continue
        prose, tables = visible_text(page.read_text(encoding="utf-8"))
        for text in prose:
            for word in english_words(text):
                if word not in allowed and word.lower() not in allowed:
                    unexplained.setdefault(word, Counter())[str(relative)] += 1
        in_tables.update(w for text in tables for w in english_words(text) if w not in allowed)
    return unexplained, in_tables


def test_chinese_pages_show_no_english_outside_code_math_names_and_citations(built_site):
    """Every English word a reader sees on a Chinese page is either gone or
    listed, with its reason, in locales/zh_CN/english.yml (a name, a term Chinese ML writing keeps in
    English, the article's own words). The code-printed tables are counted apart, and their count
    may only fall."""
    unexplained, in_tables = chinese_site_english(built_site / "zh")
    listing = [
        f"{word!r}: " + ", ".join(f"{page} ×{n}" for page, n in pages.most_common(3))
        for word, pages in sorted(unexplained.items(), key=lambda item: -sum(item[1].values()))
    ]
    assert not unexplained, f"{len(unexplained)} English words on Chinese pages with no reason:\n" + "\n".join(
        listing[:80]
    )
    assert len(in_tables) <= CODE_TABLE_WORDS_AT_MOST, (
        f"{len(in_tables)} English words in code-printed tables, more than the {CODE_TABLE_WORDS_AT_MOST} "
        f"measured before: {sorted(in_tables)[:40]}"
    )


def table_cells(table_html: str) -> list[str]:
    """The body cells of one table as the reader sees them (text, a translation's code unmarked)."""
    from tools.locale import TABLE_CELL, cell_text

    return [cell_text(m.group(2)) for m in TABLE_CELL.finditer(table_html)]


def table_outputs(path: Path) -> list[str]:
    """The HTML of every table a code cell of one notebook prints (helpers.table)."""
    from tools.locale import is_book_table

    return [
        html
        for cell in read(path).cells
        for output in cell.get("outputs", [])
        if is_book_table(html := "".join(output.get("data", {}).get("text/html", "")))
    ]


def same_cells(english: str, chinese: str, table: dict[str, str]) -> list[str]:
    """What differs between two editions of one table's body: a cell must be the English one, or
    its translation from cells.po, and carry the same numbers (a number cell is never translated)."""
    from tools.locale import numbers

    en, zh = table_cells(english), table_cells(chinese)
    if len(en) != len(zh):
        return [f"{len(en)} English cells against {len(zh)} Chinese"]
    wrong = []
    for a, b in zip(en, zh, strict=True):
        expected = table[a].replace("`", "") if a in table else a
        if b != expected or numbers(a) != numbers(b):
            wrong.append(f"{a!r} -> {b!r}")
    return wrong


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chinese_tables_keep_every_number_and_translate_every_caption_header_and_text_cell(path):
    """The Chinese build translates a code-printed table's caption, headers, data-labels and text
    cells from cells.po (tools.locale.translate_table) and nothing else: a cell that is a number
    stays byte for byte the English one, and a translated cell carries the same numbers."""
    from tools.locale import table_messages, translate_table, translations

    table = translations("cells")
    for english in table_outputs(path):
        chinese = translate_table(english, table)
        assert not same_cells(english, chinese, table)
        assert not [m for m in table_messages(english) if m not in table], "run `make locale` and translate cells.po"
        if table_messages(english):
            assert chinese != english


def test_cell_translations_keep_every_number_and_invent_no_code():
    """cells.po: a text cell's translation has exactly the numbers of its English (sorted: Chinese word
    order may move them); a caption's or header's keeps every number of its English (it may add one,
    方差为 1 for "unit-variance"; 16 384 is written 16384); code marked in a translation (`…`) is
    code of the English cell."""
    from tools.locale import CELL_CODE, TABLE_CELL, cell_text, numbers, table_messages

    def joined(text: str) -> str:
        return re.sub(r"(?<=\d)[ \u2009\u202f](?=\d{3}\b)", "", text)

    cells = {
        cell_text(m.group(2))
        for path in chapter_notebooks()
        for output in table_outputs(path)
        for m in TABLE_CELL.finditer(output)
    }
    headers = {m for path in chapter_notebooks() for output in table_outputs(path) for m in table_messages(output)}
    wrong = []
    for m in catalog("cells"):
        if not (m.id and m.string and m.id in headers):
            continue
        if m.id in cells and numbers(m.id) != numbers(m.string):
            wrong.append(f"cell {m.id!r}: {numbers(m.id)} -> {numbers(m.string)}")
        elif lost := Counter(numbers(joined(m.id))) - Counter(numbers(joined(m.string))):
            wrong.append(f"caption or header {m.id!r}: lost {dict(lost)}")
        wrong += [
            f"{m.id!r}: code {code!r} is not the English cell's"
            for code in CELL_CODE.findall(m.string)
            if code not in m.id
        ]
    assert not wrong, "\n".join(wrong)


def test_both_editions_print_the_same_numbers_in_their_tables(built_site):
    """On the built pages: each chapter's code-printed tables, English and Chinese, in the same
    order, with the same body cells, each the English one or its translation, with the same numbers
    (every number the same computation's)."""
    from tools.locale import translations

    table, compared = translations("cells"), 0
    for path in chapter_notebooks():
        pages = [built_site / "notebooks" / f"{path.stem}.html", built_site / "zh" / "notebooks" / f"{path.stem}.html"]
        tables = [
            re.findall(r'<table class="book-table">.*?</table>', p.read_text(encoding="utf-8"), re.S) for p in pages
        ]
        assert len(tables[0]) == len(tables[1]) == len(table_outputs(path)), path.stem
        for english, chinese in zip(*tables, strict=True):
            assert not same_cells(english, chinese, table), (path.stem, same_cells(english, chinese, table)[:5])
            compared += 1
    assert compared >= 30


def citation_tooltips(page: Path) -> list[str]:
    """The tooltips of a page's inline citations (sphinxcontrib-bibtex's ``title``)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    return [str(a["title"]) for a in soup.select(".bibtex-citation a[title]")]


def test_chinese_citation_tooltips_carry_no_english_note(built_site):
    """references.bib gives most entries a ``note``, the book's own English; the Chinese edition's
    tooltips leave it out (book/_ext/zh_edition.py), the English edition's show it."""
    from pybtex.database import parse_file

    notes = [
        e.fields["note"][:40] for e in parse_file(str(ROOT / "references.bib")).entries.values() if "note" in e.fields
    ]
    pages = ["notebooks/03_softmax_saturation.html", "notebooks/06_the_experiment.html", "book/claims.html"]
    shown = {
        edition: [t for page in pages for t in citation_tooltips(built_site / edition / page)] for edition in ("", "zh")
    }
    assert len(shown["zh"]) == len(shown[""]) >= 20
    with_note = {edition: [t for t in tips if any(n in t for n in notes)] for edition, tips in shown.items()}
    assert with_note[""], "the English tooltips show no note: this test reads the wrong attribute"
    assert not with_note["zh"], with_note["zh"][:3]


def test_the_chinese_instructor_guide_offers_the_chinese_figures(built_site):
    """Its download links to the anchor figure (both layouts) and chapter 1's version fetch the copies
    with Chinese words (book/_ext/zh_edition.py); the English guide's fetch the English ones."""
    links = {
        edition: re.findall(
            r'href="[^"]*_downloads/[^"]*/(fig_\w+\.png)"',
            (built_site / edition / "book" / "instructor_guide.html").read_text(encoding="utf-8"),
        )
        for edition in ("", "zh")
    }
    assert sorted(links[""]) == ["fig_scale_at_a_glance.png", "fig_whole_chain.png", "fig_whole_chain_wide.png"]
    assert sorted(links["zh"]) == [
        "fig_scale_at_a_glance_zh.png",
        "fig_whole_chain_zh.png",
        "fig_whole_chain_zh_wide.png",
    ]


def test_the_chinese_landing_page_shows_the_chinese_figure(built_site):
    page = (built_site / "zh" / "book" / "index.html").read_text(encoding="utf-8")
    assert "fig_whole_chain_zh.png" in page and "fig_whole_chain_zh_wide.png" in page
    assert "fig_whole_chain.png" not in page and "fig_whole_chain_wide.png" not in page
    # the lecture deck opens and closes on the same figure (book/lecture.yml: anchor, closing)
    deck = (built_site / "zh" / "slides" / "lecture.html").read_text(encoding="utf-8")
    assert deck.count('src="fig_whole_chain_zh_wide.png"') == 2 and "fig_whole_chain_wide.png" not in deck
    assert (built_site / "zh" / "slides" / "fig_whole_chain_zh_wide.png").is_file()


def printed_outputs(path: Path) -> list[str]:
    """What the code cells of one notebook print to stdout."""
    from tools.locale import is_printed

    return ["".join(o.get("text", "")) for c in read(path).cells for o in c.get("outputs", []) if is_printed(o)]


def test_printed_lines_are_translated_with_the_same_numbers():
    """What code cells print in the book's words ("raw scores: std 6.4   logits: std 0.80") reads in
    Chinese on the Chinese pages (cells.po, tools.locale.translate_printed): every such line has a
    translation with the same placeholders, and each translated output prints exactly the English
    output's numbers, in its order or another."""
    from tools.locale import PLACEHOLDER, PRINTED_NUMBER, printed_messages, translate_printed

    table = translations_of_cells()
    wrong, translated = [], 0
    for path in chapter_notebooks():
        for text in printed_outputs(path):
            for message in printed_messages(text):
                if message not in table:
                    wrong.append(f"{path.stem}: no translation of {message!r} (make locale, then cells.po)")
                elif Counter(PLACEHOLDER.findall(message)) != Counter(PLACEHOLDER.findall(table[message])):
                    wrong.append(f"{path.stem}: {message!r} -> {table[message]!r} changes its placeholders")
            chinese = translate_printed(text, table)
            if chinese != text:
                translated += 1
                if sorted(PRINTED_NUMBER.findall(text)) != sorted(PRINTED_NUMBER.findall(chinese)):
                    wrong.append(f"{path.stem}: {text!r} -> {chinese!r} prints other numbers")
    assert not wrong, "\n".join(wrong)
    assert translated >= 10


def translations_of_cells() -> dict[str, str]:
    from tools.locale import translations

    return translations("cells")


def test_a_printed_line_keeps_its_numbers_and_skips_what_is_not_the_books():
    from tools.locale import translate_printed

    table = {"products that overflowed: {0} of {1}": "上溢的乘积：{1} 个中有 {0} 个"}
    assert translate_printed("products that overflowed: 681 of 4096\n", table) == "上溢的乘积：4096 个中有 681 个\n"
    assert translate_printed("RuntimeError: element 0 of tensors\n", table) == "RuntimeError: element 0 of tensors\n"
    assert translate_printed("未缩放方差: 64.9973", table) == "未缩放方差: 64.9973"
