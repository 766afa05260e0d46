// @ts-check
// Reads of the document's identity and text.
// A part of the page script: see 99-api.js.

function identity(a) {
  return { ok: true, url: location.href, title: document.title, readyState: document.readyState };
}

function read(a) {
  const body = document.body || document.documentElement;
  const t = body ? body.innerText : '';
  const max = a.max > 0 ? a.max : 20000;
  return { text: t.length > max ? t.slice(0, max) : t, total: t.length, url: location.href, title: document.title };
}
