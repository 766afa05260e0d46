// @ts-check
// Reads of the document's identity and text.
// A part of the page script: see 99-api.js.

// NAVS counts the navigations this document started (the Navigation API's
// navigate event, which fires in every world, synchronously when one
// starts: a link, a form, location, history.pushState, a fragment), and
// keeps the last. The browser's own events of a navigation may come after
// the acknowledgement of the input that caused it; this count does not.
const NAVS = { seq: 0, last: null };
/** @type {any} the Navigation API (not in every lib.dom yet) */
const NAV_API = /** @type {any} */ (globalThis).navigation;
if (NAV_API) {
  NAV_API.addEventListener('navigate', e => {
    NAVS.seq++;
    NAVS.last = { url: e.destination.url, sameDocument: e.destination.sameDocument, download: e.downloadRequest != null };
  });
}

// navState is the document's URL, title and navigation count now.
function navState() {
  return { url: location.href, title: document.title, seq: NAVS.seq, last: NAVS.last };
}

function identity(a) {
  return { ok: true, url: location.href, title: document.title, readyState: document.readyState };
}

function read(a) {
  const body = document.body || document.documentElement;
  const t = body ? body.innerText : '';
  const max = a.max > 0 ? a.max : 20000;
  return { text: t.length > max ? t.slice(0, max) : t, total: t.length, url: location.href, title: document.title };
}
