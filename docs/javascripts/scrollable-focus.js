// A box that scrolls sideways (a wide table, a notebook cell) must be reachable with the keyboard
// (axe: scrollable-region-focusable). Material does this for its own code blocks only.
document$.subscribe(() => {
  for (const box of document.querySelectorAll(".md-typeset__scrollwrap, .highlight-ipynb")) {
    if (box.scrollWidth > box.clientWidth && !box.hasAttribute("tabindex")) box.tabIndex = 0;
  }
});
