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
  // a continuation repeats its slide's title (class "carried"), which never moves on
  const movable = (section) => blocks(section).filter((e) => !e.matches(".carried"));
  const heading = (section) => blocks(section).find((e) => e.matches("h1, h2, h3"));
  // a figure is drawn for a 584-px column (or 1100 px side by side): on a slide that has room it is
  // shown up to 1.6 times larger, so that its text reads from the back of the room
  const grow = (section) => {
    for (const img of section.querySelectorAll("img")) {
      if (!img.naturalWidth || img.style.maxHeight) continue;  // not one that had to shrink
      for (const factor of [1.6, 1.45, 1.3, 1.15]) {
        img.style.width = `${Math.round(img.naturalWidth * factor)}px`;
        img.style.maxHeight = "none";
        if (!tooTall(section)) break;
        img.style.width = "";
        img.style.maxHeight = "";
      }
    }
  };
  // a figure drawn for a slide (helpers/style.py) keeps its text >= 18 px down to MIN_SCALE of its size:
  // a slide a little too tall shrinks its figures that far rather than move them to a slide of their own
  const MIN_SCALE = Number(document.body.dataset.figureMinScale || 1);
  const shrinkToFit = (section) => {
    const images = [...section.querySelectorAll("img")].filter((img) => img.naturalWidth);
    const heights = images.map((img) => img.getBoundingClientRect().height);
    for (let step = 1; images.length && tooTall(section) && step <= 16; step++) {
      const scale = 1 - ((1 - MIN_SCALE) * step) / 16;
      images.forEach((img, i) => { img.style.maxHeight = `${Math.floor(heights[i] * scale)}px`; });
    }
    if (tooTall(section)) images.forEach((img) => { img.style.maxHeight = ""; });
    return !tooTall(section);
  };
  for (const section of [...slides.children]) {
    let current = section;
    while (true) {
      inner.appendChild(current);
      current.style.cssText = `display:block; position:static; width:${WIDTH}px; height:auto; transform:none;`;
      const single = movable(current);
      const rows = (block) => [...block.querySelectorAll("table tbody")].flatMap((body) => [...body.children]);
      const splittable = single.length > 1 || (single.length === 1 && (
        (single[0].matches("ul, ol") && single[0].children.length > 1) || rows(single[0]).length > 1));
      if (tooTall(current) && !splittable) {
        // one block that cannot split (a figure and its caption): its images shrink until it fits
        for (const img of current.querySelectorAll("img")) {
          while (tooTall(current) && img.height > 240) img.style.maxHeight = `${img.height - 8}px`;
        }
      }
      if (tooTall(current) && splittable && shrinkToFit(current)) {
        current.removeAttribute("style");
        break;
      }
      if (!tooTall(current) || !splittable) {
        if (!tooTall(current)) grow(current);
        current.removeAttribute("style");
        break;
      }
      const next = document.createElement("section");
      next.className = "continued";
      if (current.dataset.cell) next.dataset.cell = current.dataset.cell;  // the cell it shows, for the tests
      const notes = current.querySelector("aside.notes");
      if (notes) next.appendChild(notes.cloneNode(true));  // the speaker keeps their notes
      while (tooTall(current) && movable(current).length > 1) {
        next.prepend(movable(current).pop());
      }
      // a list alone and too tall: its trailing items continue on the next slide
      const last = movable(current).pop();
      if (tooTall(current) && last && last.matches("ul, ol") && last.children.length > 1) {
        const rest = document.createElement(last.tagName);
        while (tooTall(current) && last.children.length > 1) rest.prepend(last.lastElementChild);
        next.prepend(rest);
      } else if (tooTall(current) && last && rows(last).length > 1) {
        // a table alone and too tall: its trailing rows continue under the same header
        const rest = last.cloneNode(true);
        rest.querySelectorAll("caption").forEach((caption) => caption.remove());
        const into = rest.querySelector("table tbody");
        into.replaceChildren();
        while (tooTall(current) && rows(last).length > 1) into.prepend(rows(last).pop());
        next.prepend(rest);
      }
      const title = heading(current);
      if (title && !heading(next)) {
        const carried = title.cloneNode(true);
        carried.classList.add("carried");
        carried.removeAttribute("id");
        next.insertBefore(carried, blocks(next)[0] || null);
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
