"""Glued numbers inside translated text (the Chinese edition).

Sphinx translates a paragraph by parsing its translation as a new, small document
(``sphinx.transforms.i18n.publish_msgstr``). myst-nb's ``{glue:text}`` role looks up the
notebook's glued values on the document being parsed (``document["nb_renderer"]``), which
that small document lacks, so every glued number of a translated paragraph fails with
"No key … found in glue data". The notebook's renderer is created while the notebook is
parsed and dropped at the end of the parse, just before the i18n transform runs for the
same notebook. This extension remembers the last notebook renderer and lends it to a
document that has none, so a translated paragraph pastes the very numbers the English one
does. Reading is serial (no ``-j``), so the last renderer is the current notebook's.

Upstream, at the checked releases (``setup`` stops the build on any other):

- myst-nb 1.4.0 parses a translated paragraph with the plain MyST parser, without a notebook
  renderer (myst_nb/sphinx_.py#L91, the fix of MyST-NB issue 587, pull request 600), stores the
  renderer on the notebook's document while it parses it and drops it after (#L141-L146, #L207);
  the glue roles and directives find values through ``retrieve_glue_data``
  (myst_nb/ext/glue/utils.py#L82-L92), which needs that renderer.
- Sphinx 7.4.7 parses each translation as a small document of its own
  (sphinx/transforms/i18n.py#L51-L81, ``publish_msgstr``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.upstream import require  # noqa: E402

MYST_NB = "https://github.com/executablebooks/MyST-NB/blob/v1.4.0/myst_nb/"
SPHINX = "https://github.com/sphinx-doc/sphinx/blob/v7.4.7/sphinx/"

_last: dict[str, Any] = {}


def _remembering(load_renderer):
    def load(name: str):
        cls = load_renderer(name)

        def create(*args: Any, **kwargs: Any):
            _last["renderer"] = renderer = cls(*args, **kwargs)
            return renderer

        return create

    return load


def _lending(retrieve):
    def retrieve_glue_data(document, key):
        if "nb_renderer" in document or "renderer" not in _last:
            return retrieve(document, key)
        # lent for this one lookup only: the doctree is pickled later, the renderer must not be in it
        document["nb_renderer"] = _last["renderer"]
        try:
            return retrieve(document, key)
        finally:
            del document["nb_renderer"]

    return retrieve_glue_data


def setup(app):
    patch = "translated_glue.py (glued numbers in translated paragraphs)"
    require(
        "myst-nb",
        "1.4.0",
        patch,
        f"{MYST_NB}sphinx_.py#L91 (https://github.com/executablebooks/MyST-NB/issues/587), "
        f"{MYST_NB}sphinx_.py#L141-L146, {MYST_NB}sphinx_.py#L207 and {MYST_NB}ext/glue/utils.py#L82-L92",
    )
    require("sphinx", "7.4.7", patch, f"publish_msgstr, {SPHINX}transforms/i18n.py#L51-L81")
    import myst_nb.ext.glue.directives as directives
    import myst_nb.ext.glue.roles as roles
    import myst_nb.sphinx_ as sphinx_parser

    sphinx_parser.load_renderer = _remembering(sphinx_parser.load_renderer)
    for module in (roles, directives):
        module.retrieve_glue_data = _lending(module.retrieve_glue_data)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
