"""Hand results from a notebook to the book's prose: glued numbers and results tables."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from helpers import _validate as check

__all__ = ["GLUE_PREFIX", "Table", "figure_png", "glue", "table"]

# The record myst-nb reads for {glue:text} and {glue:figure}, as ``myst_nb.glue(name, value, display=False)`` emits
# it: the value's display bundle under prefixed mime types, named in the metadata. Written here, it saves every
# notebook the second myst_nb (and Sphinx) takes to import, and works where myst_nb is missing, as in Colab.
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any, digits: int | None = None, *, band: tuple[float, float] | None = None) -> None:
    """Store ``value`` under ``name`` for ``{glue:text}`` / ``{glue:figure}`` in the book; show nothing.

    Numbers (each of a list) are rounded with ``round(value, digits)`` (``digits <= 0`` gives an int), so that what
    the page shows, and strict nbval compares, is stable across machines. A deterministic result (no ``band``) is
    compared exactly by strict nbval. A statistic of a training run may move in its last digits from one machine to
    another: its cell is tagged ``nbval-ignore-output`` and it carries ``band=(low, high)``, measured over the
    portability matrix; a rounded value outside it raises ``AssertionError`` (outside IPython, the only check).
    """
    check.text("name", name)
    if isinstance(value, list) and (digits is not None or band is not None):
        value = [_rounded(f"value[{i}]", v, digits) for i, v in enumerate(value)]
    elif digits is not None or band is not None:
        value = _rounded("value", value, digits)  # digits and band need a number
    if band is not None:
        low, high = check.band("band", band)
        for number in value if isinstance(value, list) else [value]:
            if not low <= number <= high:  # NaN fails too
                raise AssertionError(f"glued {name} = {number} lies outside its declared band [{low}, {high}]")
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


def _rounded(name: str, value: Any, digits: int | None) -> Any:
    """``value`` checked as a number and rounded to ``digits`` (an int where ``digits <= 0``)."""
    number = check.number(name, value)
    if digits is None:
        return value
    return round(number, digits) if digits > 0 else int(round(number, digits))


def figure_png(figure: Any) -> Any:
    """A matplotlib figure as the notebook shows it (a tight PNG at the book's DPI), drawn once and closed: an
    ``IPython.display.Image`` to end a cell with and to glue, the same bytes, rendered once."""
    import matplotlib.pyplot as plt
    from IPython.core.pylabtools import print_figure
    from IPython.display import Image

    image = Image(data=print_figure(figure, "png", bbox_inches="tight"))  # type: ignore[no-untyped-call]  # IPython is unannotated
    plt.close(figure)
    return image


Format = str | Callable[[Any], str]


class Table:
    """A captioned results table (:func:`table`): HTML in the book and in JupyterLab, aligned text in a terminal.
    Strict nbval compares both, so format every number at a precision that is stable across machines."""

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
    """A :class:`Table` for every table of results in the book; end a cell with it to show it.

    ``rows``: one sequence per row, ``len(columns)`` values each, strings as they are and numbers through
    ``formats``: one spec for every number (``".2f"``), one per column (``None``: ``".3g"``), or callables.
    ``columns``: the headers, with units (``"loss (nats)"``); ``caption``: one sentence that says what the table
    shows. The first column and columns of text are left-aligned, columns of numbers right-aligned.
    """
    check.text("caption", caption)
    columns = check.each("columns", columns, check.string)
    n = len(columns)
    if formats is None or isinstance(formats, str) or callable(formats):
        per_column: list[Format | None] = [formats] * n
    else:
        per_column = list(formats)
        check.length("formats", per_column, n, "one per column")
    for i, values in enumerate(check.sequence("rows", rows)):
        check.length(f"rows[{i}]", check.sequence(f"rows[{i}]", values), n, "one per column")
    cells = [[_format(v, f) for v, f in zip(values, per_column, strict=True)] for values in rows]
    numeric = [all(not isinstance(values[j], str) for values in rows) for j in range(n)]
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
