// Wide tables say that they scroll. Every table in a page's text sits in a box that scrolls
// sideways (book.css: .table-scroll, with shadows at an edge that hides columns); where the table
// is wider than the box, the box is marked (data-overflow), can take the keyboard's focus (the
// arrow keys then scroll it), is named by the table's caption, and a "scroll" cue follows it.
// tests/test_site_layout.py fails on a table that is cut off without all of that.
(function () {
  "use strict";
  const zh = (document.documentElement.lang || "").toLowerCase().startsWith("zh");
  const CUE = zh ? "表格较宽：可左右滚动 →" : "Wide table: scroll sideways →";
  const NAME = zh ? "表格（可滚动）" : "table (scrolls sideways)";

  function box(table) {
    const parent = table.parentElement;
    if (parent.classList.contains("table-scroll")) return parent;
    // the theme already wraps docutils tables in a scrolling container: reuse it
    const wrapper = parent.classList.contains("pst-scrollable-table-container") ? parent : document.createElement("div");
    wrapper.classList.add("table-scroll");
    if (wrapper !== parent) {
      table.replaceWith(wrapper);
      wrapper.append(table);
    }
    addCue(wrapper, CUE);
    return wrapper;
  }

  // The "scroll" cue after a box that scrolls sideways (a table's or a figure's).
  function addCue(wrapper, text) {
    const cue = document.createElement("p");
    cue.className = "table-scroll-cue";
    cue.setAttribute("aria-hidden", "true");
    cue.textContent = text;
    wrapper.after(cue);
  }

  // A box wider than its column is marked, takes the keyboard's focus and is named by its caption;
  // one that fits is not. The test is the theme's own (pydata-sphinx-theme makes a box focusable when
  // scrollWidth > clientWidth): with a tolerance here, a table 1 px too wide was focusable by one script
  // and not by the other, and which ran last decided the page (a race the dark/light fingerprint caught).
  function markOverflow(wrapper, caption, kind) {
    if (wrapper.scrollWidth > wrapper.clientWidth) {
      const name = caption ? caption.textContent.trim().replace(/\s+/g, " ").slice(0, 120) : "";
      wrapper.setAttribute("data-overflow", "");
      wrapper.setAttribute("tabindex", "0");
      wrapper.setAttribute("role", "region");
      wrapper.setAttribute("aria-label", name ? `${name} (${kind})` : kind);
    } else {
      for (const name of ["data-overflow", "tabindex", "role", "aria-label"]) wrapper.removeAttribute(name);
    }
  }

  function mark(wrapper) {
    markOverflow(wrapper, wrapper.querySelector("table caption"), NAME);
  }

  // A figure's image is never shrunk (book.css, .figure-scroll): where the column is narrower than
  // the image, its own box scrolls sideways and says so, as a wide table's does.
  const FIGURE_CUE = zh ? "图较宽：可左右滚动 →" : "Wide figure: scroll sideways →";
  const FIGURE_NAME = zh ? "图（可滚动）" : "figure (scrolls sideways)";

  function figureBox(image) {
    const shown = image.parentElement.tagName === "PICTURE" ? image.parentElement : image;
    if (shown.parentElement.classList.contains("figure-scroll")) return shown.parentElement;
    const wrapper = document.createElement("div");
    wrapper.className = "figure-scroll";
    shown.replaceWith(wrapper);
    wrapper.append(shown);
    addCue(wrapper, FIGURE_CUE);
    return wrapper;
  }

  function markFigure(wrapper) {
    const figure = wrapper.closest("figure");
    markOverflow(wrapper, figure && figure.querySelector("figcaption"), FIGURE_NAME);
  }

  function start() {
    const wrappers = [...document.querySelectorAll(".bd-article table")]
      .filter((table) => !table.closest(".table-scroll, .scale-explorer, .MathJax, mjx-container"))
      .map(box);
    const figures = [...document.querySelectorAll(".bd-article figure img, .bd-article .cell_output img")]
      .filter((image) => !image.closest(".scale-explorer, .MathJax, mjx-container"))
      .map(figureBox);
    figures.forEach((wrapper) => {
      markFigure(wrapper);
      wrapper.querySelectorAll("img").forEach((image) => image.addEventListener("load", () => markFigure(wrapper)));
    });
    if ("ResizeObserver" in window) {
      const seen = new ResizeObserver((entries) => entries.forEach((entry) => markFigure(entry.target)));
      figures.forEach((wrapper) => seen.observe(wrapper));
    } else {
      window.addEventListener("resize", () => figures.forEach(markFigure));
    }
    // A wide figure takes the contents column's width too from 1200 px (book.css, figure.wide-full):
    // while one is in view the contents fold to their heading, as sphinx-book-theme folds them beside
    // its own full-width content (its .hide class), and open again on hover.
    const contents = document.querySelector("div.bd-sidebar-secondary");
    const wide = document.querySelectorAll("figure.wide-full");
    if (contents && wide.length && "IntersectionObserver" in window) {
      const inView = new Set();
      const fold = new IntersectionObserver(
        (entries) => {
          entries.forEach((entry) => (entry.isIntersecting ? inView.add(entry.target) : inView.delete(entry.target)));
          contents.classList.toggle("hide", inView.size > 0);
        },
        { rootMargin: "0px 0px -33% 0px" },
      );
      wide.forEach((figure) => fold.observe(figure));
    }
    const all = () => document.querySelectorAll(".table-scroll").forEach(mark);
    all();
    if ("ResizeObserver" in window) {
      const observer = new ResizeObserver((entries) => entries.forEach((entry) => mark(entry.target)));
      wrappers.forEach((wrapper) => observer.observe(wrapper));
    } else {
      window.addEventListener("resize", all);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();

  // pydata-sphinx-theme 0.16.1 gives a code block, output or table box a tab stop when it scrolls,
  // on load and again after a resize or a change of the content (pydata-sphinx-theme.js,
  // addTabStopsToScrollableElements), not after a change of colour mode, which can make a box
  // scroll or stop scrolling (dark mode pads cell outputs by 8 px): a keyboard reader who had
  // switched could not reach it. A change of mode is announced to the theme as a resize.
  new MutationObserver(() => window.dispatchEvent(new Event("resize"))).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ["data-theme"],
  });
})();

// A display equation wider than its column scrolls sideways in its own box (on a phone). MathJax's
// menu no longer puts formulas in the tab order (_config.yml, mathjax3_config), so such a box takes
// the keyboard's focus itself, while it scrolls (the arrow keys then scroll it), and only then: a
// formula that fits is no Tab stop (tests/test_site.py, test_formulas_are_not_tab_stops).
(function () {
  "use strict";
  if (!("ResizeObserver" in window)) return;
  const mark = (math) => {
    if (math.scrollWidth > math.clientWidth) math.setAttribute("tabindex", "0");
    else math.removeAttribute("tabindex");
  };
  const resized = new ResizeObserver((entries) => entries.forEach((entry) => mark(entry.target)));
  const watch = (node) => {
    if (node.nodeType !== 1) return;
    if (node.matches('mjx-container[display="true"]')) resized.observe(node);
    node.querySelectorAll('mjx-container[display="true"]').forEach((math) => resized.observe(math));
  };
  new MutationObserver((records) => records.forEach((record) => record.addedNodes.forEach(watch))).observe(
    document.documentElement,
    { childList: true, subtree: true },
  );
  watch(document.documentElement);
})();

// Search results quote the page's content, not its chrome. Sphinx's searchtools.js takes a result's
// snippet from the page's [role=main], which in this theme also holds the article's header buttons
// ("中文", "English"), the page's contents ("Contents") and the previous/next links: a snippet read
// "…中文 Without the scale: softmax saturation Contents…". Here the snippet is taken from the article
// alone, its inline TeX in the plain form the titles use (√dₖ). tests/test_site.py searches both editions.
// site.js runs before searchtools.js, whose search starts when the document is parsed: the wrapping
// waits for that moment too (its listener, added first, runs first).
function plainSearchSnippets() {
  "use strict";
  // searchtools.js declares Search with const: a global binding, not a property of window
  // eslint-disable-next-line no-undef
  const search = typeof Search === "undefined" ? null : Search;
  if (!search || typeof search.htmlToText !== "function") return;
  const original = search.htmlToText;
  const plain = (text) =>
    text
      .replace(/\\[()[\]]/g, "")
      .replace(/\\sqrt\{([^{}]*)\}/g, "√$1")
      .replace(/\\(?:mathrm|operatorname|text)\{([^{}]*)\}/g, "$1")
      .replace(/\\cdot/g, "·")
      .replace(/\\top/g, "ᵀ")
      .replace(/d_k|d_\{k\}/g, "dₖ")
      .replace(/\s+/g, " ");
  search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const article = page.querySelector("article.bd-article");
    if (!article) return original(htmlString, anchor);
    article.querySelectorAll(".headerlink, script, style, .scale-explorer-config").forEach((e) => e.remove());
    const block = (anchor && article.querySelector(anchor)) || article;
    return plain(block.textContent);
  };
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", plainSearchSnippets);
else plainSearchSnippets();
