"""The scale explorer (book/_ext/scale_explorer.py, book/_assets/scale-explorer*.js).

1. Its math is the book's math: torch (float64, through ``helpers``) computes softmax, entropy,
   the largest weight, ||J||_2 of the softmax Jacobian and the row gradient on exported rows, and
   the explorer's JavaScript, run in Chromium on the same vectors, agrees to 1e-6.
2. Its default state reproduces the chapters' measured means: at d_k = 64 (and 4096) over 128
   keys, its averages over its own 2,560 random rows lie within 4 standard errors of the chapters'
   values (the standard error of the difference: its own rows' spread, and the spread of the
   chapters' per-seed values over their 20 seeds, which the chapters glue beside each mark:
   book/scale_explorer.yml's ``per_seed``). The chapters compute their statistics once; nothing here
   computes them again.
3. On the built pages it works as a reader uses it: keyboard, touch-sized controls, labels for
   screen readers, clean under axe in light and dark mode, legible at 390 px, translated in the
   Chinese edition, and its static stand-in shows without JavaScript and in print.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from pathlib import Path

import pytest
import torch
import yaml

import helpers
from tests.browser import INTERACTS, MODES, ROOT, load, new_context, page_check
from tools.notebook_format import averages_to, glued_numbers, glued_outputs, read

MATH = ROOT / "book" / "_assets" / "scale-explorer-math.js"
OUT = ROOT / "_build" / "explorer"
SHOTS = Path(os.environ["BOOK_SHOTS"]) if os.environ.get("BOOK_SHOTS") else None  # screenshots for a review
AGREEMENT = 1e-6
BAND_SIGMAS = 4.0


# --- 1. the math, against torch ---------------------------------------------------------------


def torch_row(z: torch.Tensor, g: torch.Tensor) -> dict:
    """Everything the explorer computes for one row, by torch in float64."""
    p = torch.softmax(z, dim=-1)
    jacobian = torch.diag(p) - torch.outer(p, p)
    grad = helpers.softmax_backward(p, g)
    return {
        "z": z.tolist(),
        "g": g.tolist(),
        "p": p.tolist(),
        "entropy": helpers.softmax_entropy(p).item(),
        "largest": p.max().item(),
        "jacobianNorm": torch.linalg.matrix_norm(jacobian, ord=2).item(),
        "grad": grad.tolist(),
        "gradNorm": grad.norm().item(),
    }


def torch_cases() -> list[dict]:
    """Rows like the explorer's (standard-normal q and keys, every multiplier, 2 to 1024 keys) and
    the corner cases of its math: ties, one-hot rows, a row whose weights underflow."""
    generator = torch.Generator().manual_seed(2024)
    cases = []
    for d_k in (1, 4, 64, 1024, 4096):
        for n in (2, 16, 128) if d_k != 64 else (2, 16, 128, 1024):
            q = torch.randn(d_k, generator=generator, dtype=torch.float64)
            keys = torch.randn(n, d_k, generator=generator, dtype=torch.float64)
            g = torch.randn(n, generator=generator, dtype=torch.float64)
            for c in (1.0, 1 / math.sqrt(d_k), 1 / d_k, 3.0, 0.001):
                cases.append({"d_k": d_k, "c": c, **torch_row(c * (keys @ q), g)})
    g8 = torch.randn(8, generator=generator, dtype=torch.float64)
    corners = {
        "two logits, gap 0.2": torch.tensor([0.0, 0.2]),
        "two logits, gap 10": torch.tensor([0.0, 10.0]),
        "uniform": torch.zeros(8),
        "tie at the top": torch.tensor([5.0, 5.0, 0.0, -1.0, 2.0, 4.9, -3.0, 1.0]),
        "near tie": torch.tensor([5.0, 5.0 - 1e-9, 0.0, -1.0, 2.0, 4.9, -3.0, 1.0]),
        "one-hot, others underflow": torch.tensor([0.0, 1000.0, -5.0, 3.0, 7.0, 1.0, 2.0, 0.5]),
        "nearly one-hot": torch.tensor([0.0, 40.0, 1.0, 3.0, 7.0, 1.0, 2.0, 0.5]),
        "large and negative": torch.tensor([-300.0, -310.0, -299.5, -320.0, -305.0, -300.0, -301.0, -330.0]),
    }
    for name, z in corners.items():
        z = z.to(torch.float64)
        cases.append({"corner": name, **torch_row(z, g8[: len(z)])})
    return cases


@pytest.fixture(scope="module")
def blank_page(browser):
    """A blank Chromium page with the explorer's math loaded, nothing else."""
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<!doctype html><title>math</title>")
    page.add_script_tag(content=MATH.read_text(encoding="utf-8"))
    yield page
    context.close()


JS_ROWS = """cases => cases.map(c => {
    const M = ScaleExplorerMath;
    const z = Float64Array.from(c.z), g = Float64Array.from(c.g);
    const s = M.rowStatistics(z, g);
    return {p: Array.from(s.p), entropy: s.entropy, largest: s.largest, jacobianNorm: s.jacobianNorm,
            grad: Array.from(s.grad), gradNorm: s.gradNorm};
})"""


def test_math_agrees_with_torch(blank_page):
    cases = torch_cases()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "torch_rows.json").write_text(json.dumps(cases), encoding="utf-8")
    results = blank_page.evaluate(JS_ROWS, cases)
    worst: dict[str, float] = {}
    failures = []
    for case, js in zip(cases, results, strict=True):
        for key in ("p", "entropy", "largest", "jacobianNorm", "grad", "gradNorm"):
            expected, got = case[key], js[key]
            pairs = zip(expected, got, strict=True) if isinstance(expected, list) else [(expected, got)]
            error = max(abs(a - b) for a, b in pairs)
            worst[key] = max(worst.get(key, 0.0), error)
            if not error <= AGREEMENT:
                failures.append(
                    f"{case.get('corner') or (case['d_k'], len(case['z']), case['c'])}: {key} off by {error:.3g}"
                )
    (OUT / "agreement.json").write_text(json.dumps({"rows": len(cases), "worst": worst}, indent=1), encoding="utf-8")
    assert not failures, "\n".join(failures)
    assert len(cases) > 80 and set(worst) == {"p", "entropy", "largest", "jacobianNorm", "grad", "gradNorm"}


def test_jacobian_norm_is_exact_on_known_rows(blank_page):
    """Checks of the code on rows whose norm is known in closed form (not claims)."""
    values = blank_page.evaluate(
        """() => [[0.5, 0.5], [1, 0], [0.25, 0.25, 0.25, 0.25], [0.9, 0.1]].map(p =>
            ScaleExplorerMath.jacobianNorm(Float64Array.from(p)))"""
    )
    # two weights s, 1 - s: J has eigenvalues 0 and 2 s (1 - s); uniform over n: 1/n; one-hot: 0
    assert values == pytest.approx([0.5, 0.0, 0.25, 2 * 0.9 * 0.1], abs=1e-15)


# --- 2. the default state, against the chapters -------------------------------------------------


def glued(notebook: str) -> dict[str, str]:
    return {g.name: g.text.strip("'\"") for g in glued_outputs(read(ROOT / "notebooks" / f"{notebook}.ipynb"))}


# the explorer's default number of rows: as many as chapter 3 measures per width (its seeds x 128)
ROWS = int(glued("03_softmax_saturation")["n_seeds"]) * 128
EXPLORER = yaml.safe_load((ROOT / "book" / "scale_explorer.yml").read_text(encoding="utf-8"))


def glued_at(reference: str) -> str:
    """The glued text of ``notebook::name``."""
    notebook, name = reference.split("::")
    return glued(notebook)[name]


def chapter_values(d_k: int) -> dict[tuple[str, str], tuple[str, list[float]]]:
    """(quantity, multiplier) -> the chapter's glued mark and its per-seed values, at width d_k over 128 keys:
    what book/scale_explorer.yml names (chapter 1 over 8 x 128 rows per seed, chapter 3 over 128 rows)."""
    return {
        (entry["quantity"], entry["multiplier"]): (glued_at(entry["glue"]), glued_numbers(glued_at(entry["per_seed"])))
        for entry in EXPLORER["references"]
        if entry["d_k"] == d_k and entry["keys"] == 128 and "per_seed" in entry
    }


JS_STATE = """([rows, dK]) => {
    const M = ScaleExplorerMath;
    const draw = M.drawRows(0, 128, rows);
    return M.summarize(draw, dK, [1, 1 / Math.sqrt(dK)]).map(s => ({
        entropy: Array.from(s.rows.entropy), largest: Array.from(s.rows.largest),
        gradNorm: Array.from(s.rows.gradNorm), gradMedian: s.gradMedian, dead: s.dead}));
}"""


@pytest.mark.parametrize("d_k", [64, 4096])
def test_the_explorer_reproduces_the_chapters(blank_page, d_k):
    """The explorer's default draw (seed 0, 128 keys, n_seeds x 128 rows) at d_k = 64, its default,
    and at 4096, against chapters 1 and 3.

    The statistic: the difference between the explorer's average and the chapter's, divided by the
    standard error of that difference (the explorer's rows are its own random draw, not torch's).
    The band: |z| <= 4. The explorer's error is its rows' standard deviation over sqrt(rows) for a
    mean, sqrt(p (1 - p) / rows) for a share, and for the median row gradient (the mean over groups
    of 128 rows of each group's median, as chapter 3 takes it) the spread of its group medians; the
    chapter's is the standard deviation of its per-seed values over sqrt(seeds).
    """
    js = dict(zip(("none", "sqrt"), blank_page.evaluate(JS_STATE, [ROWS, d_k]), strict=True))
    report, failures = {}, []
    for (quantity, arm), (text, per_seed) in chapter_values(d_k).items():
        chapter_mean = statistics.fmean(per_seed)
        assert averages_to(per_seed, text), (quantity, arm, chapter_mean, text)  # the mark is their mean
        rows = js[arm]
        if quantity in ("entropy", "largest"):
            value, error = statistics.fmean(rows[quantity]), statistics.stdev(rows[quantity]) / math.sqrt(ROWS)
        elif quantity == "grad_median":
            groups = [statistics.median(rows["gradNorm"][i : i + 128]) for i in range(0, ROWS, 128)]
            value, error = rows["gradMedian"], statistics.stdev(groups) / math.sqrt(len(groups))
            assert value == pytest.approx(statistics.fmean(groups), rel=1e-12)  # the JS takes the same statistic
        else:
            value, error = rows["dead"], math.sqrt(max(rows["dead"] * (1 - rows["dead"]), 1 / ROWS) / ROWS)
        chapter_error = statistics.stdev(per_seed) / math.sqrt(len(per_seed))
        z = (value - chapter_mean) / math.hypot(error, chapter_error)
        report[f"{quantity} {arm}"] = {
            "explorer": value,
            "chapter": chapter_mean,
            "glued": text,
            "standard error": math.hypot(error, chapter_error),
            "z": z,
        }
        if abs(z) > BAND_SIGMAS:
            failures.append(f"{quantity}, {arm}: explorer {value:.4g}, chapter {chapter_mean:.4g} (z = {z:.2f})")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"chapters_d{d_k}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    assert len(report) >= 4 and not failures, "\n".join(failures)  # 4 marks at d_k = 4096, 5 at 64


def test_the_draws_are_what_they_claim(blank_page):
    """Checks of the code: ||q||^2 has mean d_k and variance 2 d_k at every nested width, and the
    scores given ||q|| are standard normals times ||q|| (a sampler bug fails these by far more)."""
    moments = blank_page.evaluate(
        """() => {
            const M = ScaleExplorerMath, draw = M.drawRows(7, 16, 20000), out = [];
            for (let e = 0; e < 13; e++) {
                let s = 0, s2 = 0;
                for (let r = 0; r < draw.rows; r++) { const v = draw.lengthSquared[r * 13 + e]; s += v; s2 += v * v; }
                const mean = s / draw.rows;
                out.push([2 ** e, mean, s2 / draw.rows - mean * mean]);
            }
            let s = 0, s2 = 0;
            for (const v of draw.normals) { s += v; s2 += v * v; }
            return {widths: out, normalMean: s / draw.normals.length, normalVar: s2 / draw.normals.length};
        }"""
    )
    for d_k, mean, variance in moments["widths"]:
        # 20,000 draws: the mean's standard error is sqrt(2 d_k / 20000), 1 % of d_k at d_k = 2
        assert abs(mean / d_k - 1) < 5 * math.sqrt(2 / d_k / 20000), (d_k, mean)
        assert abs(variance / (2 * d_k) - 1) < 0.15, (d_k, variance)
    assert abs(moments["normalMean"]) < 0.01 and abs(moments["normalVar"] - 1) < 0.01


# --- 3. on the built pages ----------------------------------------------------------------------

PAGES = {"landing": "book/index.html", "chapter 3": "notebooks/03_softmax_saturation.html"}


def explorer_pages(built_site: Path) -> list[str]:
    found = []
    for edition in ("", "zh/"):
        for page in PAGES.values():
            path = built_site / edition / page
            if path.is_file() and 'class="scale-explorer"' in path.read_text(encoding="utf-8"):
                found.append(edition + page)
    return found


def test_the_explorer_is_on_the_landing_page_in_both_editions(built_site):
    pages = explorer_pages(built_site)
    assert "book/index.html" in pages and "zh/book/index.html" in pages, pages


def test_the_full_explorer_is_on_chapter_3_in_both_editions(built_site):
    """Chapter 3 places the full explorer (anchor #scale-explorer, which the landing page links) in both editions."""
    pages = explorer_pages(built_site)
    assert PAGES["chapter 3"] in pages and f"zh/{PAGES['chapter 3']}" in pages, pages
    for page in (PAGES["chapter 3"], f"zh/{PAGES['chapter 3']}"):
        text = (built_site / page).read_text(encoding="utf-8")
        assert 'id="scale-explorer"' in text and 'data-variant="full"' in text, page


MOUNT_FULL = """() => {
    // a full explorer beside the landing page's compact one, with the same settings and labels,
    // for the checks below while chapter 3's page has none
    const source = document.querySelector('.scale-explorer');
    const box = source.cloneNode(false);
    box.className = 'scale-explorer';
    box.id = 'full-explorer-under-test';
    const config = JSON.parse(source.querySelector('.scale-explorer-config').textContent);
    config.variant = 'full';
    const script = document.createElement('script');
    script.type = 'application/json';
    script.className = 'scale-explorer-config';
    script.textContent = JSON.stringify(config);
    const fallback = document.createElement('div');
    fallback.className = 'scale-explorer-fallback';
    fallback.textContent = 'stand-in';
    box.append(script, fallback);
    source.after(box);
    window.ScaleExplorer.mount(box);
    return true;
}"""


def full_explorer(page) -> str:
    """The selector of a full explorer on the page: the page's own, or one mounted for the test."""
    if page.locator(".scale-explorer[data-variant='full']").count():
        return ".scale-explorer[data-variant='full']"
    page.evaluate(MOUNT_FULL)
    return "#full-explorer-under-test"


def wait_ready(page, selector: str) -> None:
    page.wait_for_function(f"document.querySelector({selector!r}).dataset.ready === 'all'", timeout=20000)


def test_the_full_explorer_shows_the_chapters_values_and_follows_the_keyboard(browser, site_url, built_site):
    context = new_context(browser, "desktop")
    chapter = PAGES["chapter 3"]
    page = load(context, f"{site_url}/{chapter if chapter in explorer_pages(built_site) else PAGES['landing']}")
    selector = full_explorer(page)
    wait_ready(page, selector)
    averages = json.loads(page.get_attribute(selector, "data-averages"))
    assert averages["dK"] == 64 and averages["n"] == 128 and averages["rows"] == ROWS
    # the marks are the chapters' glued values, as the notebooks glued them
    marks = page.eval_on_selector_all(f"{selector} .se-reference", "links => links.map(a => a.textContent)")
    chapter1, chapter3 = glued("01_where_the_scale_sits"), glued("03_softmax_saturation")
    for text in (chapter1["bug_a_entropy_64"], chapter1["correct_entropy_64"], chapter3["row_median_scaled_64"]):
        assert any(mark.endswith(text) for mark in marks), (text, marks)
    # keyboard: the d_k slider moves by one power of 2 per arrow key, and everything follows
    page.focus(f"{selector} input[type=range]")
    page.keyboard.press("ArrowRight")
    wait_ready(page, selector)
    assert json.loads(page.get_attribute(selector, "data-averages"))["dK"] == 128
    page.keyboard.press("End")
    wait_ready(page, selector)
    at_4096 = json.loads(page.get_attribute(selector, "data-averages"))
    assert at_4096["dK"] == 4096
    # without the scale the rows saturate; with it they stay as soft as at d_k = 64
    assert at_4096["none"]["largest"] > 0.9 and at_4096["chosen"]["largest"] < 0.1
    # the multiplier by keyboard: the radio group takes arrow keys
    page.focus(f"{selector} input[type=radio][value=sqrt]")
    page.keyboard.press("ArrowRight")
    wait_ready(page, selector)
    assert json.loads(page.get_attribute(selector, "data-averages"))["kind"] == "lin"
    assert not page.problems, page.problems
    context.close()


EXPLORER_REPORT = """() => {
    const boxes = [...document.querySelectorAll('.scale-explorer')];
    const small = [];
    for (const box of boxes) for (const node of box.querySelectorAll('.scale-explorer-app *')) {
        const text = [...node.childNodes].some(c => c.nodeType === 3 && c.textContent.trim());
        if (!text) continue;
        const shown = node instanceof SVGElement ? node.ownerSVGElement : node;
        if (!shown.getClientRects().length) continue;  // a row the phone's buttons hide (display: none)
        const size = parseFloat(getComputedStyle(node).fontSize)
            * (node instanceof SVGElement ? node.ownerSVGElement.getBoundingClientRect().width / 320 : 1);
        if (size < 9) small.push(node.textContent.slice(0, 30) + ' ' + size.toFixed(1));
    }
    // a radio button's target is its label too (clicking either selects it)
    const controls = [...document.querySelectorAll('.scale-explorer input, .scale-explorer button')]
        .filter(c => c.offsetParent !== null)
        .map(c => (c.type === 'radio' ? c.closest('.se-radio') : c).getBoundingClientRect())
        .filter(r => r.height < 24 || r.width < 24).length;
    return {small, controls, boxes: boxes.length, ready: boxes.every(b => b.dataset.ready === 'all'),
            wider: boxes.filter(b => b.scrollWidth > b.clientWidth + 1).length,
            titles: boxes.map(b => (b.querySelector('.se-title') || {textContent: ''}).textContent)};
}"""


@page_check(modes=MODES, pages=lambda path: path.removeprefix("zh/") in PAGES.values())
def test_the_explorer_reads_in_every_mode_and_width(page, view):
    """The landing page's compact explorer and chapter 3's full one, in both editions, at 1280 and
    390 px, light and dark: text and ticks >= 9 px, controls >= 24 px, no explorer wider than its
    box, the Chinese labels translated. (Every page's checks read these loads too: axe, nothing
    wider than the page, no console error: tests/test_site.py.)"""
    report = page.evaluate(EXPLORER_REPORT)
    problems = [] if report["boxes"] and report["ready"] else [f"{report['boxes']} explorers, not all ready"]
    problems += [f"text under 9 px: {s}" for s in report["small"]]
    if report["controls"]:
        problems.append(f"{report['controls']} controls smaller than 24 x 24 px")
    if report["wider"]:
        problems.append("an explorer is wider than its box")
    if view.path.startswith("zh/") and any(t != "动手看一行注意力" for t in report["titles"]):
        problems.append(f"labels not translated: {report['titles']}")
    if SHOTS and not view.path.startswith("zh/"):
        name = "landing-compact" if view.path == PAGES["landing"] else f"{view.viewport}-{view.mode}"
        page.locator(".scale-explorer").first.screenshot(path=str(SHOTS / f"site-explorer-{name}.png"))
    return problems


ROWS_IN_VIEW = """(box) => {
    const app = box.querySelector('.scale-explorer-app');
    const visible = e => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    const panels = [...app.querySelectorAll('.se-panel')].filter(visible).map(p => {
        const charts = p.querySelectorAll('svg.se-chart');
        const r = charts[charts.length - 1].getBoundingClientRect();  // the weights, the row compared
        return {arm: p.dataset.arm, top: p.getBoundingClientRect().top, bottom: r.bottom};
    });
    const toggle = app.querySelector('.se-toggle');
    const buttons = [...toggle.querySelectorAll('button')].map(b => ({arm: b.dataset.arm,
        pressed: b.getAttribute('aria-pressed'), height: b.getBoundingClientRect().height,
        text: b.textContent}));
    const header = document.querySelector('.bd-header');
    return {panels, toggle: visible(toggle), buttons,
            top: app.querySelector('.se-controls').getBoundingClientRect().top,
            height: innerHeight - (header ? Math.max(0, header.getBoundingClientRect().bottom) : 0),
            shown: app.dataset.shown};
}"""
# the controls' top just under the page's sticky header (the theme scrolls smoothly: "instant" here)
SCROLL_TO_CONTROLS = """(box) => {
    const header = document.querySelector('.bd-header');
    const controls = box.querySelector('.se-controls');
    const below = header ? header.getBoundingClientRect().height : 0;
    scrollTo({top: scrollY + controls.getBoundingClientRect().top - below - 4, behavior: 'instant'});
}"""


@page_check(pages=lambda path: path.removeprefix("zh/") in PAGES.values(), order=INTERACTS)
def test_on_a_phone_the_compared_rows_share_one_place_with_the_controls(page, view):
    """The review found chapter 3's explorer 2,328 px tall on a phone, its two weight charts 900 px
    apart, never on screen together. Now, at 390 px: two buttons under the controls show one row at
    a time, in the same place; the controls' top and the shown row's weights fit one 844-px screen;
    the other button shows the other row there and marks itself pressed. On a desktop both rows show
    and the buttons do not."""
    problems = []
    boxes = page.locator(".scale-explorer")
    for index in range(boxes.count()):
        box = boxes.nth(index)
        page.evaluate(SCROLL_TO_CONTROLS, box.element_handle())
        before = box.evaluate(ROWS_IN_VIEW)
        if view.viewport == "desktop":
            if before["toggle"] or len(before["panels"]) != 2:
                shown = f"{len(before['panels'])} rows and the buttons shown: {before['toggle']}"
                problems.append(f"explorer {index}: on a desktop, {shown}")
            continue
        if not before["toggle"] or [p["arm"] for p in before["panels"]] != [before["shown"]]:
            shown = f"buttons shown {before['toggle']}, rows {before['panels']}, shown {before['shown']}"
            problems.append(f"explorer {index}: {shown}")
            continue
        if any(b["height"] < 44 or not b["text"].strip() for b in before["buttons"]):
            problems.append(f"explorer {index}: a button under 44 px or without its row's name: {before['buttons']}")
        taken = before["panels"][0]["bottom"] - before["top"]
        if taken > before["height"]:
            problems.append(
                f"explorer {index}: controls and the shown row take {taken:.0f} px of {before['height']:.0f}"
            )
        other = "chosen" if before["shown"] == "none" else "none"
        box.locator(f".se-toggle-button[data-arm={other}]").click()
        after = box.evaluate(ROWS_IN_VIEW)
        if [p["arm"] for p in after["panels"]] != [other]:
            problems.append(f"explorer {index}: the button for {other} shows {after['panels']}")
        elif abs(after["panels"][0]["top"] - before["panels"][0]["top"]) > 2:
            problems.append(
                f"explorer {index}: the other row is not in the same place ({before['panels']}, {after['panels']})"
            )
        if [b["pressed"] for b in after["buttons"] if b["arm"] == other] != ["true"]:
            problems.append(f"explorer {index}: the pressed button is not marked: {after['buttons']}")
        box.locator(f".se-toggle-button[data-arm={before['shown']}]").click()
    return problems


def test_the_static_stand_in_shows_without_javascript_and_in_print(browser, site_url):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{site_url}/book/index.html", wait_until="load")
    assert page.locator(".scale-explorer-fallback").first.is_visible()
    assert page.locator(".scale-explorer-app").count() == 0
    context.close()
    context = new_context(browser, "desktop")
    page = load(context, f"{site_url}/book/index.html")
    page.wait_for_function("document.querySelector('.scale-explorer').dataset.ready === 'all'")
    assert not page.locator(".scale-explorer-fallback").first.is_visible()
    page.emulate_media(media="print")
    assert page.locator(".scale-explorer-fallback").first.is_visible()
    assert not page.locator(".scale-explorer-app").first.is_visible()
    context.close()
