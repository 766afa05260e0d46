// @ts-check
// Targets: semantic lookup, refs and resolution to one element.
// A part of the page script: see 99-api.js.

const FRAME_TAGS = new Set(['iframe', 'frame', 'object', 'embed', 'fencedframe']);
const isFrame = el => el != null && FRAME_TAGS.has(el.localName);

function deepQuery(sel) {
  const out = [];
  const visit = root => {
    for (const el of root.querySelectorAll(sel)) out.push(el);
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) visit(el.shadowRoot);
      if (el.localName === 'iframe' || el.localName === 'frame') {
        let d = null;
        try { d = el.contentDocument; } catch (e) { d = null; }
        if (d) visit(d);
      }
    }
  };
  visit(document);
  return out;
}

function allElements() {
  const out = [];
  const visit = root => {
    for (const el of root.querySelectorAll('*')) {
      out.push(el);
      if (el.shadowRoot) visit(el.shadowRoot);
      if (el.localName === 'iframe' || el.localName === 'frame') {
        let d = null;
        try { d = el.contentDocument; } catch (e) { d = null; }
        if (d) visit(d);
      }
    }
  };
  visit(document);
  return out;
}

// matchSet keeps the exact (normalized, case-insensitive) matches when
// there are any, and the substring matches otherwise.
function matchSet(items, want, textOf) {
  const w = norm(want).toLowerCase();
  const exact = [], part = [];
  for (const el of items) {
    const t = norm(textOf(el)).toLowerCase();
    if (t === w) exact.push(el);
    else if (w && t.includes(w)) part.push(el);
  }
  return exact.length ? exact : part;
}

const ACTIONABLE_SEL = 'a[href],button,input,select,textarea,summary,option,[role],[onclick],[tabindex],[contenteditable=""],[contenteditable="true"]';

function nearestActionable(el) {
  let n = el;
  while (n) {
    if (n.nodeType === 1) {
      const role = roleOf(n);
      if (ACTION_ROLES.has(role) || n.hasAttribute('onclick')) return n;
      if (n.localName === 'label' && n.control) return n;
    }
    n = n.parentElement || (n.parentNode && n.parentNode.host) || null;
  }
  return el;
}

function textMatches(want) {
  const w = norm(want).toLowerCase();
  if (!w) return [];
  const hits = [];
  const visit = (node, rootish) => {
    for (const c of (rootish ? node.children : node.children)) {
      if (SKIP.has(c.localName)) continue;
      const t = norm(c.textContent).toLowerCase();
      let childHit = false;
      if (t.includes(w)) {
        const before = hits.length;
        visit(c, false);
        if (c.shadowRoot) visit(c.shadowRoot, true);
        childHit = hits.length > before;
        if (!childHit) hits.push(c);
      } else if (c.shadowRoot) {
        visit(c.shadowRoot, true);
      }
      if (c.localName === 'input' && ['button', 'submit', 'reset'].includes(inputType(c)) && norm(c.value).toLowerCase().includes(w)) hits.push(c);
      if (c.localName === 'iframe' || c.localName === 'frame') {
        let d = null;
        try { d = c.contentDocument; } catch (e) { d = null; }
        if (d && d.body) visit(d.body, true);
      }
    }
  };
  if (document.body) visit(document.body, true);
  const exact = hits.filter(el => {
    const t = el.localName === 'input' ? el.value : el.textContent;
    return norm(t).toLowerCase() === w;
  });
  const chosen = exact.length ? exact : hits;
  const out = [];
  const seen = new Set();
  for (const h of chosen) {
    const a = nearestActionable(h);
    if (!seen.has(a)) { seen.add(a); out.push(a); }
  }
  return out;
}

const LABELABLE = 'input:not([type=hidden]),select,textarea,[contenteditable=""],[contenteditable="true"],[role=textbox],[role=combobox],[role=searchbox],[role=checkbox],[role=radio],[role=switch],[role=slider],[role=spinbutton],[role=listbox]';

/**
 * find lists the elements a semantic target matches, or a refusal.
 * @param {any} t a target as Go sends it (pageTarget)
 * @returns {any} Element[] or {err, ...}
 */
function find(t) {
  if (t.css) {
    try { return deepQuery(t.css); } catch (e) { return { err: R.invalid, detail: 'invalid CSS selector' }; }
  }
  if (t.testId) return deepQuery('[data-testid="' + CSS.escape(t.testId) + '"]');
  if (t.role) {
    const role = t.role.toLowerCase();
    const items = allElements().filter(el => roleOf(el) === role);
    if (t.name == null || t.name === '') return items;
    return matchSet(items, t.name, el => nameOf(el, role));
  }
  if (t.label) {
    const items = deepQuery(LABELABLE);
    return matchSet(items, t.label, el => {
      let s = el.getAttribute('aria-labelledby');
      if (s) { const x = byIdRefs(el, s); if (x) return x; }
      s = norm(el.getAttribute('aria-label'));
      if (s) return s;
      return labelsText(el);
    });
  }
  if (t.placeholder) {
    return matchSet(deepQuery('[placeholder],[aria-placeholder]'), t.placeholder,
      el => el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'));
  }
  if (t.text) return textMatches(t.text);
  return { err: R.invalid, detail: 'empty target' };
}

function byRef(ref, snap) {
  const m = /^(?:f\d+)?e(\d+)$/.exec(ref || '');
  if (!m) return { err: R.invalid, detail: 'malformed ref' };
  const id = +m[1];
  const s = W.snaps.get(snap);
  if (!s) return { err: R.stale, detail: 'snapshot expired in this document' };
  if (!s.has(id)) return { err: R.stale, detail: 'ref not in that snapshot' };
  const e = W.byId.get(id);
  if (!e) return { err: R.stale, detail: 'ref no longer held' };
  const el = e.ref.deref();
  if (el && el.isConnected) return { el, rebound: false };
  // One unique, strongly equivalent rebind: same position, role and name.
  if (e.rebound) return { err: R.stale, detail: 'element removed again after a rebind' };
  const parent = e.parent && e.parent.deref();
  const c = parent && parent.isConnected && e.index >= 0 ? parent.children[e.index] : null;
  if (!c || c.localName !== e.tag) return { err: R.stale, detail: 'element removed from the document' };
  const role = roleOf(c) || 'generic';
  if (role !== e.role || nameOf(c, roleOf(c)) !== e.name) return { err: R.stale, detail: 'element replaced by a different one' };
  const other = W.idOf.get(c);
  if (other !== undefined && other !== id) {
    // The replacement already has a ref of its own: binding a second
    // one to it would make two refs one element.
    const oe = W.byId.get(other);
    if (oe && oe.ref.deref() === c) return { err: R.stale, detail: 'the element was replaced; take a new snapshot' };
  }
  e.ref = new WeakRef(c);
  e.rebound = true;
  W.idOf.set(c, id);
  return { el: c, rebound: true };
}

// elementOf returns the element of a ref of a snapshot (Go keeps it as a
// remote object), or null: to compare the outline with the browser's own
// accessibility tree.
function elementOf(a) {
  const r = byRef(a.ref, a.snap);
  return r.err ? null : r.el;
}

// resolve returns {el} for one visible element, or a refusal with counts.
/**
 * @param {any} t a target as Go sends it (pageTarget)
 * @returns {any} {el, rebound} or {err, ...counts}
 */
function resolve(t) {
  if (t.ref) {
    const r = byRef(t.ref, t.snap);
    if (r.err) return r;
    if (!visible(r.el)) return { err: R.hidden, count: 1, visible: 0 };
    return r;
  }
  const els = find(t);
  if (els.err) return els;
  if (!els.length) return { err: R.notFound, count: 0 };
  const vis = els.filter(visible);
  if (!vis.length) return { err: R.hidden, count: els.length, visible: 0 };
  if (t.index != null) {
    if (t.index < 0 || t.index >= vis.length) return { err: R.notFound, count: els.length, visible: vis.length, index: t.index };
    return { el: vis[t.index], rebound: false };
  }
  if (vis.length > 1) return { err: R.ambiguous, count: els.length, visible: vis.length };
  return { el: vis[0], rebound: false };
}

// count reports how many elements match a semantic target, and how many
// of them are visible, without touching any.
function count(a) {
  const els = find(a.target);
  if (els.err) return els;
  return { count: els.length, visible: els.filter(visible).length };
}
