// The scale explorer (book/_ext/scale_explorer.py writes its box and settings): one attention row
// over n keys, without the scale and with the reader's multiplier, and its averages over many rows.
// All the math is in scale-explorer-math.js; this file only draws. Plain DOM and SVG, no library.
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const MAX_CELLS = 2 ** 19; // rows × keys kept in memory: 2,560 rows at n = 128, fewer for more keys
  let counter = 0;

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === false || value === null || value === undefined) continue;
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function svgElement(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    return node;
  }

  function format(x) {
    if (x === 0) return "0";
    const size = Math.abs(x);
    if (size >= 0.01 && size < 1000) return String(Number(x.toPrecision(3)));
    const [mantissa, exponent] = x.toExponential(1).split("e");
    return `${mantissa}e${Number(exponent)}`;
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (_, key) => (key in values ? values[key] : `{${key}}`));
  }

  function mount(box) {
    const M = window.ScaleExplorerMath;
    const config = JSON.parse(box.querySelector(".scale-explorer-config").textContent);
    const L = config.labels;
    const full = config.variant !== "compact";
    const id = `scale-explorer-${++counter}`;
    const state = {
      dK: config.dK,
      kind: ["none", "sqrt", "lin"].includes(config.multiplier) ? config.multiplier : "free",
      free: ["none", "sqrt", "lin"].includes(config.multiplier) ? 0.125 : Number(config.multiplier),
      n: config.keys,
      seed: config.seed,
    };
    let draw = null;

    // --- controls -------------------------------------------------------------------------------
    const slider = (name, label, min, max, step, value) => {
      const input = element("input", { type: "range", id: `${id}-${name}`, min, max, step, value });
      const output = element("output", { for: `${id}-${name}`, "aria-hidden": "true" });
      const row = element(
        "div",
        { class: "se-control" },
        element("label", { for: `${id}-${name}`, text: label }),
        input,
        output,
      );
      return { row, input, output };
    };
    const dKControl = slider("dk", L.d_k, 0, 12, 1, Math.log2(state.dK));
    const keysControl = slider("keys", L.keys, 1, 10, 1, Math.log2(state.n));
    const freeControl = slider("free", L.free_value, -3, 1, 0.05, Math.log10(state.free));
    freeControl.row.classList.add("se-free");

    const kinds = full ? ["none", "sqrt", "lin", "free"] : ["none", "sqrt", "lin"];
    const radios = element("div", { class: "se-radios" });
    for (const kind of kinds) {
      const radio = element("input", {
        type: "radio",
        name: `${id}-multiplier`,
        id: `${id}-m-${kind}`,
        value: kind,
        checked: state.kind === kind,
      });
      radios.append(element("span", { class: "se-radio" }, radio, element("label", { for: radio.id, text: L[`m_${kind}`] })));
    }
    const multiplierControl = element(
      "fieldset",
      { class: "se-control se-multiplier" },
      element("legend", { text: L.multiplier }),
      radios,
      full ? freeControl.row : null,
    );

    const seedInput = element("input", { type: "number", id: `${id}-seed`, min: 0, max: 999999, step: 1, value: state.seed });
    const newDraw = element("button", { type: "button", class: "se-button", text: L.new_draw });
    const seedControl = element(
      "div",
      { class: "se-control se-seed" },
      element("label", { for: seedInput.id, text: L.draw }),
      seedInput,
      newDraw,
    );

    const controls = element("div", { class: "se-controls" }, dKControl.row, multiplierControl);
    if (full) controls.append(keysControl.row, seedControl);

    // --- one panel per arm ------------------------------------------------------------------------
    const panel = (arm) => {
      const title = element("p", { class: "se-arm-title" });
      const logits = svgElement("svg", { class: "se-chart", viewBox: "0 0 320 96", role: "img" });
      const weights = svgElement("svg", { class: "se-chart", viewBox: "0 0 320 96", role: "img" });
      const metrics = element("dl", { class: "se-metrics" });
      const node = element(
        "div",
        { class: "se-panel", "data-arm": arm },
        title,
        full ? element("p", { class: "se-chart-title", text: L.logits, "aria-hidden": "true" }) : null,
        full ? logits : null,
        element("p", { class: "se-chart-title", text: L.weights, "aria-hidden": "true" }),
        weights,
        metrics,
      );
      return { node, title, logits, weights, metrics };
    };
    const arms = { none: panel("none"), chosen: panel("chosen") };
    const panels = element("div", { class: "se-panels" }, arms.none.node, arms.chosen.node);
    // On a phone the two panels would stack a screen apart: book.css shows one at a time there, in
    // the same place right under the controls, and these two buttons switch between them.
    const toggle = element("div", { class: "se-toggle", role: "group", "aria-label": L.show });
    const toggleButtons = {};
    const show = (arm) => {
      app.dataset.shown = arm;
      for (const [key, button] of Object.entries(toggleButtons)) button.setAttribute("aria-pressed", String(key === arm));
    };
    for (const arm of ["none", "chosen"]) {
      const button = element("button", { type: "button", class: "se-toggle-button", "data-arm": arm, "aria-controls": `${id}-panel-${arm}` });
      button.addEventListener("click", () => show(arm));
      toggleButtons[arm] = button;
      toggle.append(button);
      arms[arm].node.id = `${id}-panel-${arm}`;
    }

    const averages = element("div", { class: "se-averages", tabindex: "0", role: "region", "aria-label": "" });
    const live = element("p", { class: "se-live", "aria-live": "polite" });
    const app = element(
      "div",
      { class: "scale-explorer-app", role: "group", "aria-labelledby": `${id}-title` },
      element("p", { class: "se-title", id: `${id}-title`, text: L.title }),
      element("p", { class: "se-intro", text: L.intro }),
      controls,
      toggle,
      panels,
      full ? element("p", { class: "se-note", text: L.upstream }) : null,
      full ? averages : null,
      full ? element("p", { class: "se-how", text: L.how }) : null,
      !full && config.more ? element("p", { class: "se-more" }, element("a", { href: config.more, text: L.full })) : null,
      live,
    );
    if (!full) averages.remove();
    show("none");

    // --- drawing ----------------------------------------------------------------------------------
    const multiplierValue = () => M.multiplier(state.kind, state.dK, state.free);
    const armColor = (kind) => (kind === "free" ? "currentColor" : config.colors[kind]);
    const armLabel = (kind) => (kind === "none" ? L.arm_none : L[`m_${kind}`]);
    // as many rows as chapter 3 measures per width (its seeds × 128 queries), fewer for many keys
    const rowsFor = (n) => (full ? Math.min(config.seeds * 128, Math.floor(MAX_CELLS / n)) : 1);

    function bars(svg, values, low, high, color, guide, labels) {
      svg.replaceChildren();
      const left = 34;
      const width = 320 - left - 2;
      const top = 4;
      const height = 96 - top - 14;
      const y = (v) => top + ((high - v) / (high - low)) * height;
      const zero = y(Math.max(low, 0));
      const step = width / values.length;
      let path = "";
      values.forEach((v, j) => {
        const x = left + j * step;
        const end = y(v);
        path += `M${x.toFixed(2)} ${zero.toFixed(2)}V${end.toFixed(2)}h${Math.max(step - (step > 3 ? 1 : 0), 0.6).toFixed(2)}V${zero.toFixed(2)}Z`;
      });
      svg.append(svgElement("path", { d: path, fill: color, stroke: "none" }));
      svg.append(svgElement("line", { x1: left, x2: left + width, y1: zero, y2: zero, class: "se-axis" }));
      svg.append(svgElement("line", { x1: left, x2: left, y1: top, y2: top + height, class: "se-axis" }));
      for (const [value, text] of labels) {
        const label = svgElement("text", { x: left - 4, y: y(value) + 4, "text-anchor": "end", class: "se-tick" });
        label.textContent = text;
        svg.append(label);
      }
      if (guide) {
        svg.append(svgElement("line", { x1: left, x2: left + width, y1: y(guide.value), y2: y(guide.value), class: "se-guide" }));
        const text = svgElement("text", { x: left + width, y: y(guide.value) - 3, "text-anchor": "end", class: "se-tick" });
        text.textContent = guide.label;
        svg.append(text);
      }
    }

    function metric(list, name, value, detail, fraction) {
      const meter = element("span", { class: "se-meter", "aria-hidden": "true" }, element("span"));
      meter.firstChild.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
      list.append(
        element(
          "div",
          { class: "se-metric" },
          element("dt", { text: name }),
          element("dd", {}, element("span", { class: "se-value", text: value }), detail ? element("span", { class: "se-detail", text: ` ${detail}` }) : null),
          meter,
        ),
      );
    }

    function showRow() {
      const c = multiplierValue();
      const order = [];
      const { z: scores, g } = M.row(draw, 0, state.dK, 1, null);
      for (let j = 0; j < state.n; j++) order.push(j);
      order.sort((i, j) => scores[j] - scores[i]);
      const results = {};
      for (const [arm, factor, kind] of [["none", 1, "none"], ["chosen", c, state.kind]]) {
        const z = scores.map((s) => factor * s);
        results[arm] = { z, kind, stats: M.rowStatistics(z, g) };
      }
      const pMax = Math.max(results.none.stats.largest, results.chosen.stats.largest);
      const lnN = Math.log(state.n);
      const summaries = [];
      for (const arm of ["none", "chosen"]) {
        const { z, kind, stats } = results[arm];
        const view = arms[arm];
        const label = arm === "none" ? L.arm_none : fill(L.arm_chosen, { m: armLabel(kind) + (kind === "free" ? ` = ${format(c)}` : "") });
        view.title.textContent = label + (arm === "chosen" && kind === "none" ? ` ${L.same_as_none}` : "");
        toggleButtons[arm].textContent = label;
        toggleButtons[arm].style.setProperty("--se-arm", armColor(kind));
        view.title.style.setProperty("--se-arm", armColor(kind));
        view.node.style.setProperty("--se-arm", armColor(kind));
        const sortedZ = order.map((j) => z[j]);
        const reach = Math.max(...sortedZ.map(Math.abs)) || 1;
        if (full) {
          bars(view.logits, sortedZ, -reach, reach, armColor(kind), null, [[reach, format(reach)], [0, "0"], [-reach, format(-reach)]]);
          view.logits.setAttribute("aria-label", fill(L.chart_logits, { arm: label, n: state.n, low: format(sortedZ[state.n - 1]), high: format(sortedZ[0]) }));
        }
        bars(view.weights, order.map((j) => stats.p[j]), 0, pMax, armColor(kind), { value: 1 / state.n, label: L.uniform }, [[pMax, format(pMax)], [0, "0"]]);
        view.weights.setAttribute("aria-label", fill(L.chart_weights, { arm: label, n: state.n, largest: format(stats.largest), uniform: format(1 / state.n) }));
        view.metrics.replaceChildren();
        metric(view.metrics, L.entropy, format(stats.entropy), fill(L.entropy_detail, { max: format(lnN) }), stats.entropy / lnN);
        metric(view.metrics, L.largest, format(stats.largest), "", stats.largest);
        if (full) {
          metric(view.metrics, L.jacobian, format(stats.jacobianNorm), L.at_most_half, 2 * stats.jacobianNorm);
          metric(view.metrics, L.gradient, format(stats.gradNorm), "", Math.min(1, stats.gradNorm / 0.5));
        }
        summaries.push(fill(L.summary, { arm: label, entropy: format(stats.entropy), max: format(lnN), largest: format(stats.largest), grad: format(stats.gradNorm) }));
      }
      return summaries.join(" ");
    }

    function reference(quantity, kind) {
      const match = config.references.find(
        (r) => r.quantity === quantity && r.multiplier === kind && r.dK === state.dK && r.keys === state.n,
      );
      if (!match) return null;
      return element("a", { class: "se-reference", href: match.href, text: fill(L.chapter, { n: match.chapter, value: match.text }) });
    }

    function showAverages() {
      const c = multiplierValue();
      const [none, chosen] = M.summarize(draw, state.dK, [1, c]);
      const rowsText = draw.rows.toLocaleString(document.documentElement.lang || "en");
      const table = element("table", { class: "se-table" });
      table.append(element("caption", { text: fill(L.averages, { rows: rowsText }) }));
      const head = element("tr", {}, element("th", { scope: "col", text: L.quantity }), element("th", { scope: "col", text: L.arm_none }), element("th", { scope: "col", text: fill(L.arm_chosen, { m: armLabel(state.kind) }) }));
      table.append(element("thead", {}, head));
      const body = element("tbody");
      const rows = [
        ["entropy", L.q_entropy, "entropy"],
        ["largest", L.q_largest, "largest"],
        [null, L.q_jacobian, "jacobianNorm"],
        ["grad_median", L.q_grad_median, "gradMedian"],
        ["dead", L.q_dead, "dead"],
      ];
      for (const [quantity, label, key] of rows) {
        const cells = [element("th", { scope: "row", text: label })];
        for (const [values, kind] of [[none, "none"], [chosen, state.kind]]) {
          const mark = quantity && kind !== "free" ? reference(quantity, kind) : null;
          cells.push(element("td", { "data-quantity": key, "data-arm": kind }, element("span", { class: "se-value", text: format(values[key]) }), mark ? " " : null, mark));
        }
        body.append(element("tr", {}, ...cells));
      }
      table.append(body);
      averages.replaceChildren(table, element("p", { class: "se-note", text: L.averages_note }));
      averages.setAttribute("aria-label", fill(L.averages, { rows: rowsText }));
      box.dataset.averages = JSON.stringify({ dK: state.dK, n: state.n, seed: state.seed, kind: state.kind, rows: draw.rows, none, chosen }, (k, v) => (k === "rows" && typeof v === "object" ? undefined : v));
    }

    let pending = 0;
    let announce = 0;
    function update() {
      dKControl.output.textContent = `${state.dK}`;
      dKControl.input.setAttribute("aria-valuetext", `dₖ = ${state.dK}`);
      keysControl.output.textContent = `${state.n}`;
      keysControl.input.setAttribute("aria-valuetext", `n = ${state.n}`);
      freeControl.output.textContent = format(state.free);
      freeControl.input.setAttribute("aria-valuetext", `c = ${format(state.free)}`);
      freeControl.row.hidden = state.kind !== "free";
      if (!draw || draw.seed !== state.seed || draw.n !== state.n) draw = M.drawRows(state.seed, state.n, rowsFor(state.n));
      const summary = showRow();
      clearTimeout(announce);
      announce = setTimeout(() => (live.textContent = summary), 600);
      if (full) {
        box.dataset.ready = "row";
        averages.classList.add("se-busy");
        clearTimeout(pending);
        pending = setTimeout(() => {
          showAverages();
          averages.classList.remove("se-busy");
          box.dataset.ready = "all";
        }, 30);
      } else {
        box.dataset.ready = "all";
      }
    }

    dKControl.input.addEventListener("input", () => {
      state.dK = 2 ** Number(dKControl.input.value);
      update();
    });
    keysControl.input.addEventListener("input", () => {
      state.n = 2 ** Number(keysControl.input.value);
      update();
    });
    freeControl.input.addEventListener("input", () => {
      state.free = 10 ** Number(freeControl.input.value);
      update();
    });
    radios.addEventListener("change", (event) => {
      state.kind = event.target.value;
      update();
    });
    seedInput.addEventListener("change", () => {
      const value = Math.max(0, Math.min(999999, Math.floor(Number(seedInput.value) || 0)));
      seedInput.value = value;
      state.seed = value;
      update();
    });
    newDraw.addEventListener("click", () => {
      state.seed = (state.seed + 1) % 1000000;
      seedInput.value = state.seed;
      update();
    });

    box.append(app);
    box.classList.add("is-interactive");
    update();
  }

  window.ScaleExplorer = { mount: mount };

  function start() {
    if (!window.ScaleExplorerMath) return; // the static stand-in stays
    for (const box of document.querySelectorAll(".scale-explorer:not(.is-interactive)")) mount(box);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
