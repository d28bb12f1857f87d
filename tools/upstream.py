"""Loud failures where the book reaches into another project's internals, and the plan to stop doing so.

Each patch calls :func:`require` first, with the release it was checked against and the upstream code it
works around. On any other release the build stops with a message that says what to re-read, instead of
rendering something subtly wrong. To upgrade: read that code at the new release, adapt the patch, then
change the version in the call and the pin in requirements.txt.

Ten guards remain (there were eleven: a test's went, see the end), over eleven patches. For each, what
upstream would have to change for it to go (the issues cited were read, and open, in December 2026; "none
found": a search of the project's tracker found no issue to follow):

1. ``book/_ext/build_speed.py``, Sphinx 7.4.7, numref: ``_resolve_numref_xref`` unpickles the target page's
   doctree once per reference; the patch hands it one unpickled doctree per page. Goes when Sphinx caches
   unpickled doctrees in ``get_doctree`` (sphinx-doc/sphinx#12883; the fix proposed in #12882 was closed
   unmerged). Or drop the patch and accept the slower Chinese build (about 218 s instead of 97 s).
2. ``book/_ext/build_speed.py``, same guard, search: ``SearchChinese.latin_terms`` is a list that every
   word is looked up in; the patch makes it a set. Goes when Sphinx keeps a set there (none found; a
   one-line upstream change to propose).
3. ``book/_ext/chapter_numbers.py``, Sphinx 7.4.7: numbers the companion chapter 7b in Sphinx's numbering
   tables. Needs no upstream change: goes when 7b is renumbered as a chapter of its own (8, and 8 becomes 9)
   or folded into chapter 7 as a section. Planned, not done: it renames a notebook and every reference to it
   (pages, catalogs, claims, glue paths, the lecture), so it waits for a quiet moment between releases.
4. ``book/_ext/site_tweaks.py``, Sphinx 7.4.7: a reference to a section whose title holds math or code shows
   the title's source (``{\rm ...}``); the patch writes plain section names into the label table. Goes when
   Sphinx renders references to such titles (sphinx-doc/sphinx#8139 and #6522, both open).
5. ``book/_ext/site_tweaks.py``, sphinx-exercise 1.2.1: the exercise subtitle node carries no source, so
   gettext skips exercise titles. Goes with sphinx-exercise's internationalisation
   (executablebooks/sphinx-exercise#13 and #73, open).
6. ``book/_ext/zh_edition.py``, sphinx-exercise 1.2.1: a solution's title is copied from the registry's
   untranslated copy of its exercise. Same issues as 5.
7. ``book/_ext/zh_edition.py``, myst-nb 1.4.0: the show/hide prompts of folded cells (``HideInputCells``,
   per-cell ``code_prompt_show``) bypass the page's messages. Goes when myst-nb's prompts go through
   gettext (none found).
8. ``book/_ext/zh_edition.py``, sphinx-book-theme 1.2.0: the theme's own zh_CN catalog (``booktheme``)
   is incomplete and in Taiwanese usage, so the book's ``booktheme.po`` is put in front of it. Goes once
   the theme's zh_CN catalog has the book's strings (related: executablebooks/sphinx-book-theme#600, open):
   they can be contributed upstream.
9. ``book/_ext/translated_glue.py``, myst-nb 1.4.0: glue roles inside a translated paragraph are parsed
   without the notebook's renderer, so the glued value is lost. Goes when myst-nb supports Sphinx's
   internationalisation workflow for notebooks (executablebooks/MyST-NB#587, open).
10. ``book/_ext/translated_glue.py``, Sphinx 7.4.7: ``publish_msgstr`` re-parses a translated message with
    a fresh parser; the patch lends it myst-nb's renderer. Same issue as 9.
11. ``book/_ext/book_slides.py``, myst-nb 1.4.0: marks where each markdown cell starts, which a notebook's
    doctree does not record (its sections must stay at the top of the doctree; myst-nb's renderer has a
    TODO that proposes this very marker). Goes when myst-nb marks cell boundaries
    (executablebooks/MyST-NB#227, open), or with the per-chapter decks if the book keeps only the written
    lecture deck.

(A test, ``tests/test_device_style_glue.py``, used to replace a name inside ``myst_nb.ext.glue`` to compare
``helpers.glue`` with ``myst_nb.glue``; it now captures both through IPython's public display publisher, so
that guard went.)
"""

from __future__ import annotations

from importlib.metadata import version

from sphinx.errors import ExtensionError


class UpstreamChanged(ExtensionError):
    """The installed release is not the one a patch of its internals was checked against."""


def require(distribution: str, checked: str, patch: str, upstream: str) -> None:
    """Raise :class:`UpstreamChanged` unless ``distribution`` is installed at release ``checked``.

    ``patch`` says what depends on its internals, ``upstream`` where they are (a file at that release,
    an issue); both go into the message.
    """
    installed = version(distribution)
    if installed != checked:
        raise UpstreamChanged(
            f"{patch} relies on internals of {distribution} as they are in release {checked}, and this "
            f"environment has {distribution} {installed}. Re-read {upstream} at {installed}, adapt the patch, "
            f"then change the release it checks (tools.upstream.require) and the pin in requirements.txt."
        )
