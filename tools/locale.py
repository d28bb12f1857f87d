"""The Chinese edition: one source (the English notebooks and pages), translations in gettext catalogs.

    python -m tools.locale             # make locale: refresh the catalogs
    python -m tools.locale --fill      # only fill the derived messages (below)
    python -m tools.locale --stats     # messages, translated, fuzzy, untranslated, per catalog
    python -m tools.locale --build     # build the Chinese edition into _build/html/zh (make book)

``make locale`` extracts every message of the book with Sphinx's gettext builder
(``_build/gettext``), merges them into ``locales/zh_CN/LC_MESSAGES/**.po`` with
sphinx-intl (a changed English message becomes *fuzzy*, a new one *untranslated*),
fills what no translator types (:func:`fill_catalogs`: the article's own sentences as
原文 in every claim box, the boxes' frames and counts, and one translation for a sentence
that several pages share). The Chinese edition is built from the catalogs alone: the Chinese
site by Sphinx (``--build``), the Chinese learner notebooks by ``tools/learner.py``, from the
English notebook with its markdown (and figure captions and alt texts) replaced message by
message (:func:`chinese_notebook`, in memory: no Chinese notebook is committed).
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from sphinx_intl.catalog import dump_po, load_po

from tools import claims
from tools.notebook_format import ROOT, ZH_TOOLTIP_STYLE, chapter_notebooks, read

LANGUAGE = "zh_CN"
LOCALES = ROOT / "locales"
CATALOGS = LOCALES / LANGUAGE / "LC_MESSAGES"
GETTEXT = ROOT / "_build" / "gettext"
POT = GETTEXT / "_build" / "gettext"

# Settings the English build leaves alone and the Chinese build sets.
ZH_TITLE = "注意力为什么要除以 √dₖ"  # the landing page's h1 (book/index.po)
ZH_AUTHOR = "sqrt-dk-book 的贡献者"  # the footer's author line (_config.yml: "The sqrt-dk-book contributors")
# Strings of the notebooks that gettext never sees (book/_ext/zh_edition.py translates them in the
# Chinese build, chinese_notebook() the toggles of the Chinese learner notebooks): the folded cells' toggles,
# and the captions, headers and text cells of the tables that code cells print.
CELLS = CATALOGS / "cells.po"
# The figures' words (tools.figures.glue_copies reads them when a chapter glues a figure's Chinese copy).
FIGURES = CATALOGS / "figures.po"
# myst-nb's own toggles (nb_code_prompt_show/hide, "{type}" filled in by myst_nb/sphinx_.py#L508-L572).
CODE_PROMPTS = [
    f"{verb} code cell {kind}" for kind in ("source", "content", "output", "outputs") for verb in ("Show", "Hide")
]


def catalog(relative: str) -> Catalog:
    """The catalog of one document (``notebooks/01_where_the_scale_sits``), empty if none."""
    path = CATALOGS / f"{relative}.po"
    if not path.is_file():
        return Catalog(locale=LANGUAGE)
    with path.open("rb") as handle:
        return read_po(handle, locale=LANGUAGE)


def translations(relative: str) -> dict[str, str]:
    """msgid -> msgstr for every translated, non-fuzzy message of one document."""
    return {m.id: m.string for m in catalog(relative) if m.id and m.string and not m.fuzzy}


def write_config(kind: str) -> Path:
    """A copy of _config.yml for the gettext or the Chinese build, in _build/ (paths made absolute)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {name: str(ROOT / path) for name, path in sphinx.get("local_extensions", {}).items()}
    settings = sphinx.setdefault("config", {})
    settings["templates_path"] = [str(ROOT / p) for p in settings.get("templates_path", [])]
    settings["html_static_path"] = [str(ROOT / p) for p in settings.get("html_static_path", [])]
    if "html_favicon" in settings:
        settings["html_favicon"] = str(ROOT / settings["html_favicon"])
    config["bibtex_bibfiles"] = [str(ROOT / p) for p in config.get("bibtex_bibfiles", [])]
    if kind == "zh":
        config["title"] = ZH_TITLE
        config["author"] = ZH_AUTHOR
        sphinx["local_extensions"]["zh_edition"] = str(ROOT / "book" / "_ext")
        # the themes' templates whose tooltips are typed in English (the zh review's F14), translated
        settings["templates_path"] = [str(LOCALES / LANGUAGE / "_templates"), *settings["templates_path"]]
        settings.setdefault("html_theme_options", {})["search_bar_text"] = "搜索本书……"
        # sphinx-togglebutton's hint beside a closed or open solution, typed in its config, not a catalog
        settings.update({"togglebutton_hint": "点击显示", "togglebutton_hint_hide": "点击隐藏"})
        # a citation's tooltip without the English note of its entry (book/_ext/zh_edition.py)
        settings["bibtex_tooltips_style"] = ZH_TOOLTIP_STYLE
        # Chinese typography (no faux italics): locales/zh_CN/_assets/zh.css
        settings["html_static_path"] = [*settings["html_static_path"], str(LOCALES / LANGUAGE / "_assets")]
        settings["html_css_files"] = [*settings.get("html_css_files", []), "zh.css"]
        # no line starts with a closing mark after inline math (locales/zh_CN/_assets/zh.js)
        settings["html_js_files"] = [*settings.get("html_js_files", []), "zh.js"]
        config["repository"]["path_to_book"] = f"locales/{LANGUAGE}"  # (launch buttons: book/_ext/learner_links.py)
        settings.update({"language": LANGUAGE, "locale_dirs": [str(LOCALES)], "html_search_language": "zh"})
    path = ROOT / "_build" / f"_config_{kind}.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def write_toc() -> Path:
    """_toc.yml with its part captions translated (book/index.po, where Sphinx extracts them; the
    translation of a toctree caption never reaches the built sidebar: the zh review's finding F7)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    table = translations("book/index")
    for part in toc.get("parts", []):
        part["caption"] = table.get(part["caption"], part["caption"])
    path = ROOT / "_build" / "_toc_zh.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(toc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def jupyter_book_build(kind: str, *options: str) -> list[str]:
    """`jupyter-book build` of this repository with the generated config of ``kind``, warnings as errors."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    toc = ["--toc", str(write_toc())] if kind == "zh" else []
    return [
        str(jupyter_book),
        "build",
        str(ROOT),
        "--config",
        str(write_config(kind)),
        *toc,
        *options,
        "-W",
        "-n",
        "--keep-going",
    ]


def extract() -> None:
    """Sphinx's gettext builder: one .pot per document, in _build/gettext/_build/gettext."""
    command = jupyter_book_build(
        "gettext", "--builder", "custom", "--custom-builder", "gettext", "--path-output", str(GETTEXT), "--all"
    )
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def update_catalogs() -> None:
    """Merge the fresh .pot files into the .po catalogs (sphinx-intl)."""
    sphinx_intl = Path(sys.executable).parent / "sphinx-intl"
    command = [str(sphinx_intl), "update", "-p", str(POT), "-l", LANGUAGE, "-d", str(LOCALES), "-w", "0"]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    for po in CATALOGS.rglob("*.po"):
        drop_format_flags(po)
    keep_theme_overrides(CATALOGS / "sphinx.po")
    update_cell_catalog()
    update_figure_catalog()


def keep_theme_overrides(po: Path) -> None:
    """``sphinx.po`` translates Sphinx's and the theme's own strings ("Link to this heading", the
    copyright line) where their built-in Chinese is not mainland usage. The gettext builder does
    not extract those strings, so sphinx-intl marks them obsolete (``#~``) at every refresh, and
    the Chinese pages would fall back to the built-in text: keep every entry of this one catalog."""
    if po.is_file():
        lines = po.read_text(encoding="utf-8").split("\n")
        po.write_text("\n".join(line.removeprefix("#~ ") for line in lines), encoding="utf-8")


def cell_messages() -> list[str]:
    """The strings of the chapter notebooks that Sphinx does not extract: myst-nb's toggles, each
    folded cell's own labels (``mystnb.code_prompt_show``/``code_prompt_hide``), and the captions,
    column headers and text cells of the tables that code cells print (helpers.table), in order of appearance."""
    found = dict.fromkeys(CODE_PROMPTS)
    for path in chapter_notebooks():
        for cell in read(path).cells:
            options = cell.metadata.get("mystnb", {})
            for key in ("code_prompt_show", "code_prompt_hide"):
                if options.get(key):
                    found[options[key]] = None
            for output in cell.get("outputs", []):
                output_html = "".join(output.get("data", {}).get("text/html", ""))
                if is_book_table(output_html):
                    found.update(dict.fromkeys(table_messages(output_html)))
                if is_printed(output):
                    found.update(dict.fromkeys(printed_messages("".join(output.get("text", "")))))
    return list(found)


# What a code cell prints (its stdout) in the book's own words: "raw scores: std 6.4   logits: std 0.80".
# Each such line is a message of cells.po with its numbers as placeholders ("raw scores: std {0}   logits:
# std {1}"); the Chinese line gets the printed numbers back, in the same order or another, so both
# editions print the same numbers by construction (tests/test_locale.py checks it on every line).
# Not the book's words, and left as printed: a line that is already Chinese (the article's code prints
# Chinese), Python's and IPython's own messages (an exception, %xmode), and a line without a word.
PRINTED_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
PLACEHOLDER = re.compile(r"\{(\d+)\}")
NOT_THE_BOOKS = re.compile(r"[\u4e00-\u9fff]|^\s*(?:\w+(?:Error|Exception|Warning)\b|Exception reporting mode)")


def is_printed(output: dict) -> bool:
    return output.get("output_type") == "stream" and output.get("name") == "stdout"


def printed_template(line: str) -> tuple[str, list[str]] | None:
    """A printed line as a message (its numbers as {0}, {1}, ...) and its numbers; None if not the book's words."""
    if not has_words(line) or NOT_THE_BOOKS.search(line):
        return None
    numbers_found: list[str] = []

    def hole(match: re.Match[str]) -> str:
        numbers_found.append(match.group(0))
        return f"{{{len(numbers_found) - 1}}}"

    return PRINTED_NUMBER.sub(hole, line.strip()), numbers_found


def printed_messages(text: str) -> list[str]:
    """The messages of one printed output, one per line of the book's words."""
    return [t[0] for t in map(printed_template, text.splitlines()) if t is not None]


def translate_printed(text: str, table: dict[str, str]) -> str:
    """A printed output with every line of the book's words in Chinese (cells.po), its numbers put back."""
    lines = []
    for line in text.split("\n"):
        template = printed_template(line)
        if template is not None and template[0] in table:
            indent = line[: len(line) - len(line.lstrip())]
            line = indent + PLACEHOLDER.sub(lambda m, found=template[1]: found[int(m.group(1))], table[template[0]])
        lines.append(line)
    return "\n".join(lines)


# helpers.table's HTML (helpers/book.py, Table._repr_html_): a caption, header cells, body cells,
# and each body cell's header again as its data-label (a phone shows it beside the value).
TABLE_CAPTION = re.compile(r"(<caption>)([^<]*)(</caption>)")
TABLE_HEADER = re.compile(r"(<th [^>]*>)([^<]*)(</th>)")
TABLE_LABEL = re.compile(r'( data-label=")([^"]*)(")')
TABLE_CELL = re.compile(r"(<td [^>]*>)(.*?)(</td>)", re.S)
# A number as a table prints it (65, 1.02, 10⁻³'s exponent, −0.5): a translation keeps every one.
NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+")
# Code inside a translated text cell (`math.sqrt(d)`), shown as code: the cell has no markup of its own.
CELL_CODE = re.compile(r"`([^`]+)`")


def is_book_table(output_html: str) -> bool:
    return output_html.startswith('<table class="book-table">')


def has_words(text: str) -> bool:
    """Text with a word in it (two Latin letters), not a bare number or symbol."""
    return re.search("[A-Za-z]{2}", text) is not None


def numbers(text: str) -> list[str]:
    """The numbers of a caption, header or cell, sorted: a translation may move them, never change one."""
    return sorted(NUMBER.findall(CELL_CODE.sub(r"\1", text)))


def cell_text(cell_html: str) -> str:
    """A body cell's text as the reader sees it (its markup, if a translation added code, removed)."""
    return html.unescape(re.sub(r"<[^>]+>", "", cell_html))


def table_messages(output_html: str) -> list[str]:
    """The caption, the column headers and the text cells (those with words, not bare numbers) of one
    table printed by helpers.table, as the reader sees them."""
    found = [TABLE_CAPTION.search(output_html)] + list(TABLE_HEADER.finditer(output_html))
    found += list(TABLE_CELL.finditer(output_html))
    return [html.unescape(m.group(2)) for m in found if m and has_words(m.group(2))]


def cell_html(translation: str) -> str:
    """A translated text cell as HTML: escaped, with its `code` spans as inline code."""
    parts = CELL_CODE.split(translation)
    return "".join(
        f'<code class="docutils literal notranslate">{html.escape(part)}</code>' if odd else html.escape(part)
        for odd, part in ((i % 2 == 1, p) for i, p in enumerate(parts))
    )


def translate_table(output_html: str, table: dict[str, str]) -> str:
    """The same table with its caption, headers, data-labels and text cells translated from cells.po;
    the markup, and every cell without words (a number), byte for byte as it was. A translation keeps
    every number of its English (tests/test_locale.py compares them, cell by cell)."""

    def swap(match: re.Match[str]) -> str:
        text = html.unescape(match.group(2))
        return match.group(1) + html.escape(table.get(text, text)) + match.group(3)

    def swap_cell(match: re.Match[str]) -> str:
        text = html.unescape(match.group(2))
        if text not in table:
            return match.group(0)
        return match.group(1) + cell_html(table[text]) + match.group(3)

    for pattern in (TABLE_CAPTION, TABLE_HEADER, TABLE_LABEL):
        output_html = pattern.sub(swap, output_html)
    return TABLE_CELL.sub(swap_cell, output_html)


def figure_sources() -> dict[str, list[str] | None]:
    """``<notebook>::<name>`` -> the English texts of each Chinese figure copy a chapter glues
    (``<name>_zh``, ``<name>_zh_wide``: tools.figures.glue_copies stamps them in the PNG, ``Source-Texts``);
    None for a copy glued before it stamped them (chapter 6's whole-chain figure, until it runs again)."""
    import base64
    import io
    import json

    from PIL import Image

    from tools.figures import SOURCE_TEXTS_KEY
    from tools.notebook_format import GLUE_PREFIX

    found: dict[str, list[str] | None] = {}
    for path in chapter_notebooks():
        for cell in read(path).cells:
            for output in cell.get("outputs", []):
                name = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
                png = output.get("data", {}).get(GLUE_PREFIX + "image/png")
                if png and re.fullmatch(r"fig_\w+_zh(_wide)?", name):
                    data = base64.b64decode(png if isinstance(png, str) else "".join(png))
                    texts = Image.open(io.BytesIO(data)).info.get(SOURCE_TEXTS_KEY)
                    found[f"{path.stem}::{name}"] = json.loads(texts) if texts is not None else None
    return found


def figure_messages(sources: dict[str, list[str] | None], current: dict[str, str]) -> list[str]:
    """The messages of ``figures.po``: every figure text, in order of appearance, except a text that
    the catalog's pieces already put wholly into Chinese (a legend entry is a scale's label from
    helpers.SCALE_LABELS plus ``", same lr"``: one translation each, whatever the numbers between);
    then every piece still in use (found inside a figure text). A text is in Chinese when it keeps no
    English word that no translation keeps (``logit``, ``SGD``; math does not count). While a copy
    stamps no texts (None), every message of the catalog stays: which of them it uses is unknown."""
    from tools.figures import english_words, translate_text

    kept = {word for string in current.values() for word in english_words(string)}
    texts = list(dict.fromkeys(text for texts in sources.values() for text in texts or []))

    def needs_own(text: str) -> bool:
        others = {key: value for key, value in current.items() if key != text and value}
        return bool(set(english_words(translate_text(text, others))) - kept)

    wanted = [text for text in texts if needs_own(text)]
    unknown = any(found is None for found in sources.values())
    return wanted + [m for m in current if m not in wanted and (unknown or any(m and m in text for text in texts))]


def update_figure_catalog() -> None:
    """figures.po from the figures' own words (:func:`figure_messages`), merged like the other catalogs:
    a new text is untranslated, a text no figure draws any more becomes obsolete."""
    current = load_po(str(FIGURES)) if FIGURES.is_file() else Catalog(locale=LANGUAGE)
    table = {m.id: m.string for m in current if m.id and not m.fuzzy}
    template = Catalog(locale=LANGUAGE)
    for message in figure_messages(figure_sources(), table):
        template.add(message)
    if [m.id for m in current if m.id] == [m.id for m in template if m.id] and not current.obsolete:
        return
    current.update(template, update_header_comment=False)
    dump_po(str(FIGURES), current, width=0, ignore_obsolete=False)
    drop_format_flags(FIGURES)


def update_cell_catalog() -> None:
    """cells.po, merged like the pages' catalogs: a changed label becomes fuzzy, a new one untranslated."""
    template = Catalog(locale=LANGUAGE)
    for message in cell_messages():
        template.add(message)
    current = load_po(str(CELLS)) if CELLS.is_file() else Catalog(locale=LANGUAGE)
    if [m.id for m in current if m.id] == [m.id for m in template if m.id] and not current.obsolete:
        return  # nothing new: leave the file (and its dates) alone
    current.update(template)
    dump_po(str(CELLS), current, width=0, ignore_obsolete=False)
    drop_format_flags(CELLS)


def fill_catalogs() -> list[str]:
    """Write the messages nobody translates by hand, in every catalog; return what changed.

    1. **Derived from book/claims.yml** (``tools.claims.derived_messages``): where a box or the ledger
       shows the book's English translation of the article, the Chinese edition shows the article's
       own sentence (原文), verbatim; titles, part heads, table cells and counts follow from the data.
    2. **One sentence, one translation** (zh review F5). The ledger page repeats every verdict box, and
       its catalog (``book/claims.po``) is where a box's sentences are translated: its translation
       replaces any other of the same message. Elsewhere, a message that is untranslated or fuzzy in one
       catalog takes the translation the same message has in another, when exactly one exists.
    """
    derived = claims.derived_messages(claims.load_ledger())
    catalogs = {po: load_po(str(po)) for po in sorted(CATALOGS.rglob("*.po"))}
    changed: dict[Path, list[str]] = {}

    def put(po: Path, message, string: str, why: str) -> None:
        if message.string == string and not message.fuzzy:
            return
        message.string = string
        message.flags.discard("fuzzy")
        message.previous_id = []
        changed.setdefault(po, []).append(f"{why}: {message.id[:60]!r}")

    for po, cat in catalogs.items():
        for message in cat:
            if message.id and message.id in derived:
                put(po, message, derived[message.id], "derived")
    ledger_po = CATALOGS / "book" / "claims.po"
    from_ledger = {m.id: m.string for m in catalogs.get(ledger_po, []) if m.id and m.string and not m.fuzzy}
    for po, cat in catalogs.items():
        for message in cat:
            if po != ledger_po and message.id in from_ledger and message.id not in derived:
                put(po, message, from_ledger[message.id], "from the ledger")
    shared: dict[str, set[str]] = {}
    for cat in catalogs.values():
        for message in cat:
            if message.id and message.string and not message.fuzzy:
                shared.setdefault(message.id, set()).add(message.string)
    for po, cat in catalogs.items():
        for message in cat:
            known = shared.get(message.id, set())
            if len(known) > 1:  # a word kept in English on purpose somewhere (a glossary headword) is no rival
                known = known - {message.id}
            if message.id and (message.fuzzy or not message.string) and len(known) == 1:
                put(po, message, next(iter(known)), "shared")
    for po in changed:
        dump_po(str(po), catalogs[po], width=0, ignore_obsolete=False)
        drop_format_flags(po)
    return [f"{po.relative_to(CATALOGS)}: {line}" for po, lines in changed.items() for line in lines]


FORMAT_FLAG = re.compile(r",\s*(?:no-)?python(?:-brace)?-format\b")


def drop_format_flags(po: Path) -> None:
    """Babel flags any message with `{…}` or `% x` as a Python format string; ours are MyST, never
    formatted, and the flag makes `msgfmt -c` reject a correct translation (`…% 的输入`)."""
    text = po.read_text(encoding="utf-8")
    lines = [FORMAT_FLAG.sub("", line) if line.startswith("#,") else line for line in text.split("\n")]
    po.write_text("\n".join(line for line in lines if line.strip() != "#"), encoding="utf-8")


def _pattern(message: str) -> re.Pattern[str]:
    """A message as it may stand in markdown: Sphinx joined its lines with single spaces."""
    return re.compile(r"\s+".join(re.escape(word) for word in message.split()))


def translate_markdown(source: str, table: dict[str, str]) -> str:
    """Replace every catalog message found in ``source`` by its translation, longest first."""
    for message in sorted(table, key=len, reverse=True):
        if len(message.split()) == 0:
            continue
        source = _pattern(message).sub(lambda _m, s=table[message]: s, source)
    return source


MATH_SPAN = re.compile(r"\$[^$]+\$")
DIRECTIVE_TITLE = re.compile(r"^(?P<head>[ \t]*(?:`{3,}|:{3,})\{[\w:.-]+\}[ \t]+)(?P<title>\S.*?)[ \t]*$", re.M)


def retitle_directives(source: str, table: dict[str, str]) -> str:
    """Translate directive titles with math: Sphinx's message is the title without its ``$``
    (``How normal at d_k = 4?``); the translation gets the math back where its plain text stands."""

    def retitle(match: re.Match[str]) -> str:
        title = match.group("title")
        translation = table.get(MATH_SPAN.sub(lambda m: m.group(0)[1:-1], title))
        if not MATH_SPAN.search(title) or translation is None:
            return match.group(0)
        for span in MATH_SPAN.findall(title):
            translation = translation.replace(span[1:-1], span, 1)
        return match.group("head") + translation

    return DIRECTIVE_TITLE.sub(retitle, source)


def chinese_notebook(path: Path, table: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """One chapter's Chinese notebook: its prose from the catalog (or ``table``), its code and outputs untouched."""
    notebook = read(path)
    table = translations(f"notebooks/{path.stem}") if table is None else table
    toggles = translations("cells")
    result = copy.deepcopy(notebook)
    for cell in result.cells:
        if cell.cell_type == "markdown":
            # a directive's title with math (an exercise's) is a message without its `$`
            cell.source = translate_markdown(retitle_directives(cell.source, table), table)
        options = cell.metadata.get("mystnb", {})
        for key in ("code_prompt_show", "code_prompt_hide"):
            if options.get(key) in toggles:
                options[key] = toggles[options[key]]
        for key, field in (("figure", "caption"), ("image", "alt")):
            text = options.get(key, {}).get(field)
            if text:
                options[key][field] = translate_markdown(text, table)
    result.metadata.setdefault("language_info", {})
    result.metadata["book_language"] = LANGUAGE
    return result


def build_chinese(extra: list[str]) -> int:
    """The Chinese edition, from the same sources and the catalogs, into _build/html/zh.

    Its pages' download, Colab and Binder buttons offer the Chinese learner notebooks
    (``book/_ext/learner_links.py``).
    """
    output = ROOT / "_build" / "zh"
    command = jupyter_book_build("zh", "--path-output", str(output), *extra)
    result = subprocess.run(command, cwd=ROOT)
    if result.returncode != 0:
        return result.returncode
    built, site = output / "_build" / "html", ROOT / "_build" / "html" / "zh"
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(built, site)
    print(f"The Chinese edition: {site / 'index.html'}")
    return 0


def stats() -> dict[str, tuple[int, int, int]]:
    """Per catalog: (messages, fuzzy, untranslated)."""
    result = {}
    for po in sorted(CATALOGS.rglob("*.po")):
        messages = [m for m in catalog(str(po.relative_to(CATALOGS).with_suffix(""))) if m.id]
        fuzzy = sum(1 for m in messages if m.fuzzy)
        untranslated = sum(1 for m in messages if not m.string)
        result[str(po.relative_to(CATALOGS))] = (len(messages), fuzzy, untranslated)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stats", action="store_true", help="only count messages")
    parser.add_argument("--fill", action="store_true", help="only fill the derived and shared messages")
    parser.add_argument(
        "--build", nargs=argparse.REMAINDER, help="build the Chinese edition (extra jupyter-book flags)"
    )
    args = parser.parse_args()
    if args.build is not None:
        return build_chinese(args.build)
    if not (args.stats or args.fill):
        extract()
        update_catalogs()
    if not args.stats:
        for line in fill_catalogs():
            print(f"locale: filled {line}")
    total = [0, 0, 0]
    for name, counts in stats().items():
        total = [t + c for t, c in zip(total, counts, strict=True)]
        print(f"{name:48} {counts[0]:5d} messages, {counts[1]:4d} fuzzy, {counts[2]:4d} untranslated")
    print(f"{'total':48} {total[0]:5d} messages, {total[1]:4d} fuzzy, {total[2]:4d} untranslated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
