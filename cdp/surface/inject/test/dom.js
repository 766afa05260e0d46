// @ts-check
// A tiny DOM: enough elements, attributes and text for the pure parts of
// the page script (roles, names, states, shapes) to run under node, without
// a browser or an npm package. Layout, visibility and events are not
// modelled: what needs them is tested in real Chromium by the Go tests.
'use strict';

class Text {
  /** @param {string} data */
  constructor(data) { this.nodeType = 3; this.data = data; this.parentNode = null; }
  get textContent() { return this.data; }
}

class Element {
  /**
   * @param {string} tag
   * @param {Record<string, string>} [attrs]
   * @param {(Element|Text|string)[]} [kids]
   */
  constructor(tag, attrs = {}, kids = []) {
    this.nodeType = 1;
    this.localName = tag;
    this.attrs = new Map(Object.entries(attrs));
    /** @type {(Element|Text)[]} */
    this.childNodes = [];
    /** @type {Element|null} */
    this.parentNode = null;
    /** @type {any} */
    this.ownerDocument = null;
    this.shadowRoot = null;
    this.value = attrs.value || '';
    this.checked = 'checked' in attrs;
    this.disabled = 'disabled' in attrs;
    for (const k of kids) this.append(k);
  }
  /** @param {Element|Text|string} k */
  append(k) {
    const n = typeof k === 'string' ? new Text(k) : k;
    n.parentNode = this;
    this.childNodes.push(n);
  }
  get parentElement() { return this.parentNode instanceof Element ? this.parentNode : null; }
  get children() { return /** @type {Element[]} */ (this.childNodes.filter(n => n instanceof Element)); }
  get firstElementChild() { return this.children[0] || null; }
  get childElementCount() { return this.children.length; }
  get textContent() { return this.childNodes.map(n => n.textContent).join(''); }
  get innerText() { return this.textContent; }
  get isContentEditable() {
    for (let n = /** @type {Element|null} */ (this); n; n = n.parentElement) {
      const v = n.getAttribute('contenteditable');
      if (v === '' || v === 'true') return true;
      if (v === 'false') return false;
    }
    return false;
  }
  get multiple() { return this.hasAttribute('multiple'); }
  get size() { return +(this.getAttribute('size') || 0); }
  get readOnly() { return this.hasAttribute('readonly'); }
  get required() { return this.hasAttribute('required'); }
  get labels() { return this._labels || []; }
  /** @param {string} n */
  getAttribute(n) { return this.attrs.has(n) ? /** @type {string} */ (this.attrs.get(n)) : null; }
  /** @param {string} n */
  hasAttribute(n) { return this.attrs.has(n); }
  /** @param {string} n @param {string} v */
  setAttribute(n, v) { this.attrs.set(n, v); }
  /** Tag lists only: "article,aside,main". @param {string} sel */
  closest(sel) {
    const tags = sel.split(',').map(s => s.trim());
    for (let n = /** @type {Element|null} */ (this); n; n = n.parentElement) if (tags.includes(n.localName)) return n;
    return null;
  }
  /** Lists of tags and [attr] only: "img,[aria-label]". @param {string} sel */
  querySelector(sel) {
    const alts = sel.split(',').map(s => s.trim());
    const hit = (/** @type {Element} */ el) => alts.some(a => a.startsWith('[') ? el.hasAttribute(a.slice(1, -1)) : el.localName === a);
    const walk = (/** @type {Element} */ el) => {
      for (const c of el.children) { if (hit(c)) return c; const f = walk(c); if (f) return f; }
      return null;
    };
    return walk(this);
  }
  /** @param {any} n */
  contains(n) { for (; n; n = n.parentNode) if (n === this) return true; return false; }
  /** @param {string} sel */
  matches(sel) { return sel === ':disabled' ? this.disabled : false; }
  getRootNode() { let n = /** @type {any} */ (this); while (n.parentNode) n = n.parentNode; return n; }
}

class Document extends Element {
  constructor() { super('#document'); this.nodeType = 9; this.activeElement = null; }
  /** @param {string} id */
  getElementById(id) {
    const walk = (/** @type {Element} */ el) => {
      if (el.getAttribute('id') === id) return el;
      for (const c of el.children) { const f = walk(c); if (f) return f; }
      return null;
    };
    return walk(this);
  }
}

function makeDocument() { return new Document(); }

/**
 * h builds an element tree: h('button', {id: 'b'}, 'Save').
 * @param {string} tag @param {Record<string, string>} [attrs] @param {...(Element|Text|string)} kids
 */
function h(tag, attrs = {}, ...kids) { return new Element(tag, attrs, kids); }

module.exports = { Element, Text, Document, makeDocument, h };
