"""The lecture deck's messages in the Chinese catalog, as the pages' are (``python -m tools.lecture_catalog``).

``book/lecture.yml`` is not a Sphinx document, so Sphinx's gettext builder does not see it. This
writes its messages (every title, text, point, alt text and speaker note, whitespace folded, in
the order the deck shows them) into ``locales/zh_CN/LC_MESSAGES/slides/lecture.po``, keeping each
translation that is still current; a new message is untranslated, a changed one starts anew, and
``tests/test_locale.py`` then fails until it is translated, as for a page. The Chinese build's
deck (book/_ext/book_slides.py, ``translate``) reads the catalog.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from tools.notebook_format import ROOT

LECTURE = ROOT / "book" / "lecture.yml"
CATALOG = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "slides" / "lecture.po"
FRAME_KEYS = ("heading", "points", "alt", "notes")
SLIDE_KEYS = ("title", "text", "notes")


def fold(text: str) -> str:
    return " ".join(str(text).split())


def messages(frame: dict | None = None) -> list[str]:
    """Every message of the lecture, each once, in the deck's order."""
    frame = frame if frame is not None else yaml.safe_load(LECTURE.read_text(encoding="utf-8"))
    found: list[str] = []

    def add(value) -> None:
        for text in value if isinstance(value, list) else [value]:
            if text and fold(text) not in found:
                found.append(fold(text))

    for key in ("title", "subtitle", "title_notes"):
        add(frame.get(key))
    for part in ("anchor",):
        for key in FRAME_KEYS:
            add(frame[part].get(key))
    for entries in frame["slides"].values():
        for entry in entries:
            for key in SLIDE_KEYS:
                add(entry.get(key))
    for key in FRAME_KEYS:
        add(frame["closing"].get(key))
    return found


def read(path: Path = CATALOG) -> Catalog:
    if not path.is_file():
        return Catalog(locale="zh_CN")
    with path.open("rb") as handle:
        return read_po(handle, locale="zh_CN")


def translations(path: Path = CATALOG) -> dict[str, str]:
    """msgid -> msgstr of the translated, current messages."""
    return {m.id: m.string for m in read(path) if m.id and m.string and not m.fuzzy}


def update(path: Path = CATALOG) -> Catalog:
    old, previous = translations(path), read(path)
    # the header's dates stay as they were, so that an unchanged lecture rewrites the same file
    catalog = Catalog(
        locale="zh_CN",
        project="sqrt-dk-book",
        fuzzy=False,
        creation_date=previous.creation_date,
        revision_date=previous.revision_date,
    )
    for message in messages():
        catalog.add(message, old.get(message, ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, omit_header=False, sort_output=False)
    from tools.locale import drop_format_flags  # as make locale leaves every catalog

    drop_format_flags(path)
    return catalog


if __name__ == "__main__":
    written = update()
    missing = sum(1 for m in written if m.id and not m.string)
    print(f"{CATALOG.relative_to(ROOT)}: {len(written)} messages, {missing} untranslated")
