"""helpers.device, helpers.style and helpers.book."""

from __future__ import annotations

import random

import matplotlib
import pytest
import torch

import helpers


def test_get_device_default_is_available(monkeypatch):
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    device = helpers.get_device()
    assert isinstance(device, torch.device)
    torch.zeros(1, device=device)


def test_get_device_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert helpers.get_device().type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert helpers.get_device().type == "mps"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert helpers.get_device().type == "cpu"


def test_book_device_forces(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    assert helpers.get_device() == torch.device("cpu")


@pytest.mark.parametrize("name, words", [("nonsense", "not a torch device"), ("xla", "does not have")])
def test_book_device_bad(monkeypatch, name, words):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.setenv("BOOK_DEVICE", name)
    with pytest.raises(ValueError, match=words):
        helpers.get_device()
    monkeypatch.setenv("BOOK_DEVICE", "cuda")
    with pytest.raises(ValueError, match="BOOK_DEVICE"):
        helpers.get_device()


def test_seed_everything_repeats():
    helpers.seed_everything(123)
    first = (random.random(), torch.randn(3))
    helpers.seed_everything(123)
    second = (random.random(), torch.randn(3))
    assert first[0] == second[0] and torch.equal(first[1], second[1])


@pytest.mark.parametrize(
    "seed, error", [(1.5, TypeError), ("1", TypeError), (True, TypeError), (-1, ValueError), (2**32, ValueError)]
)
def test_seed_everything_bad(seed, error):
    with pytest.raises(error, match="seed"):
        helpers.seed_everything(seed)


def _relative_luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_style_uses_okabe_ito_and_readable_fonts():
    helpers.use_book_style()
    cycle = [c["color"].upper() for c in matplotlib.rcParams["axes.prop_cycle"]]
    assert set(cycle) <= {c.upper() for c in helpers.COLORS.values()}
    assert len(cycle) >= 6
    assert matplotlib.rcParams["font.size"] >= 11
    assert matplotlib.rcParams["figure.facecolor"] == "white"
    # lines drawn on white need contrast: no colour in the cycle may be near-white
    assert all(_relative_luminance(c) < 0.8 for c in cycle)


def _captured_displays(function, *args):
    """Run ``function(*args)`` in an IPython shell; return what it displayed, ``[(data, metadata), ...]``, as
    IPython's display publisher hands it to a notebook (public API: no name inside myst_nb is replaced)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    try:
        with capture_output(stdout=False, stderr=False) as captured:
            function(*args)
    finally:
        InteractiveShell.clear_instance()  # get_ipython() is None again for the tests after this one
    return [(output.data, output.metadata) for output in captured.outputs]


@pytest.mark.parametrize("value", [3.25, 17, "text"])
def test_glue_emits_exactly_what_myst_nb_glue_emits(value):
    from myst_nb import glue as myst_glue

    ours = _captured_displays(helpers.glue, "key", value)
    theirs = _captured_displays(myst_glue, "key", value, False)
    assert ours == theirs and len(ours) == 1


def test_glue_rounds():
    for value, digits, expected in (
        (3.14159, 2, "3.14"),
        (41.6, 0, "42"),
        (17943.2, -2, "17900"),
        (2.94e-8, 10, "2.94e-08"),
    ):
        ((bundle, _),) = _captured_displays(helpers.glue, "x", value, digits)
        assert bundle["application/papermill.record/text/plain"] == expected


def test_glue_outside_ipython_displays_nothing(monkeypatch):
    """In a plain Python process (no IPython shell: get_ipython() is None) glue shows nothing:
    a learner's script that imports a chapter's code prints no display bundle."""
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.append((a, k)))
    helpers.glue("x", 1.0, digits=2)
    assert shown == []
    monkeypatch.undo()
    assert _captured_displays(helpers.glue, "x", 1.0, 2), "inside IPython the same call displays"


@pytest.mark.parametrize("args, error", [(("", 1.0), TypeError), ((3, 1.0), TypeError), (("x", "a", 2), TypeError)])
def test_glue_bad_input(args, error):
    with pytest.raises(error):
        helpers.glue(*args)


def test_glue_band_holds_and_is_recorded():
    ((bundle, metadata),) = _captured_displays(lambda: helpers.glue("acc", 0.9612, 2, band=(0.9, 1.0)))
    assert bundle["application/papermill.record/text/plain"] == "0.96"
    assert metadata["scrapbook"]["band"] == [0.9, 1.0]


def test_glue_of_a_list_rounds_and_bands_each_value():
    ((bundle, metadata),) = _captured_displays(lambda: helpers.glue("seeds", [0.123, 0.456], 2, band=(0, 1)))
    assert bundle["application/papermill.record/text/plain"] == "[0.12, 0.46]"
    assert metadata["scrapbook"]["band"] == [0, 1]
    with pytest.raises(AssertionError, match="seeds"):
        helpers.glue("seeds", [0.5, 1.5], band=(0, 1))
    with pytest.raises(TypeError, match=r"value\[1\]"):
        helpers.glue("seeds", [0.5, "a"], digits=2)


@pytest.mark.parametrize("value", [0.84, float("nan"), 1.2])
def test_glue_band_fails_outside(value):
    # the rounded value is checked: 0.84 is outside [0.85, 1], NaN is outside every band
    with pytest.raises(AssertionError, match="acc"):
        helpers.glue("acc", value, 2, band=(0.85, 1.0))


@pytest.mark.parametrize(
    "band, error",
    [
        ((1.0,), TypeError),
        ("ab", TypeError),
        ((2.0, 1.0), ValueError),
        ((0.0, float("inf")), ValueError),
        ((True, 1.0), TypeError),
    ],
)
def test_glue_band_bad(band, error):
    with pytest.raises(error, match="band"):
        helpers.glue("x", 1.0, band=band)


def test_table_html_and_text():
    shown = helpers.table(
        [["no scale", 0.123456, 3], ["1/√dₖ", 1.5, 12]],
        ["scale", "loss (nats)", "steps"],
        "Two arms, 5 seeds.",
        formats=[None, ".2f", "d"],
    )
    html = shown._repr_html_()
    assert html.startswith('<table class="book-table"><caption>Two arms, 5 seeds.</caption>')
    assert '<td data-label="loss (nats)" class="book-table-right">0.12</td>' in html
    assert "<th" in html and html.count("<tr>") == 3
    text = repr(shown).splitlines()
    assert text[0] == "Two arms, 5 seeds." and text[2].split() == ["no", "scale", "0.12", "3"]
    # columns line up in the terminal
    assert len({len(line) for line in text[1:]}) == 1


def test_table_escapes_html_and_accepts_tensors():
    shown = helpers.table([["<b>", torch.tensor(0.5)]], ["a & b", "x"], "c < d")
    assert (
        "&lt;b&gt;" in shown._repr_html_() and "a &amp; b" in shown._repr_html_() and "c &lt; d" in shown._repr_html_()
    )
    assert "0.5" in repr(shown)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(rows=[[1]], columns=["a"], caption=""), TypeError, "caption"),
        (dict(rows=[[1]], columns="a", caption="c"), TypeError, "columns"),
        (dict(rows=[[1, 2]], columns=["a"], caption="c"), ValueError, "rows"),
        (dict(rows=[[1]], columns=["a"], caption="c", formats=[".2f", ".2f"]), ValueError, "formats"),
        (dict(rows="ab", columns=["a"], caption="c"), TypeError, "rows"),
    ],
)
def test_table_bad_input(kwargs, error, words):
    with pytest.raises(error, match=words):
        helpers.table(**kwargs)


def test_plot_band_draws_mean_and_min_max():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    curves = torch.tensor([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])
    helpers.plot_band(ax, [1, 2, 3], curves, label="arm", color=helpers.COLORS["blue"], marker="o")
    (line,) = ax.lines
    assert line.get_ydata().tolist() == [2.0, 3.0, 4.0] and line.get_label() == "arm"
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == 1.0 and band.max() == 5.0
    with pytest.raises(ValueError, match="curves"):
        helpers.plot_band(ax, [1, 2, 3], torch.ones(3))
    with pytest.raises(ValueError, match="x"):
        helpers.plot_band(ax, [1, 2], curves)
    plt.close(fig)


def test_every_scale_has_one_label_and_one_colour():
    assert set(helpers.SCALE_LABELS) == set(helpers.SCALE_COLORS)
    assert set(helpers.SCALE_COLORS.values()) <= set(helpers.COLORS.values())


def test_seed_offset_shifts_every_stream(monkeypatch):
    """BOOK_SEED_OFFSET stands in for another machine's random draws (make portability, point seed-shift)."""
    monkeypatch.delenv("BOOK_SEED_OFFSET", raising=False)
    helpers.seed_everything(1005)
    seed_1005 = torch.randn(3)
    helpers.seed_everything(5)
    plain = torch.randn(3)
    monkeypatch.setenv("BOOK_SEED_OFFSET", "1000")
    assert helpers.effective_seed(5) == 1005 and helpers.effective_seed(2**32 - 1) == 999
    helpers.seed_everything(5)
    assert torch.equal(torch.randn(3), seed_1005) and not torch.equal(seed_1005, plain)
    shifted = helpers.train_recall(seed=1, steps=2)  # with the offset: the run of seed 1001
    monkeypatch.delenv("BOOK_SEED_OFFSET")
    assert shifted == helpers.train_recall(seed=1001, steps=2) and shifted != helpers.train_recall(seed=1, steps=2)
    monkeypatch.setenv("BOOK_SEED_OFFSET", "x")
    with pytest.raises(ValueError, match="BOOK_SEED_OFFSET"):
        helpers.seed_everything(1)


def test_figure_png_draws_the_figure_once_as_a_png_and_closes_it():
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    helpers.use_book_style()
    figure, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    image = helpers.figure_png(figure)
    assert image.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(figure.number)  # closed: nothing else draws it again
