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

  Reveal.initialize({
    width: WIDTH, height: HEIGHT, margin: 0.02, center: false,
    controls: true, progress: true, hash: true, slideNumber: "c/t",
    transition: "none", plugins: [RevealNotes],
  });
});
