// MathJax 4, served by this site. Fonts are loaded from our own copy of
// @mathjax/mathjax-newcm-font instead of the CDN MathJax defaults to.
(() => {
  const vendor = new URL("../assets/vendor/", document.currentScript.src).href;
  window.MathJax = {
    loader: {
      paths: { fonts: vendor + "mathjax-fonts" },
      // Only what the pages use (startup.js loads them): TeX in, HTML+CSS out, and hidden MathML
      // beside each formula for screen readers. No speech-rule engine (the combined
      // tex-mml-chtml.js would load ~1.2 MiB of it) and no menu (it pulls in the engine's glue).
      load: ["input/tex", "output/chtml", "a11y/assistive-mml"],
    },
    tex: {
      // $…$ and $$…$$: nbconvert writes notebook math that way, whatever the notebook used.
      inlineMath: [["\\(", "\\)"], ["$", "$"]],
      displayMath: [["\\[", "\\]"], ["$$", "$$"]],
      processEscapes: true,
      processEnvironments: true,
    },
    options: {
      // Only typeset what pymdownx.arithmatex marked as math, and notebook markdown (mkdocs-jupyter).
      ignoreHtmlClass: ".+",
      processHtmlClass: "arithmatex|jp-RenderedMarkdown",
    },
  };
})();
