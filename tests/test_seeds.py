"""The seed table (book/seed_table.yml, written by `make seeds`): every band of a training chapter holds the
value's range over the seed offsets and the second point, every assert held at every run, no cell raised, and
the rows are as new as the notebook's code. Then the recorder that the sweep installs in its kernels, on toy code.
Nothing here runs a notebook."""

from __future__ import annotations

import ast
import json

import nbformat
import pytest
import torch
import yaml

from tools import seeds
from tools.notebook_format import GLUE_PREFIX, ROOT, chapter_notebooks, glued_outputs, read

TRAINING = [ROOT / "notebooks" / f"{stem}.ipynb" for stem in seeds.TRAINING]


@pytest.fixture(scope="module")
def table() -> dict:
    assert seeds.TABLE.is_file(), f"no {seeds.TABLE.name}: run `make seeds`"
    return seeds.load()


@pytest.mark.parametrize("notebook", TRAINING, ids=lambda p: p.stem)
def test_every_band_and_assert_holds_at_every_offset(table, notebook):
    found = seeds.problems(table, notebook)
    assert not found, "\n".join(found)


def test_the_table_covers_every_notebook_with_a_band():
    banded = [p.name for p in chapter_notebooks() if any(g.band for g in glued_outputs(read(p)))]
    assert set(banded) <= {p.name for p in TRAINING}, "add the notebook to tools.seeds.TRAINING"


def test_the_offsets_are_the_agreed_ones(table):
    assert table["offsets"] == [0, 500, 1000, 2500, 5000, 10000, 20000, 50000]
    assert table["second_point"]["env"] == seeds.SECOND.env


# ---- the recorder, on toy code (no kernel)

TOY = """
x = 3.0
t = torch.tensor([1.0, 4.0])
assert x < 5
assert 1 < x < 2, f"chain at {x}"
assert (t < 3).all()
assert ((t > 0) & (t < 3.5)).all()
assert all(v > 2 for v in (x, 2.5))
assert t.isfinite().all() and x < 2.5
assert x == 3
def f(y):
    assert y >= 0
for y in (2, -1):
    f(y)
done = True
"""


def run_toy(source: str) -> tuple[seeds.Recorder, dict]:
    recorder = seeds.Recorder()
    recorder.source, recorder.cell = source, "toy"
    tree = seeds.Rewriter(recorder).visit(ast.parse(source))
    namespace = {seeds.NAME: recorder, "torch": torch}
    exec(compile(tree, "toy", "exec"), namespace)  # noqa: S102
    return recorder, namespace


def test_the_recorder_keeps_both_sides_and_goes_on_after_a_failed_assert():
    recorder, namespace = run_toy(TOY)
    assert namespace["done"], "a failed assert stopped the run"
    got = [(r["line"], r["passed"], r["margin"], r["lhs"], r["rhs"]) for r in recorder.records]
    assert got == [
        (4, True, 2.0, 3.0, 5.0),  # x < 5
        (5, False, -1.0, 3.0, 2.0),  # the chain fails on its second link
        (6, False, -1.0, 4.0, 3.0),  # the worst element of a tensor
        (7, False, -0.5, 4.0, 3.5),  # & takes each element's worse side
        (8, True, 0.5, 2.5, 2.0),  # all(...): the least margin
        (9, False, -0.5, 3.0, 2.5),  # a part without a margin passes; the failing part gives the margin
        (10, True, None, None, None),  # == is pass or fail only
        (12, True, 2.0, 2.0, 0.0),  # an assert in a function, once per call
        (12, False, -1.0, -1.0, 0.0),
    ]
    assert recorder.records[1]["source"] == 'assert 1 < x < 2, f"chain at {x}"'
    assert recorder.records[1]["message"] == "chain at 3.0"


def test_the_recorded_glue_never_raises_on_its_band():
    recorder = seeds.Recorder()
    glue = recorder.glue(lambda name, value, digits=None: None)
    glue("inside", 0.1234, 2, band=(0.1, 0.2))
    glue("outside", 7, band=(1, 5))  # helpers.glue would raise here
    assert [(r["name"], r["value"], r["passed"]) for r in recorder.records] == [
        ("inside", 0.12, True),
        ("outside", 7.0, False),
    ]


def test_problems_name_the_band_the_assert_and_a_stale_table(tmp_path):
    source = "from helpers import glue\nglue('loss', 0.5, digits=2, band=(0.0, 1.0))\nassert 1 < 2"
    cell = nbformat.v4.new_code_cell(source, id="c1")
    output = {"data": {GLUE_PREFIX + "text/plain": "0.5"}, "metadata": {"scrapbook": {"name": "loss"}}}
    output["metadata"]["scrapbook"]["band"] = [0.0, 1.0]
    cell.outputs = [nbformat.v4.new_output("display_data", **output)]
    notebook = tmp_path / "toy.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), notebook)
    runs = {
        run: {"wall": 1.0, "cpu": 1.0, "status": "ok", "errors": []} for run in [*map(str, seeds.OFFSETS), "ci-second"]
    }
    values = dict.fromkeys(runs, 0.5) | {"5000": 1.2}
    glued = [{"name": "loss", "cell": "c1", "digits": 2, "band": [0.0, 1.0], "values": values, "passed": False}]
    failing = {"cell": "c1", "line": 3, "source": "assert 1 < 2", "runs": {"20000": [False, -0.1, 2.1, 2.0]}}
    entry = {"code_hash": seeds.code_hash(notebook), "runs": runs, "glued": glued, "asserts": [failing]}
    found = seeds.problems({"notebooks": {"toy.ipynb": entry}}, notebook)
    assert len(found) == 2, found
    assert "loss leaves its band [0.0, 1.0] at offset 5000: 1.2" in found[0]
    assert "cell c1, line 3: `assert 1 < 2` fails at offset 20000 (margin -0.1, 2.1 vs 2.0)" in found[1]
    cell.source += "  # a comment is not a change"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), notebook)
    assert seeds.code_hash(notebook) == entry["code_hash"]
    cell.source = cell.source.replace("1 < 2", "1 < 3")
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), notebook)
    assert "make seeds NB=notebooks/toy.ipynb" in seeds.problems({"notebooks": {"toy.ipynb": entry}}, notebook)[0]
    assert json.dumps(entry)  # the table's rows are plain data


# ---- what the prose quotes over the table (tools.seeds.over_seeds, quoted_names, glue_quoted)


def test_a_quote_is_the_range_of_every_run_as_glued(tmp_path):
    table = tmp_path / "table.yml"
    values = {"0": 62.0, "500": 70.0, "1000": 58.0, "ci-second": 75.0}
    row = {"name": "steps_lo", "cell": "c", "digits": 0, "band": [40, 90], "values": values, "passed": True}
    table.write_text(yaml.safe_dump({"notebooks": {"05_x.ipynb": {"glued": [row]}}}), encoding="utf-8")
    # over the blocks: the second point (75) repeats block 0's seeds on another CPU path and is not a block
    assert seeds.over_seeds("05_x.ipynb", "steps_lo", table) == {"min": 58, "median": 62, "max": 70}
    counts = {"name": "wins", "cell": "c", "digits": None, "band": [3, 5], "values": {"0": 5.0, "500": 4.0}}
    table.write_text(yaml.safe_dump({"notebooks": {"05_x.ipynb": {"glued": [row, counts]}}}), encoding="utf-8")
    quoted = seeds.over_seeds("05_x.ipynb", "wins", table)  # a count glued as a float reads as a count
    assert quoted == {"min": 4, "median": 4.5, "max": 5} and all(str(quoted[s]) in ("4", "4.5", "5") for s in quoted)
    missing = seeds.over_seeds("05_x.ipynb", "other", table)  # no row yet (the sweep's own first runs): NaN
    assert all(value != value for value in missing.values())
    text = "needs {glue:text}`steps_lo_seeds_min`–{glue:text}`../notebooks/05_x.ipynb::steps_lo_seeds_max:s` steps"
    assert seeds.quoted_names([text, "{glue:text}`steps_lo`"]) == {("steps_lo", "min"), ("steps_lo", "max")}
