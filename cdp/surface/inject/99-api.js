// @ts-check
// The entry points Go calls, and the one way it calls them.
//
// The page script is these files, in name order, inside one function
// expression that Go evaluates in an isolated world of each frame document
// (Page.createIsolatedWorld), with the document's nonce:
//
//   (function (nonce) { 'use strict'; <00-base.js> ... <99-api.js> return API; })
//
// The page's own scripts can neither see nor patch it: its registry of
// elements, its nonce and the DOM prototypes it calls are those of its own
// world. Go keeps the returned object under a per-Page global name and calls
// only API.call. Every entry point takes one argument object and returns a
// plain JSON value: {err: code, ...counts} for a refusal (codes in R),
// anything else for success. Details never carry page text: only counts and
// tag names.

/** Thrown (as a string) when a call carries another document's nonce. */
const WRONG_DOCUMENT = 'wrong-document';

const ENTRY = Object.freeze({
  snapshot, more, expand, frameOrder, frameBox, prepare, readBack, readChecked, scroll,
  identity, navState, read, wait, settle, count, hitFrame, focusFrame, frameLayout, afterFrame,
  armDrag, dragState,
  // With an element (Runtime.callFunctionOn) or returning elements (kept as
  // remote objects, not values).
  tagFrame, closedRoot, closedHosts, pendingElement, elementOf,
});

const API = Object.freeze({
  /**
   * call runs entry point name with arg, after checking that the caller
   * addresses this document: Go adds the nonce here and nowhere else.
   * @param {string} name
   * @param {string} n the document nonce Go holds for this world
   * @param {any} arg
   * @param {Element} [el] an element argument (tagFrame)
   */
  call(name, n, arg, el) {
    if (n !== W.nonce) throw WRONG_DOCUMENT;
    const f = ENTRY[name];
    if (typeof f !== 'function') return { err: R.invalid, detail: 'no such entry point' };
    return el === undefined ? f(arg || {}) : f(el, arg || {});
  },
});
