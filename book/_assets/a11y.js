// Accessibility fixes for markup that sphinx-book-theme 1.2, pydata-sphinx-theme 0.16 and
// myst-nb produce; tests/test_site.py runs axe-core on every page and fails on any
// serious or critical violation.
document.addEventListener("DOMContentLoaded", () => {
  // WCAG 2.5.3 "label in name": a control's accessible name must contain the text it
  // shows. The theme's search field ("Search… Ctrl+K", named "Search"), its colour-mode
  // button and myst-nb's "Show code cell source" toggles are named otherwise.
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
      summary.setAttribute("aria-label", `Show the sections of ${link ? link.innerText.trim() : "this chapter"}`);
    }
  }
});

// The colour-mode button shows one of three icons, each titled ("Light", "Dark", "System
// Settings"), which axe takes for shown text that the button's name ("Color mode") lacks.
// The icons are decoration. Font Awesome turns each <i> into an <svg> with a <title>
// once its own script has run, so this runs after the page has loaded.
window.addEventListener("load", () => {
  for (const icon of document.querySelectorAll(".theme-switch-button i, .theme-switch-button svg")) {
    icon.removeAttribute("title");
    icon.removeAttribute("aria-labelledby");
    icon.querySelectorAll("title").forEach((title) => title.remove());
    icon.setAttribute("aria-hidden", "true");
  }
});
