// Runs before Material's bundle (scripts/coursesite/page_assets.py puts it there; docs/adr/0012).
// Material's bundle requests two things on every page load that a reader may never use:
// 1. the search index: here it is requested when the reader first turns to the search box (focus,
//    or the search toggle on a phone) or arrives from a search result (?h=…, highlighted terms),
//    and it is the index of the page's own language, not the default language's;
// 2. "<href>/sitemap.xml" for each <link rel="alternate" hreflang> in the head: Material expects
//    language roots there (mkdocs-material#6582), this site links each page's translation, so
//    those requests could only fail and are not sent. The language menu links work without them.
(() => {
  const script = document.currentScript;
  const absolute = (url) => new URL(url, location.href).href;
  const defaultIndex = absolute(script.dataset.defaultIndex);
  const ownIndex = absolute(script.dataset.searchIndex);
  const alternates = new Set(
    [...document.querySelectorAll("link[rel=alternate][hreflang]")].map(
      (link) => new URL("sitemap.xml", link.href).href,
    ),
  );

  let wanted;
  const searchWanted = new Promise((resolve) => (wanted = resolve));
  document.addEventListener("focusin", (event) => {
    if (event.target instanceof Element && event.target.matches(".md-search__input")) wanted();
  });
  document.addEventListener("change", (event) => {
    if (event.target.id === "__search" && event.target.checked) wanted();
  });
  if (new URL(location.href).searchParams.has("h")) wanted();

  const { open, send } = XMLHttpRequest.prototype;
  const kind = new WeakMap(); // request -> "search" | "skip"
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const href = absolute(String(url));
    if (href === defaultIndex) kind.set(this, "search");
    else if (alternates.has(href)) kind.set(this, "skip");
    return open.call(this, method, kind.get(this) === "search" ? ownIndex : url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (kind.get(this) === "skip") return;
    if (kind.get(this) === "search") searchWanted.then(() => send.apply(this, args));
    else send.apply(this, args);
  };
})();
