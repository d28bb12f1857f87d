"""Two costs of Sphinx 7.4.7 that grow with the book, removed without changing what Sphinx writes.

Listed in ``_config.yml`` after a build of both editions with it was compared byte for byte with one
without it (2026-12-02, main 66c4d21): every file the same but the lecture PDFs' creation dates. The
Chinese edition's build took 97 s with it against 218 s without (107 against 226 CPU s, two idle cores).

- **A numbered reference unpickles its target's page.** ``:numref:`` (every "Figure 3.2",
  "Exercise 6.1", "§7b.3" in the prose) looks its target node up in the target page's doctree, and
  ``env.get_doctree`` unpickles that page again for each reference: a chapter with its glued
  figures and tables is a large pickle (a profile of the Chinese build counted 145 such lookups).
  The lookup only reads the node (its type and its number), so one unpickled copy per page serves
  every reference to it while pages are written. Upstream: ``StandardDomain._resolve_numref_xref``
  (sphinx/domains/std/__init__.py#L903-L965) calls ``env.get_doctree`` (sphinx/environment/
  __init__.py#L620-L632, which caches the bytes, not the tree); reported as sphinx-doc/sphinx#12883
  (its fix, #12882, cached every caller's tree and was not merged: a caller that changes the tree
  it gets would change the cached one; here only this read-only lookup gets the shared copy).
- **The Chinese search index tests each word against a list of every Latin word seen so far.**
  ``SearchChinese.split`` appends each page's Latin words to ``latin_terms`` (a list, duplicates
  kept) and ``stem`` asks ``word in latin_terms`` for every word it stems (sphinx/search/zh.py
  #L227, #L244, #L255). Only membership is asked, so a set answers the same in constant time.

``setup`` stops the build on any other Sphinx release (``tools.upstream``). Each environment
keeps its own trees (an attribute of ``env``, dropped when reading ends and when the build ends, so
never pickled), so a second load of this module or a second build in one process shares nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.upstream import require  # noqa: E402

TARGET_PAGES = "_book_numref_target_pages"  # env attribute: docname -> its doctree, unpickled once


class _TargetPages:
    """The build environment as ``_resolve_numref_xref`` sees it: everything as ``env`` has it,
    except that ``get_doctree`` hands out one unpickled doctree per page (to read, never to change)."""

    def __init__(self, env: Any):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def get_doctree(self, docname: str) -> nodes.document:
        pages = self._env.__dict__.setdefault(TARGET_PAGES, {})
        if docname not in pages:
            pages[docname] = self._env.get_doctree(docname)
        return pages[docname]


class _LatinTerms(set):  # type: ignore[type-arg]  # Sphinx's own attribute is untyped beyond list[str]
    """``SearchChinese.latin_terms`` as a set: ``extend`` is what ``split`` calls, ``in`` what ``stem`` asks."""

    def extend(self, terms: Any) -> None:
        self.update(terms)


def _forget_target_pages(app: Any, *args: Any) -> None:
    """Pages read again (an incremental build) are unpickled afresh; the environment is pickled
    after reading ends, without the trees."""
    if app.env is not None:
        app.env.__dict__.pop(TARGET_PAGES, None)


def setup(app: Any) -> dict[str, Any]:
    require(
        "sphinx",
        "7.4.7",
        "build_speed.py (one unpickled doctree per numref target page; the Chinese search's Latin terms)",
        "sphinx/domains/std/__init__.py#L903-L965 (_resolve_numref_xref), sphinx/environment/__init__.py"
        "#L620-L632 (get_doctree), sphinx/search/zh.py#L227-L261 (latin_terms)",
    )
    from sphinx.domains.std import StandardDomain
    from sphinx.search.zh import SearchChinese

    resolve = StandardDomain._resolve_numref_xref
    if not getattr(resolve, "one_tree_per_page", False):  # once, though both editions load this module

        def resolve_numref(self: Any, env: Any, *args: Any) -> Any:
            return resolve(self, _TargetPages(env), *args)

        resolve_numref.one_tree_per_page = True  # type: ignore[attr-defined]
        StandardDomain._resolve_numref_xref = resolve_numref  # type: ignore[method-assign]
    if not isinstance(SearchChinese.latin_terms, _LatinTerms):
        SearchChinese.latin_terms = _LatinTerms(SearchChinese.latin_terms)  # type: ignore[assignment]
    app.connect("env-updated", _forget_target_pages)
    app.connect("build-finished", _forget_target_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
