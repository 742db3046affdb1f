// TeX -> SVG at build time, so pages ship no MathJax engine (docs/adr/0013-build-time-rendering.md).
//
//   node scripts/tex2svg.mjs < requests.jsonl > answers.jsonl
//
// One JSON request per line, {"tex": "...", "display": true|false}; one answer per line, in order:
// {"html": "<mjx-container …>"} or {"error": "the TeX error message"}. The first line written,
// once MathJax is loaded, is {"css": "…"}: the stylesheet every page with math needs (placing
// display math, hiding the assistive MathML visually). Each formula carries MathJax's assistive
// MathML for screen readers; glyphs are paths filled with currentColor, so dark mode just works.
// scripts/coursesite/math_svg.py keeps one of these processes per build and caches the answers.
import { createInterface } from "node:readline";
import MathJax from "mathjax";

await MathJax.init({
  loader: { load: ["input/tex", "output/svg", "a11y/assistive-mml", "adaptors/liteDOM"] },
  // "local": each formula defines the glyphs it <use>s; math_svg.py merges them into one set
  // per page (formulas are cached one by one and combined on pages in any order).
  // an unknown macro is an error (the default draws it in red and carries on)
  tex: { packages: { "[-]": ["noundefined"] } },
  svg: { fontCache: "local" },
});
const adaptor = MathJax.startup.adaptor;
const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

write({ css: adaptor.textContent(MathJax.svgStylesheet()) });

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) continue;
  const { tex, display } = JSON.parse(line);
  try {
    const node = await MathJax.tex2svgPromise(tex, { display: Boolean(display) });
    const html = adaptor.outerHTML(node);
    const error = /data-mjx-error="([^"]*)"/.exec(html);
    write(error ? { error: error[1] } : { html });
  } catch (err) {
    write({ error: String(err?.message ?? err) });
  }
}
