"""Hand results from a notebook to the book's prose: glued numbers and results tables.

Chapters: 1, 2, 3, 4, 5, 6, 7, 7b, 8.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence, Sized
from typing import Any

from helpers import _validate as check

__all__ = ["GLUE_PREFIX", "Table", "figure_png", "glue", "table"]

# The record format that myst-nb reads for {glue:text} and {glue:figure}: the
# value's display bundle under prefixed mime types, named in the metadata. It is
# what ``myst_nb.glue(name, value, display=False)`` emits; writing it here saves
# every notebook the second it takes to import myst_nb (and Sphinx with it),
# and keeps notebooks working where myst_nb is not installed, as in Colab.
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any, digits: int | None = None, *, band: tuple[float, float] | None = None) -> None:
    """Store ``value`` under ``name`` for ``{glue:text}`` / ``{glue:figure}`` in the book.

    Numbers are rounded first with ``round(value, digits)`` (``digits <= 0``
    gives an int: ``-1`` rounds to tens, ``-2`` to hundreds), so that what the
    page shows, and what strict nbval compares, is stable across machines and
    CPU code paths.

    Two kinds of published number, two checks:

    * a deterministic result (no ``band``) is compared exactly by strict nbval,
      so its cell must not be tagged ``nbval-ignore-output``;
    * a statistic of a chaotic process (a training run) may move in its last
      digits from one machine to another. Its cell is tagged
      ``nbval-ignore-output`` and the number carries ``band=(low, high)``: the
      rounded value must lie in that closed interval on every fresh run, or
      ``glue`` raises ``AssertionError``. Declare the band beside the call, from
      the spread measured over the portability matrix.

    Nothing is shown in the notebook and nothing is returned, so a glue call at
    the end of a cell adds no visible output. Outside IPython only the band is
    checked.
    """
    _text("name", name)
    if digits is not None:
        number = check.number("value", value)  # digits needs a number
        value = round(number, digits) if digits > 0 else int(round(number, digits))
    if band is not None:
        low, high = _band("band", band)
        check.number("value", value)  # band needs a number
        if not low <= value <= high:  # NaN fails too
            raise AssertionError(f"glued {name} = {value} lies outside its declared band [{low}, {high}]")
    try:
        from IPython import get_ipython
        from IPython.core.formatters import format_display_data
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is None:
        return
    bundle, metadata = format_display_data(value)  # type: ignore[no-untyped-call]  # unannotated in IPython
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    if band is not None:
        metadata["scrapbook"]["band"] = [low, high]
    records = {GLUE_PREFIX + mime: data for mime, data in bundle.items()}
    display(records, raw=True, metadata=metadata)  # type: ignore[no-untyped-call]  # unannotated in IPython


def figure_png(figure: Any) -> Any:
    """A matplotlib figure as the notebook shows it (a tight PNG at the book's DPI), drawn once and closed.

    Ending a cell with the returned ``IPython.display.Image`` shows it; gluing the same object
    (``glue(name, image)``) publishes the same bytes, so a figure that is both shown and glued
    is rendered once instead of twice.
    """
    import matplotlib.pyplot as plt
    from IPython.core.pylabtools import print_figure
    from IPython.display import Image

    image = Image(data=print_figure(figure, "png", bbox_inches="tight"))  # type: ignore[no-untyped-call]  # IPython is unannotated
    plt.close(figure)
    return image


Format = str | Callable[[Any], str]


class Table:
    """A captioned results table: HTML in the book and in JupyterLab, aligned text in a terminal.

    Build it with :func:`table`. In a notebook, a ``Table`` that ends a cell is
    displayed; strict nbval compares both its HTML and its text, so format
    every number at a precision that is stable across machines.
    """

    def __init__(self, cells: list[list[str]], columns: list[str], caption: str, align: list[str]) -> None:
        self.cells, self.columns, self.caption, self.align = cells, columns, caption, align

    def _repr_html_(self) -> str:
        def row(values: list[str], tag: str) -> str:
            return "".join(
                f'<{tag} data-label="{html.escape(label)}" class="book-table-{side}">{html.escape(value)}</{tag}>'
                for value, label, side in zip(values, self.columns, self.align, strict=True)
            )

        body = "".join(f"<tr>{row(values, 'td')}</tr>" for values in self.cells)
        return (
            f'<table class="book-table"><caption>{html.escape(self.caption)}</caption>'
            f"<thead><tr>{row(self.columns, 'th')}</tr></thead><tbody>{body}</tbody></table>"
        )

    def __repr__(self) -> str:
        widths = [max(len(r[i]) for r in [self.columns, *self.cells]) for i in range(len(self.columns))]

        def line(values: list[str]) -> str:
            return "  ".join(
                v.ljust(w) if a == "left" else v.rjust(w) for v, w, a in zip(values, widths, self.align, strict=True)
            )

        return "\n".join([self.caption, line(self.columns), *(line(r) for r in self.cells)])


def table(
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    caption: str,
    formats: Format | Sequence[Format | None] | None = None,
) -> Table:
    """A results table with a caption, for every table of results in the book.

    Args:
        rows: one sequence per row, ``len(columns)`` values each. Strings are
            shown as they are; numbers go through ``formats``.
        columns: the column headers, with units (e.g. ``"loss (nats)"``).
        caption: one sentence that says what the table shows (seeds, settings).
        formats: a format spec for every number (``".2f"``), or one per column
            (``None`` for the default ``".3g"``), or callables.

    Returns:
        A :class:`Table`; end a cell with it to display it. The first column
        (row labels) and every column that holds text are left-aligned, columns
        of numbers right-aligned.
    """
    _text("caption", caption)
    columns = check.each("columns", columns, check.string)
    n = len(columns)
    if formats is None or isinstance(formats, str) or callable(formats):
        per_column: list[Format | None] = [formats] * n
    else:
        per_column = list(formats)
        _length("formats", per_column, n)
    for i, values in enumerate(_sequence("rows", rows)):
        _length(f"rows[{i}]", _sequence(f"rows[{i}]", values), n)
    cells = []
    numeric = [True] * n
    for values in rows:
        cells.append([_format(v, f) for v, f in zip(values, per_column, strict=True)])
        numeric = [was and not isinstance(v, str) for was, v in zip(numeric, values, strict=True)]
    align = ["left"] + ["right" if is_number else "left" for is_number in numeric[1:]]
    return Table(cells, list(columns), caption, align)


def _format(value: Any, spec: Format | None) -> str:
    if isinstance(value, str):
        return value
    if hasattr(value, "item") and callable(value.item):  # 0-d tensors and numpy scalars
        value = value.item()
    if callable(spec):
        return spec(value)
    return format(value, spec or ".3g")


# ---- the checks of glue's and table's arguments (helpers/_validate.py has the shared ones)


def _text(name: str, value: object) -> str:
    """A non-empty str. An empty one raises TypeError too: tests/test_device_style_glue.py pins that."""
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty str, got {value!r}")
    return value


def _band(name: str, value: object) -> tuple[float, float]:
    """A finite ``(low, high)`` with ``low <= high``. A pair of the wrong length is a TypeError (pinned by tests)."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair of numbers, got {value!r}")
    low, high = (check.number(name, x) for x in value)
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise ValueError(f"{name} must be finite with low <= high, got {value!r}")
    return low, high


def _sequence(name: str, value: object) -> Sequence[Any]:
    """A list, a tuple or another sequence, but not a string."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
    return value


def _length(name: str, value: Sized, n: int) -> None:
    if len(value) != n:
        raise ValueError(f"{name} must hold {n} value{'s' * (n != 1)} (one per column), got {value!r}")
