// The Chinese edition only (tools/locale.py adds this file to the Chinese build).
// Chinese typesetting keeps a closing mark (，。；：、）) off the start of a line. The browser may
// break between inline math and the mark that follows it ("宽度均为 dₖ" / "；V 包含…" at 390 px):
// once MathJax has typeset the page, each inline formula and the one mark after it share a span
// that does not break (zh.css: .zh-nobreak).
(function () {
  "use strict";
  const CLOSING = /^[，。；：、）！？”」]/;

  function glue(root) {
    root.querySelectorAll("mjx-container:not([display='true'])").forEach((container) => {
      const math = container.closest("span.math") || container;
      if (math.parentElement && math.parentElement.classList.contains("zh-nobreak")) return;
      const next = math.nextSibling;
      if (!next || next.nodeType !== Node.TEXT_NODE || !CLOSING.test(next.data)) return;
      next.splitText(1); // `next` keeps the one mark, the rest of the text follows it
      const span = document.createElement("span");
      span.className = "zh-nobreak";
      math.before(span);
      span.append(math, next);
    });
  }

  let tries = 0;
  function whenTypeset() {
    const mathjax = window.MathJax;
    if (mathjax && mathjax.startup && mathjax.startup.promise) {
      mathjax.startup.promise.then(() => glue(document));
    } else if (tries++ < 100) {
      setTimeout(whenTypeset, 100);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", whenTypeset);
  else whenTypeset();
})();
