// A box that scrolls sideways (a wide table, a notebook cell) must be reachable with the keyboard
// (axe: scrollable-region-focusable), a chart on a phone too (coursesite.charts). Material does
// this for its own code blocks only.
// A box whose layout is still skipped (content-visibility: auto, ADR-0013) cannot be measured
// yet: it is made reachable too, since it may scroll once laid out (a spare tab stop costs less).
const skipped = (box) =>
  typeof box.checkVisibility === "function" && !box.checkVisibility({ contentVisibilityAuto: true });
document$.subscribe(() => {
  for (const box of document.querySelectorAll(".md-typeset__scrollwrap, .highlight-ipynb, .chart-scroll")) {
    if (box.hasAttribute("tabindex")) continue;
    if (box.scrollWidth > box.clientWidth || skipped(box)) box.tabIndex = 0;
  }
});
