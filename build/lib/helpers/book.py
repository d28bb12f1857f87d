"""Hand results from a notebook to the book's prose."""

from __future__ import annotations

from typing import Any

__all__ = ["glue"]

# The record format that myst-nb reads for {glue:text} and {glue:figure}: the
# value's display bundle under prefixed mime types, named in the metadata. It is
# what ``myst_nb.glue(name, value, display=False)`` emits; writing it here saves
# every notebook the second it takes to import myst_nb (and Sphinx with it),
# and keeps notebooks working where myst_nb is not installed, as in Colab.
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any, digits: int | None = None) -> None:
    """Store ``value`` under ``name`` for ``{glue:text}`` / ``{glue:figure}`` in the book.

    Numbers are rounded first with ``round(value, digits)`` (``digits <= 0``
    gives an int: ``-1`` rounds to tens, ``-2`` to hundreds), so that what the
    page shows, and what strict nbval compares, is stable across machines and
    CPU code paths. Nothing is shown in the notebook and nothing is returned, so
    a glue call at the end of a cell adds no visible output. Outside IPython it
    does nothing.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if digits is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"digits needs a number, got value of type {type(value).__name__}")
        value = round(float(value), digits) if digits > 0 else int(round(value, digits))
    try:
        from IPython import get_ipython
        from IPython.core.formatters import format_display_data
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is None:
        return
    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    display({GLUE_PREFIX + mime: data for mime, data in bundle.items()}, raw=True, metadata=metadata)
