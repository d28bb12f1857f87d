"""helpers.seed_table: the median and range over the seed table that the training chapters' prose quotes."""

from __future__ import annotations

import pytest
import yaml

from helpers.seed_table import glue_over_seed_table, over_seed_table

ROWS = {
    "notebooks": {
        "06_x.ipynb": {
            "glued": [
                {"name": "t_slow_run", "median": 3.33, "values": {"0": 3.06, "500": 3.44, "ci-second": 3.21}},
                {"name": "fails_run", "median": 2.0, "values": {"0": 0.0, "500": 3.0, "ci-second": 2.0}},
            ]
        }
    }
}


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "seed_table.yml"
    path.write_text(yaml.safe_dump(ROWS), encoding="utf-8")
    return path


def test_median_and_range_rounded_as_glued(table, monkeypatch):
    monkeypatch.delenv("BOOK_SEED_OFFSET", raising=False)
    found = over_seed_table("06_x.ipynb", {"t_slow": 1, "fails": None}, table)
    assert found == {"t_slow": 3.3, "t_slow_lo": 3.1, "t_slow_hi": 3.4, "fails": 2, "fails_lo": 0, "fails_hi": 3}
    assert isinstance(found["fails_hi"], int)  # a count stays an int


def test_no_table_glues_nothing(tmp_path):
    assert over_seed_table("06_x.ipynb", {"t_slow": 1}, tmp_path / "absent.yml") == {}
    assert glue_over_seed_table("06_x.ipynb", {"t_slow": 1}, tmp_path / "absent.yml") is False


def test_a_run_at_a_seed_offset_glues_nothing(table, monkeypatch):
    monkeypatch.setenv("BOOK_SEED_OFFSET", "500")
    assert over_seed_table("06_x.ipynb", {"t_slow": 1}, table) == {}


def test_a_missing_row_is_an_error(table, monkeypatch):
    monkeypatch.delenv("BOOK_SEED_OFFSET", raising=False)
    with pytest.raises(KeyError):
        over_seed_table("06_x.ipynb", {"t_other": 1}, table)
    assert glue_over_seed_table("06_x.ipynb", {"t_slow": 1}, table) is True
