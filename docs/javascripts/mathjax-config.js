// MathJax 4, served by this site. Fonts are loaded from our own copy of
// @mathjax/mathjax-newcm-font instead of the CDN MathJax defaults to.
(() => {
  const vendor = new URL("../assets/vendor/", document.currentScript.src).href;
  window.MathJax = {
    loader: { paths: { fonts: vendor + "mathjax-fonts" } },
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
      // Hidden MathML beside each formula for screen readers; no speech-rule engine (its worker
      // and rule files are ~1 MiB) unless a reader turns speech on in MathJax's menu.
      menuOptions: {
        settings: { assistiveMml: true, enrich: false, speech: false, braille: false },
      },
    },
  };
})();
