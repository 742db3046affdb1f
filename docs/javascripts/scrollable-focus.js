// A box that scrolls sideways (a wide table, a notebook cell) must be reachable with the keyboard
// (axe: scrollable-region-focusable), a chart on a phone too (coursesite.charts). Material does
// this for its own code blocks only.
document$.subscribe(() => {
  for (const box of document.querySelectorAll(".md-typeset__scrollwrap, .highlight-ipynb, .chart-scroll")) {
    if (box.scrollWidth > box.clientWidth && !box.hasAttribute("tabindex")) box.tabIndex = 0;
  }
});
