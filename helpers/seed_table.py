"""What the prose quotes of a statistic of training: its median and range over the book's seed table.

A statistic of a training run moves with the random draws, so one block of seeds is one sample of it.
``make seeds`` (tools/seeds.py) runs each training chapter at eight seed offsets and writes, for every
banded number it glues, the values it took (``book/seed_table.yml``). A chapter glues its own run's value
under ``NAME_run``, with its band, and :func:`glue_over_seed_table` glues what the prose quotes: ``NAME``, the
median over the eight offsets, and ``NAME_lo`` and ``NAME_hi``, the least and largest value over the offsets and
the table's second point (offset 0 with other kernels and one thread).

Outside the book's repository (Colab, a downloaded notebook) there is no table, and in a run at a seed
offset (``BOOK_SEED_OFFSET`` set, as ``make seeds`` and the portability matrix's seed shifts run the
chapters) the table is not about that run: in both cases nothing is glued, and the run's own values stay
in its outputs.

Chapters: 6, 7, 8.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from helpers import _validate as check
from helpers.book import glue

__all__ = ["SEED_TABLE", "glue_over_seed_table", "over_seed_table"]

SEED_TABLE = Path("../book/seed_table.yml")  # from notebooks/, where the chapters run
RUN_SUFFIX = "_run"  # the chapter's own glue of a statistic: NAME_run


def over_seed_table(notebook: str, names: Mapping[str, int | None], table: Path = SEED_TABLE) -> dict[str, float]:
    """The median of each statistic over the seed table's offsets, and its least and largest value there and at
    the second point.

    Args:
        notebook: the chapter's file name, as the table keys it (``"06_the_experiment.ipynb"``).
        names: NAME -> digits of each statistic, glued by the chapter as ``NAME_run``; ``None`` digits
            (a count) round to an int.
        table: the seed table (YAML); ``book/seed_table.yml`` seen from ``notebooks/``.

    Returns:
        ``{NAME: median, NAME_lo: least, NAME_hi: largest}`` for every name, rounded as ``helpers.glue``
        rounds; empty when the table is absent or ``BOOK_SEED_OFFSET`` is set.

    Raises:
        KeyError: the table has no row for the notebook or for a name (run ``make seeds``).
    """
    check.instance("names", names, Mapping, "a mapping of names to digits")
    if not Path(table).is_file() or os.environ.get("BOOK_SEED_OFFSET", "").strip():
        return {}
    import yaml  # type: ignore[import-untyped]  # only where the table exists: the book's environment has PyYAML

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where PyYAML has it: ten times faster
    rows = yaml.load(Path(table).read_text(encoding="utf-8"), Loader=loader)["notebooks"][notebook]["glued"]
    by_name: dict[str, Any] = {row["name"].removesuffix(RUN_SUFFIX): row for row in rows}
    found: dict[str, float] = {}
    for name, digits in names.items():
        row = by_name[name]
        places = 0 if digits is None else digits
        every = [float(v) for v in row["values"].values() if v is not None]  # the offsets and the second point
        for suffix, value in (("", float(row["median"])), ("_lo", min(every)), ("_hi", max(every))):
            found[name + suffix] = round(value, places) if places > 0 else int(round(value, places))
    return found


def glue_over_seed_table(notebook: str, names: Mapping[str, int | None], table: Path = SEED_TABLE) -> bool:
    """Glue ``NAME``, ``NAME_lo`` and ``NAME_hi`` for each statistic (:func:`over_seed_table`).

    Returns:
        Whether the table was there (``False``: nothing was glued).
    """
    found = over_seed_table(notebook, names, table)
    for name, value in found.items():
        glue(name, value)
    return bool(found)
