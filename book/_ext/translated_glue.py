"""Glued numbers inside translated text (the Chinese edition).

Sphinx translates a paragraph by parsing its translation as a new, small document
(``sphinx.transforms.i18n.publish_msgstr``). myst-nb's ``{glue:text}`` role looks up the
notebook's glued values on the document being parsed (``document["nb_renderer"]``), which
that small document lacks, so every glued number of a translated paragraph fails with
"No key … found in glue data". The notebook's renderer is created while the notebook is
parsed and dropped at the end of the parse (myst_nb/sphinx_.py, myst-nb 1.4.0), just
before the i18n transform runs for the same notebook. This extension remembers the last
notebook renderer and lends it to a document that has none, so a translated paragraph
pastes the very numbers the English one does. Reading is serial (no ``-j``), so the last
renderer is the current notebook's.
"""

from __future__ import annotations

from typing import Any

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
    import myst_nb.ext.glue.directives as directives
    import myst_nb.ext.glue.roles as roles
    import myst_nb.sphinx_ as sphinx_parser

    sphinx_parser.load_renderer = _remembering(sphinx_parser.load_renderer)
    for module in (roles, directives):
        module.retrieve_glue_data = _lending(module.retrieve_glue_data)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
