"""Hand results from a notebook to the book's prose."""

from __future__ import annotations

from typing import Any

__all__ = ["glue"]


def glue(name: str, value: Any, digits: int | None = None) -> Any:
    """Store ``value`` under ``name`` for ``{glue:text}`` in the book; return it.

    Numbers are rounded to ``digits`` decimals first, so that what the page shows
    (and what strict nbval compares) is stable across machines and CPU code
    paths. Outside the book's tool chain (for example in Colab, without
    ``myst_nb``) nothing is stored and the value is only returned.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if digits is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"digits needs a number, got value of type {type(value).__name__}")
        value = round(float(value), digits) if digits > 0 else int(round(value))
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return value
    myst_glue(name, value, display=False)
    return value
