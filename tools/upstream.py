"""Loud failures where the book reaches into another project's internals.

These places depend on code that myst-nb, Sphinx, sphinx-exercise or sphinx-book-theme does not
promise to keep:

- ``book/_ext/book_slides.py`` wraps myst-nb's markdown-cell renderer, to mark where each cell starts;
- ``book/_ext/translated_glue.py`` lends myst-nb's notebook renderer to translated paragraphs;
- ``book/_ext/site_tweaks.py`` rewrites the section names in Sphinx's label table, and gives
  sphinx-exercise's subtitle nodes the source that the translation needs;
- ``book/_ext/chapter_numbers.py`` renumbers a companion chapter (7b) in Sphinx's numbering tables;
- ``book/_ext/zh_edition.py`` translates what myst-nb, sphinx-exercise and sphinx-book-theme put on
  a page outside the page's messages;
- ``book/_ext/build_speed.py`` hands Sphinx's numref lookup
  one unpickled doctree per page, and gives the Chinese search a set where it keeps a list;
- ``tests/test_device_style_glue.py`` replaces the display function inside ``myst_nb.ext.glue``.

Each calls :func:`require` first, with the release it was checked against and the upstream code
it works around. On any other release the build (or the test) stops with a message that says what
to re-read, instead of rendering something subtly wrong. To upgrade: read that code at the new
release, adapt the patch, then change the version in the call and the pin in requirements.txt.
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
