// Mermaid's ES module build, served by this site (scripts/vendor_assets.py). Material's bundle
// uses window.mermaid when it is defined (else it would load Mermaid from a CDN); a module script
// runs before DOMContentLoaded, when Material looks. Only the chunks of the diagram types a page
// draws are fetched. scripts/coursesite/page_assets.py keeps this script off pages without a diagram.
import mermaid from "../assets/vendor/mermaid/mermaid.esm.min.mjs";

window.mermaid = mermaid;
