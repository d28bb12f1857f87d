// Accessibility fixes for markup that sphinx-book-theme 1.2, pydata-sphinx-theme 0.16 and
// myst-nb produce; the browser tests (tests/test_site.py) run axe-core on every page and
// fail on any serious or critical violation.
//
// Every fix here edits markup that the server wrote and that no other script rewrites, once,
// when the document has been parsed. This file is the last script in the page's <head>
// (html_js_files comes after the theme's scripts), so its DOMContentLoaded listener runs
// after theirs (togglebutton.js adds its buttons in its own listener, registered before
// this one). What Font Awesome's script renders later is made right at build time instead:
// the colour-mode icons carry no title (book/_templates/theme-switcher.html), so there is
// nothing to strip from the <svg> it swaps in, and nothing to race with.
// The labels that upstream types in English, as the Chinese edition names them.
const CHINESE_LABELS = {
  "Toggle hidden content": "显示或隐藏内容", // myst-nb's folds, togglebutton.js's buttons
  Main: "主导航", // sphinx-book-theme's sidebar <nav>
  Page: "本页导航", // sphinx-book-theme's <nav> around the page's own contents
};
document.addEventListener("DOMContentLoaded", () => {
  const chinese = document.documentElement.lang.startsWith("zh");
  if (chinese) {
    for (const element of document.querySelectorAll("[aria-label]")) {
      const label = CHINESE_LABELS[element.getAttribute("aria-label")];
      if (label) element.setAttribute("aria-label", label);
    }
  }
  // WCAG 2.5.3 "label in name": a control's accessible name must contain the text it shows.
  // myst-nb's fold toggles (<summary aria-label="Toggle hidden content">) show "Show the
  // plotting code", then "Hide the plotting code": without the label their name is what
  // they show, in both states.
  for (const summary of document.querySelectorAll("details > summary[aria-label]")) {
    if ((summary.innerText || "").trim()) summary.removeAttribute("aria-label");
  }
  // Other named controls (the theme's search field shows "Search… Ctrl+K", named "Search")
  // keep their name after the text they show.
  for (const element of document.querySelectorAll("[aria-label]")) {
    const shown = (element.innerText || "").trim().replace(/\s+/g, " ");
    const label = element.getAttribute("aria-label") || "";
    if (shown && !label.toLowerCase().includes(shown.toLowerCase())) {
      element.setAttribute("aria-label", `${shown} (${label})`);
    }
  }
  // sphinxcontrib-bibtex marks the bibliography as a list whose items are not list items.
  for (const list of document.querySelectorAll(".citation-list[role='list']")) list.removeAttribute("role");
  // The sidebar's expand arrows are <summary> elements with an icon and no text.
  for (const summary of document.querySelectorAll(".bd-sidebar-primary details > summary")) {
    if (!summary.innerText.trim() && !summary.getAttribute("aria-label")) {
      const link = summary.parentElement.parentElement.querySelector(":scope > a");
      const chapter = link ? link.innerText.trim() : "";
      const label = chinese
        ? `显示${chapter ? `“${chapter}”` : "本章"}的小节`
        : `Show the sections of ${chapter || "this chapter"}`;
      summary.setAttribute("aria-label", label);
    }
  }
  // Done: the browser tests wait for this mark (tools/browser.py, SETTLED).
  document.documentElement.dataset.a11y = "done";
});
