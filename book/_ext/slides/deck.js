// Lay out the book's slides, then start reveal.js.
//
// The slides come from the book's cells; a cell with a tall figure or a long list may not
// fit a 1280 x 720 slide. Before reveal.js starts, every slide is laid out at slide size
// (after MathJax has typeset it and its images have loaded) and, where it is too tall,
// its trailing blocks move to a continuation slide right after it, until every slide fits.
window.addEventListener("load", async () => {  // MathJax is deferred: wait for it
  const WIDTH = 1280, HEIGHT = 720, PADDING = 16;
  await MathJax.startup.promise;
  await MathJax.typesetPromise();
  await Promise.all([...document.images].map((img) => img.decode().catch(() => null)));
  await document.fonts.ready;  // a slide measured in a fallback font would be split at the wrong place

  const slides = document.querySelector(".reveal .slides");
  const measure = document.createElement("div");
  measure.className = "reveal";
  measure.style.cssText = `position:absolute; left:-10000px; top:0; width:${WIDTH}px; visibility:hidden;`;
  const inner = document.createElement("div");
  inner.className = "slides";
  inner.style.cssText = `width:${WIDTH}px;`;
  measure.appendChild(inner);
  document.body.appendChild(measure);

  const tooTall = (section) => section.scrollHeight > HEIGHT - PADDING;
  const blocks = (section) => [...section.children].filter((e) => !e.matches("aside.notes"));
  for (const section of [...slides.children]) {
    let current = section;
    while (true) {
      inner.appendChild(current);
      current.style.cssText = `display:block; position:static; width:${WIDTH}px; height:auto; transform:none;`;
      const single = blocks(current);
      const splittable = single.length > 1 || (single.length === 1 && single[0].matches("ul, ol") && single[0].children.length > 1);
      if (!tooTall(current) || !splittable) {
        current.removeAttribute("style");
        break;
      }
      const next = document.createElement("section");
      next.className = "continued";
      const notes = current.querySelector("aside.notes");
      if (notes) next.appendChild(notes.cloneNode(true));  // the speaker keeps their notes
      while (tooTall(current) && blocks(current).length > 1) {
        next.prepend(blocks(current).pop());
      }
      // a list alone and too tall: its trailing items continue on the next slide
      const last = blocks(current).pop();
      if (tooTall(current) && last && last.matches("ul, ol") && last.children.length > 1) {
        const rest = document.createElement(last.tagName);
        while (tooTall(current) && last.children.length > 1) rest.prepend(last.lastElementChild);
        next.prepend(rest);
      }
      current.removeAttribute("style");
      slides.appendChild(current);
      current = next;
    }
    slides.appendChild(current);
  }
  measure.remove();

  // ?print-pdf: reveal.js lays every slide out as a 1280 x 720 page (tools/print_pdf.py prints
  // them); ?print-pdf&notes: each page grows a band under the slide that holds its speaker notes.
  const printing = /print-pdf/i.test(window.location.search);
  const withNotes = printing && /\bnotes\b/i.test(window.location.search);
  const NOTES_HEIGHT = 400;
  Reveal.on("pdf-ready", () => {
    if (withNotes) {
      const style = document.createElement("style");
      style.textContent = `@page { size: ${WIDTH}px ${HEIGHT + NOTES_HEIGHT}px; margin: 0; }`;
      document.head.appendChild(style);
      for (const page of document.querySelectorAll(".pdf-page")) {
        page.style.height = `${HEIGHT + NOTES_HEIGHT}px`;
        const notes = page.querySelector(".speaker-notes-pdf");
        if (notes) notes.classList.add("deck-notes-band");
      }
    }
    document.documentElement.dataset.deckPrint = "ready";
  });
  Reveal.initialize({
    width: WIDTH, height: HEIGHT, margin: printing ? 0 : 0.02, center: false,
    controls: !printing, progress: !printing, hash: !printing, slideNumber: printing ? false : "c/t",
    transition: "none", plugins: [RevealNotes],
    showNotes: withNotes, pdfMaxPagesPerSlide: 1, pdfSeparateFragments: false,
  });
});
