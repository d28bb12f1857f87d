"""The glue-role grammar of ``tools/notebook_format.py`` is the one myst-nb 1.4.0 reads.

Each case runs myst-nb's own role class on a role's content, with the two functions that
would look the value up replaced by recorders, and compares what myst-nb asked for (which
notebook, which key, which format) with ``parse_glue_role``. Then every glue role the book
writes (pages, notebooks, catalogs, the lecture's frame) must parse and be read as meant.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tools.notebook_format import ROOT, GlueRole, glue_roles, parse_glue_role, paste_glue_roles

OTHER = "../notebooks/03_softmax_saturation.ipynb"


def myst_nb_reads(role: str, monkeypatch) -> tuple[str | None, str, str | None]:
    """(notebook path or None, key, format) as myst-nb 1.4.0's role for ``role`` asks for them."""
    import myst_nb.ext.glue.roles as roles

    asked: dict[str, object] = {}

    def pending(document, source, line, doc, key, inline=False, gtype=None, **kwargs):
        asked.update(path=doc, key=key, format=kwargs.get("fmt_spec"))
        return SimpleNamespace()

    def markdown(mime):
        asked["format"] = mime.cell_metadata["mystnb"]["markdown_format"]
        return []

    class Result:  # a glued value, as retrieve_glue_data returns it
        data = {"text/plain": "1.5", "text/markdown": "x"}
        metadata: dict[str, object] = {}
        nb_renderer = SimpleNamespace(
            renderer=SimpleNamespace(nb_config=SimpleNamespace(cell_metadata_key="mystnb")),
            render_markdown_inline=markdown,
        )

    def retrieve(document, key):
        asked.update(path=None, key=key)
        return Result()

    def formatted(text, spec):
        asked["format"] = spec
        return text

    monkeypatch.setattr(roles, "create_pending_glue_ref", pending)
    monkeypatch.setattr(roles, "retrieve_glue_data", retrieve)
    monkeypatch.setattr(roles, "format_plain_text", formatted)
    monkeypatch.setattr(roles, "render_variable_outputs", lambda *args, **kwargs: [])
    name, content = role[1:].split("}", 1)
    kinds = {"glue:text": roles.PasteTextRole, "glue:md": roles.PasteMarkdownRole}  # glue, glue:, glue:any
    instance = kinds.get(name, roles.PasteRoleAny)()
    instance.text, instance.source, instance.line = content.strip("`"), "page.md", 1
    instance.inliner = SimpleNamespace(document=None)
    instance.run()
    return asked.get("path"), str(asked["key"]), asked.get("format")  # type: ignore[return-value]


CASES = [
    # role, what it means: (kind, key, path, format)
    ("{glue:text}`k`", ("text", "k", None, None)),
    ("{glue:text}`k:.2f`", ("text", "k", None, ".2f")),
    ("{glue:text}`k:.1%`", ("text", "k", None, ".1%")),
    (f"{{glue:text}}`{OTHER}::k:s`", ("text", "k", OTHER, "s")),
    (f"{{glue:text}}`{OTHER}::k:#.2g`", ("text", "k", OTHER, "#.2g")),
    ("{glue}`k`", ("any", "k", None, None)),
    ("{glue:}`k`", ("any", "k", None, None)),
    (f"{{glue:any}}`{OTHER}::k`", ("any", "k", OTHER, None)),
    ("{glue:md}`k`", ("md", "k", None, None)),
    ("{glue:md}`k:gfm`", ("md", "k", None, "gfm")),
]
DEFAULT_FORMAT = {"text": "s", "md": "commonmark", "any": None}


@pytest.mark.parametrize("role, meant", CASES, ids=[c[0] for c in CASES])
def test_the_grammar_reads_each_role_as_myst_nb_does(role, meant, monkeypatch):
    parsed = parse_glue_role(role)
    assert parsed == GlueRole(*meant)
    assert not parsed.misread_by_myst_nb
    assert myst_nb_reads(role, monkeypatch) == (parsed.path, parsed.key, parsed.format or DEFAULT_FORMAT[parsed.kind])
    assert parse_glue_role(str(parsed)) == parsed  # written back, it means the same


def test_another_pages_text_without_a_format_is_what_myst_nb_misreads(monkeypatch):
    role = f"{{glue:text}}`{OTHER}::k`"
    parsed = parse_glue_role(role)
    assert (parsed.path, parsed.key, parsed.format) == (OTHER, "k", None) and parsed.misread_by_myst_nb
    # myst-nb 1.4.0 takes the last colon for the format's and looks for a key "<path>:" on this page
    assert myst_nb_reads(role, monkeypatch) == (None, f"{OTHER}:", "k")
    assert str(parsed) == f"{{glue:text}}`{OTHER}::k:s`"  # written back in the form it reads as meant
    assert myst_nb_reads(str(parsed), monkeypatch) == (OTHER, "k", "s")


@pytest.mark.parametrize(
    "role", ["{glue:md}`a::k`", "{glue}`k:s`", "{glue:text}`k-x`", "{glue:text}``", "{ref}`x`", "{glue:figure}`k`"]
)
def test_malformed_roles_are_refused_by_name(role):
    with pytest.raises(ValueError, match="glue role|takes"):
        parse_glue_role(role)


def test_pasting_formats_as_myst_nb_does():
    values = {"a": "0.250", "b": "'text'", "c": "1234.5"}
    text = "{glue:text}`a` {glue:text}`a:.1%` {glue:text}`b` {glue:text}`c:.3g` {glue:text}`x.ipynb::c:.0f`"
    # myst-nb reads the glued text back as a literal first: 0.250 pastes as 0.25, 'text' as text
    assert paste_glue_roles(text, lambda role: values[role.key]) == "0.25 25.0% text 1.23e+03 1234"


def book_sources() -> list[Path]:
    """Every file whose glue roles myst-nb reads: the pages, the notebooks (both editions), the
    catalogs, and the lecture's frame (book_slides.py pastes it by the same grammar)."""
    return sorted(
        [*(ROOT / "book").glob("*.md"), ROOT / "book" / "lecture.yml", *(ROOT / "notebooks").glob("*.ipynb")]
        + [*(ROOT / "locales").rglob("*.po"), *(ROOT / "locales").rglob("*.ipynb")]
    )


def test_every_role_of_the_book_is_read_as_meant():
    misread, count = [], 0
    for path in book_sources():
        for role in glue_roles(path.read_text(encoding="utf-8")):  # a malformed role fails here, by name
            count += 1
            if role.misread_by_myst_nb:
                misread.append(f"{path.relative_to(ROOT)}: {role.path}::{role.key} (write {role})")
    assert count > 100, "the book's glue roles were found"
    assert not misread, "roles myst-nb 1.4.0 reads as another key (give the format):\n" + "\n".join(misread)
