"""The scale explorer: one attention row over n keys, with and without the scale, to play with.

A page places it with a directive; its body is what stands in for it without JavaScript, in
print, and in the learner notebooks (``tools/`` turns the directive into its body there)::

    ```{scale-explorer}
    :variant: full        (or compact: d_k and the multiplier only, for the landing page)
    :name: scale-explorer (an anchor and a label to link to)
    :more: ../notebooks/03_softmax_saturation#scale-explorer   (compact: where the full one is)
    :d_k: 64              (a power of 2 from 1 to 4096)
    :keys: 128
    :multiplier: sqrt     (none, sqrt, lin, or a number)
    :seed: 0

    {numref}`Figure %s <fig-gradient-sides>` shows what these rows do, measured over 20 seeds.
    ```

The browser does the rest (``book/_assets/scale-explorer.js``, its math in
``scale-explorer-math.js``). This extension writes, per page, its settings, its labels in the
page's language, the book's scale colours (``helpers/style.py``) and the chapters' measured
values to mark beside its averages (``book/scale_explorer.yml``, pasted from the notebooks'
committed outputs), and loads the two scripts on the pages that have an explorer.
"""

from __future__ import annotations

import html
import json
import math
import posixpath
import sys
from pathlib import Path

import yaml
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.figures import book_style  # noqa: E402
from tools.notebook_format import ROOT, averages_to, glued_numbers, glued_outputs, read  # noqa: E402

SCRIPTS = ("scale-explorer-math.js", "scale-explorer.js")
REFERENCES = ROOT / "book" / "scale_explorer.yml"
QUANTITIES = ("entropy", "largest", "grad_median", "dead")
MULTIPLIERS = ("none", "sqrt", "lin")

# Everything the explorer writes, in both editions (terms as in locales/zh_CN/terms.yml).
LABELS = {
    "en": {
        "title": "Explore one attention row",
        "intro": "Move the key width and the multiplier: the same random row of scores, with and without the scale.",
        "d_k": "key width dₖ",
        "multiplier": "multiplier c of the logits",
        "m_none": "none (c = 1)",
        "m_sqrt": "c = 1/√dₖ",
        "m_lin": "c = 1/dₖ",
        "m_free": "free c",
        "free_value": "value of c",
        "keys": "number of keys n",
        "draw": "random draw",
        "new_draw": "New draw",
        "arm_none": "no scale (c = 1)",
        "show": "which row to show",
        "arm_chosen": "your multiplier: {m}",
        "same_as_none": "(the same as no scale)",
        "logits": "logits z = c·q·k, keys sorted by score",
        "weights": "softmax weights, same keys",
        "uniform": "uniform 1/n",
        "entropy": "entropy",
        "entropy_detail": "nats, at most ln n = {max}",
        "largest": "largest weight",
        "jacobian": "‖J‖₂ of the softmax Jacobian",
        "at_most_half": "(at most 1/2)",
        "gradient": "gradient it passes back, ‖∂L/∂z‖",
        "upstream": (
            "The gradient a row passes back is J g for one fixed upstream gradient g = ∂L/∂p, drawn "
            "standard normal per row, as in chapter 3."
        ),
        "averages": "Averages over {rows} rows of this draw",
        "averages_note": (
            "As many rows as chapter 3 measures per width ({seeds} seeds × 128). Marked: the chapters' own "
            "measurement at the same setting (torch, {seeds} seeds); the explorer's rows are its own random draw, so "
            "the two agree within sampling error, not digit for digit. The median row gradient is taken as chapter 3 "
            "takes it: the median of each 128 rows, averaged."
        ),
        "quantity": "quantity",
        "q_entropy": "mean entropy (nats)",
        "q_largest": "mean largest weight",
        "q_jacobian": "mean ‖J‖₂",
        "q_grad_median": "median row gradient ‖∂L/∂zᵢ‖",
        "q_dead": "share of dead rows (gradient below 10⁻³)",
        "chapter": "ch. {n}: {value}",
        "computing": "computing…",
        "how": (
            "How the rows are drawn: queries and keys have dₖ independent standard-normal components. "
            "Given the query q, "
            "the scores q·kⱼ are independent normals of variance ‖q‖², so the explorer draws ‖q‖ (its square is "
            "chi-square with dₖ degrees of freedom) and n standard normals: the same distribution, at any dₖ. Widths "
            "are nested, so moving dₖ rescales the same row. The math runs in float64 and agrees with torch to 10⁻⁶ "
            "(tests/test_explorer.py)."
        ),
        "full": "The full explorer, with the gradient and averages over many rows, is in chapter 3.",
        "summary": "{arm}: entropy {entropy} of {max} nats, largest weight {largest}, gradient {grad}.",
        "chart_logits": "{arm}: {n} logits from {low} to {high}.",
        "chart_weights": "{arm}: {n} softmax weights, the largest {largest}; uniform would be {uniform}.",
    },
    "zh_CN": {
        "title": "动手看一行注意力",
        "intro": "拖动键维度和乘数：同一行随机得分，带缩放与不缩放。",
        "d_k": "键维度 dₖ",
        "multiplier": "logit 的乘数 c",
        "m_none": "不缩放（c = 1）",
        "m_sqrt": "c = 1/√dₖ",
        "m_lin": "c = 1/dₖ",
        "m_free": "自选 c",
        "free_value": "c 的值",
        "keys": "键的个数 n",
        "draw": "随机抽样",
        "new_draw": "重新抽样",
        "arm_none": "不缩放（c = 1）",
        "show": "显示哪一行",
        "arm_chosen": "所选乘数：{m}",
        "same_as_none": "（与不缩放相同）",
        "logits": "logit z = c·q·k，键按得分排序",
        "weights": "softmax 权重，键的顺序相同",
        "uniform": "均匀 1/n",
        "entropy": "熵",
        "entropy_detail": "奈特，上限 ln n = {max}",
        "largest": "最大权重",
        "jacobian": "softmax 雅可比矩阵的 ‖J‖₂",
        "at_most_half": "（至多 1/2）",
        "gradient": "这一行传回的梯度 ‖∂L/∂z‖",
        "upstream": "一行传回的梯度是 J g，其中上游梯度 g = ∂L/∂p 固定，每行按标准正态抽取，与第 3 章相同。",
        "averages": "本次抽样 {rows} 行的平均",
        "averages_note": (
            "行数与第 3 章每个维度测量的相同（{seeds} 个种子 × 128 行）。"
            "标注的是各章在同一设置下自己的测量值（torch，{seeds} 个种子）；"
            "探索器的行是它自己的随机抽样，所以两者在抽样误差范围内一致，而不是逐位相同。"
            "行梯度的中位数按第 3 章的取法：每 128 行取中位数，再取平均。"
        ),
        "quantity": "量",
        "q_entropy": "平均熵（奈特）",
        "q_largest": "平均最大权重",
        "q_jacobian": "平均 ‖J‖₂",
        "q_grad_median": "行梯度 ‖∂L/∂zᵢ‖ 的中位数",
        "q_dead": "梯度失效的行的比例（梯度小于 10⁻³）",
        "chapter": "第 {n} 章：{value}",
        "computing": "计算中…",
        "how": (
            "行是这样抽取的：查询和键各有 dₖ 个独立的标准正态分量。给定查询 q，得分 q·kⱼ 是方差为 ‖q‖² 的独立正态变量，"
            "所以探索器抽取 ‖q‖（其平方服从自由度为 dₖ 的卡方分布）和 n 个标准正态数：分布相同，且与 dₖ 无关。"
            "各维度是嵌套的，所以改变 dₖ 只是缩放同一行。"
            "用 float64 计算，与 torch 的结果相差不超过 10⁻⁶（tests/test_explorer.py）。"
        ),
        "full": "完整的探索器（含梯度和多行平均）在第 3 章。",
        "summary": "{arm}：熵 {entropy}，上限 {max} 奈特，最大权重 {largest}，梯度 {grad}。",
        "chart_logits": "{arm}：{n} 个 logit，从 {low} 到 {high}。",
        "chart_weights": "{arm}：{n} 个 softmax 权重，最大 {largest}；均匀时为 {uniform}。",
    },
}


def scale_colors() -> dict[str, str]:
    """helpers.style.SCALE_COLORS, read without importing helpers (and torch with it)."""
    return dict(book_style().SCALE_COLORS)


def power_of_two(argument: str) -> int:
    value = directives.positive_int(argument)
    if value > 4096 or value & (value - 1):
        raise ValueError(f"d_k must be a power of 2 from 1 to 4096, got {value}")
    return value


def keys(argument: str) -> int:
    value = directives.positive_int(argument)
    if not 2 <= value <= 1024 or value & (value - 1):
        raise ValueError(f"keys must be a power of 2 from 2 to 1024, got {value}")
    return value


def multiplier(argument: str) -> str:
    if argument in MULTIPLIERS:
        return argument
    value = float(argument)
    if not (math.isfinite(value) and 1e-3 <= value <= 10):
        raise ValueError(f"multiplier must be none, sqrt, lin or a number from 0.001 to 10, got {argument}")
    return repr(value)


class scale_explorer(nodes.General, nodes.Element):  # noqa: N801  (docutils names nodes in lower case)
    """The explorer's box; its children are what stands in for it without JavaScript."""


class ScaleExplorer(SphinxDirective):
    has_content = True
    option_spec = {
        "variant": lambda argument: directives.choice(argument, ("full", "compact")),
        "name": directives.unchanged_required,
        "more": directives.unchanged_required,
        "d_k": power_of_two,
        "keys": keys,
        "multiplier": multiplier,
        "seed": directives.nonnegative_int,
    }

    def run(self) -> list[nodes.Node]:
        node = scale_explorer()
        node["settings"] = {
            "variant": self.options.get("variant", "full"),
            "dK": self.options.get("d_k", 64),
            "keys": self.options.get("keys", 128),
            "multiplier": self.options.get("multiplier", "sqrt"),
            "seed": self.options.get("seed", 0),
        }
        node["more"] = self.options.get("more")
        self.set_source_info(node)
        if "name" in self.options:
            self.add_name(node)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def glued_text(glued: dict[str, dict[str, str | None]], reference: str) -> str:
    """The committed text of the glue ``notebook::name``; a name that the notebook does not glue fails the build."""
    notebook, name = reference.split("::")
    if notebook not in glued:
        glued[notebook] = {g.name: g.text for g in glued_outputs(read(ROOT / "notebooks" / f"{notebook}.ipynb"))}
    text = glued[notebook].get(name)
    if text is None:
        raise ExtensionError(f"{REFERENCES.name}: notebooks/{notebook}.ipynb does not glue {name!r}")
    return text.strip("'\"")


def load_references(app) -> None:
    """The chapters' measured values, pasted from the committed outputs; an unknown name fails the build."""
    config = yaml.safe_load(REFERENCES.read_text(encoding="utf-8"))
    glued: dict[str, dict[str, str | None]] = {}
    references = []
    for entry in config["references"]:
        text = glued_text(glued, entry["glue"])
        if entry["quantity"] not in QUANTITIES or entry["multiplier"] not in MULTIPLIERS:
            raise ExtensionError(f"{REFERENCES.name}: unknown quantity or multiplier in {entry}")
        # the same statistic, seed by seed (what tests/test_explorer.py compares with): it must average to the mark
        if "per_seed" in entry and not averages_to(glued_numbers(glued_text(glued, entry["per_seed"])), text):
            raise ExtensionError(f"{REFERENCES.name}: {entry['per_seed']} does not average to {entry['glue']}")
        references.append({**entry, "text": text, "notebook": entry["glue"].split("::")[0]})
    app.env.scale_explorer_seeds = int(glued_text(glued, config["seeds"]))  # type: ignore[attr-defined]
    app.env.scale_explorer_references = references  # type: ignore[attr-defined]
    app.env.scale_explorer_colors = scale_colors()  # type: ignore[attr-defined]


def reference_uri(translator, reference: dict) -> str:
    builder, docname = translator.builder, translator.builder.current_docname
    target = f"notebooks/{reference['notebook']}"
    anchor = ""
    if reference.get("label"):
        labels = builder.env.domaindata["std"]["labels"]
        if reference["label"] not in labels:
            raise ExtensionError(f"{REFERENCES.name}: no section labelled {reference['label']!r}")
        target, anchor, _ = labels[reference["label"]]
    return builder.get_relative_uri(docname, target) + (f"#{anchor}" if anchor else "")


def chapter_number(notebook: str) -> int:
    return int(notebook.split("_")[0])


def visit_html(translator, node: scale_explorer) -> None:
    env = translator.builder.env
    language = translator.builder.config.language or "en"
    config = {
        **node["settings"],
        "seeds": env.scale_explorer_seeds,
        "labels": {
            key: text.replace("{seeds}", str(env.scale_explorer_seeds))
            for key, text in LABELS.get(language, LABELS["en"]).items()
        },
        "colors": env.scale_explorer_colors,
        "references": [
            {
                "quantity": r["quantity"],
                "dK": r["d_k"],
                "multiplier": r["multiplier"],
                "keys": r["keys"],
                "text": r["text"],
                "chapter": chapter_number(r["notebook"]),
                "href": reference_uri(translator, r),
            }
            for r in env.scale_explorer_references
        ],
    }
    if node.get("more"):
        target, _, anchor = node["more"].partition("#")
        page = posixpath.normpath(posixpath.join(posixpath.dirname(translator.builder.current_docname), target))
        config["more"] = translator.builder.get_relative_uri(translator.builder.current_docname, page)
        config["more"] += f"#{anchor}" if anchor else ""
    ids = f' id="{node["ids"][0]}"' if node.get("ids") else ""
    payload = json.dumps(config, ensure_ascii=False).replace("</", "<\\/")
    translator.body.append(
        f'<div class="scale-explorer"{ids} data-variant="{html.escape(config["variant"])}">'
        f'<script type="application/json" class="scale-explorer-config">{payload}</script>'
        '<div class="scale-explorer-fallback">'
    )


def depart_html(translator, node: scale_explorer) -> None:
    translator.body.append("</div></div>")


def unwrap_elsewhere(app, doctree, docname) -> None:
    """Outside HTML (gettext, text, LaTeX) the explorer is its body, the static stand-in."""
    if app.builder.format == "html":
        return
    for node in list(doctree.findall(scale_explorer)):
        node.replace_self(node.children)


def load_scripts(app, pagename, templatename, context, doctree) -> None:
    """The explorer's two scripts, on the pages that have one (Sphinx resets the list after each page)."""
    if doctree is not None and any(True for _ in doctree.findall(scale_explorer)):
        for script in SCRIPTS:
            app.add_js_file(script, loading_method="defer")


def setup(app):
    app.add_node(scale_explorer, html=(visit_html, depart_html))
    app.add_directive("scale-explorer", ScaleExplorer)
    app.connect("builder-inited", load_references)
    app.connect("doctree-resolved", unwrap_elsewhere)
    app.connect("html-page-context", load_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
