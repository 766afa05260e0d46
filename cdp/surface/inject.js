// inject.js is the page side of package surface. It is evaluated once in an
// isolated world of each frame document (Page.createIsolatedWorld), so the
// page's own scripts can neither see nor patch it: its registry of elements,
// its nonce and the DOM prototypes it calls are those of its own world.
// It is a function expression; Go calls it with the document nonce and keeps
// the returned object under a per-Page global name.
//
// Every entry point takes one argument object and returns a plain JSON value:
// {err: code, ...counts} for a refusal, anything else for success. Details
// never carry page text: only counts and tag names.
(function (nonce) {
  'use strict';

  const NAME_CAP = 100, VALUE_CAP = 80, TEXT_CAP = 160, MAX_LINES = 60000, MAX_SNAPS = 6;
  // A run of at least FOLD_MIN same-shaped siblings shows FOLD_SAMPLES of
  // them and one line for the rest; ROW_CAP bounds a row's joined cells.
  const FOLD_MIN = 20, FOLD_SAMPLES = 2, ROW_CAP = 200, QUERY_MAX = 200;

  const W = {
    nonce,
    nextId: 1,
    byId: new Map(),     // id -> {ref: WeakRef<Element>, role, name, path, rebound}
    idOf: new WeakMap(), // Element -> id
    snaps: new Map(),    // snapshot id -> Set of ids it listed
    frameKeys: new WeakMap(), // cross-origin <iframe> -> frame key set from Go
    frameEls: new Map(),      // frame key -> WeakRef of its <iframe>
    walks: new Map(),         // snapshot id -> paused outline walk
    folds: new Map(),         // snapshot id -> folded runs: [{els: WeakRef[], first, total}]
    closed: [],          // candidate hosts of closed shadow roots of the last snapshot
    pending: null,       // element of the action in progress
  };

  // ---------------------------------------------------------------- text

  const VIS = { visibilityProperty: true };
  const INDENT = [];
  for (let i = 0; i < 64; i++) INDENT.push('  '.repeat(i) + '- ');
  const norm = s => (s == null ? '' : String(s)).replace(/\s+/g, ' ').trim();
  const cap = (s, n) => (s.length > n ? s.slice(0, n - 1) + '\u2026' : s);
  const quote = s => JSON.stringify(s);
  const chars = s => Array.from(s).length;

  // ---------------------------------------------------------------- roles

  const INPUT_ROLES = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button', color: 'button',
    checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
  };
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base']);
  const ACTION_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'combobox', 'textbox', 'searchbox', 'slider',
    'spinbutton', 'treeitem', 'listbox']);
  const CONTENT_NAME = new Set(['button', 'link', 'heading', 'cell', 'columnheader', 'rowheader',
    'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'checkbox',
    'radio', 'switch', 'listitem', 'paragraph', 'tooltip', 'legend', 'caption', 'status', 'alert']);
  const LEAF_NAME = new Set(['cell', 'columnheader', 'rowheader', 'listitem', 'paragraph', 'legend', 'caption', 'status', 'alert']);
  // Roles that make a line of their own in the full outline.
  const STRUCT_ROLES = new Set(['heading', 'list', 'listitem', 'navigation', 'main', 'banner',
    'contentinfo', 'complementary', 'form', 'region', 'article', 'dialog', 'alertdialog', 'table',
    'row', 'cell', 'columnheader', 'rowheader', 'grid', 'gridcell', 'group', 'img', 'paragraph',
    'progressbar', 'meter', 'separator', 'tablist', 'tabpanel', 'menu', 'menubar', 'toolbar',
    'tree', 'alert', 'status', 'search', 'figure', 'radiogroup', 'iframe']);
  const BLOCK = new Set(['div', 'p', 'li', 'ul', 'ol', 'section', 'article', 'header', 'footer',
    'nav', 'main', 'aside', 'form', 'table', 'tr', 'td', 'th', 'tbody', 'thead', 'tfoot', 'h1',
    'h2', 'h3', 'h4', 'h5', 'h6', 'br', 'hr', 'pre', 'blockquote', 'dl', 'dt', 'dd', 'figure',
    'figcaption', 'fieldset', 'details', 'summary', 'label', 'dialog']);
  const TEXT_TYPES = new Set(['text', 'search', 'email', 'tel', 'url', 'password', 'number', '']);

  function inputType(el) { return (el.getAttribute('type') || 'text').toLowerCase(); }

  function roleOf(el) {
    const explicit = el.getAttribute('role');
    if (explicit != null) {
      const t = explicit.trim().split(/\s+/)[0].toLowerCase();
      if (t === 'none' || t === 'presentation') return '';
      if (t) return t;
    }
    switch (el.localName) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
      case 'button': return 'button';
      case 'input': {
        const t = inputType(el);
        if (t === 'hidden') return '';
        if (el.hasAttribute('list') && ['text', 'search', 'email', 'tel', 'url'].includes(t)) return 'combobox';
        return INPUT_ROLES[t] || 'textbox';
      }
      case 'textarea': return 'textbox';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'option': return 'option';
      case 'img': return el.getAttribute('alt') === '' ? '' : 'img';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'li': return 'listitem';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'header': return el.closest('article,aside,main,nav,section') ? '' : 'banner';
      case 'footer': return el.closest('article,aside,main,nav,section') ? '' : 'contentinfo';
      case 'aside': return 'complementary';
      case 'form': return 'form';
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
      case 'article': return 'article';
      case 'dialog': return 'dialog';
      case 'table': return 'table';
      case 'tr': return 'row';
      case 'td': return 'cell';
      case 'th': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'summary': return 'button';
      case 'details': case 'fieldset': return 'group';
      case 'p': return 'paragraph';
      case 'hr': return 'separator';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'iframe': case 'frame': return 'iframe';
      case 'figure': return 'figure';
      case 'search': return 'search';
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
    return '';
  }

  // ---------------------------------------------------------------- names

  function subtreeText(el, skip) {
    // Visible text of el without the subtree skip (a control inside its label).
    if (!skip && el.firstElementChild === null) return norm(el.textContent);
    if (!skip) return norm(el.innerText !== undefined ? el.innerText : el.textContent);
    let out = '';
    for (const n of el.childNodes) {
      if (n === skip) continue;
      if (n.nodeType === 3) out += ' ' + n.data;
      else if (n.nodeType === 1 && !n.contains(skip)) out += ' ' + (n.innerText !== undefined ? n.innerText : n.textContent);
      else if (n.nodeType === 1) out += ' ' + subtreeText(n, skip);
    }
    return norm(out);
  }

  function byIdRefs(el, attr) {
    const root = el.getRootNode();
    const parts = [];
    for (const id of attr.trim().split(/\s+/)) {
      const n = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      if (n) parts.push(norm(n.getAttribute('aria-label')) || subtreeText(n));
    }
    return norm(parts.join(' '));
  }

  function labelsText(el) {
    let labs = null;
    try { labs = el.labels; } catch (e) { labs = null; }
    if (!labs || !labs.length) return '';
    return norm(Array.from(labs, l => subtreeText(l, l.contains(el) ? el : null)).join(' '));
  }

  function nameOf(el, role) {
    let s = el.getAttribute('aria-labelledby');
    if (s) { const t = byIdRefs(el, s); if (t) return cap(t, NAME_CAP); }
    s = norm(el.getAttribute('aria-label'));
    if (s) return cap(s, NAME_CAP);
    const tag = el.localName;
    if (tag === 'input') {
      const t = inputType(el);
      if (t === 'button' || t === 'submit' || t === 'reset') {
        return cap(norm(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''), NAME_CAP);
      }
      if (t === 'image') return cap(norm(el.getAttribute('alt')) || norm(el.value) || 'Submit', NAME_CAP);
    }
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || tag === 'meter' || tag === 'progress') {
      const l = labelsText(el);
      if (l) return cap(l, NAME_CAP);
      s = norm(el.getAttribute('title')) || norm(el.getAttribute('placeholder'));
      return cap(s, NAME_CAP);
    }
    if (tag === 'img' || tag === 'area') return cap(norm(el.getAttribute('alt')) || norm(el.getAttribute('title')), NAME_CAP);
    if (tag === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) return cap(subtreeText(lg), NAME_CAP); }
    if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) return cap(subtreeText(c), NAME_CAP); }
    if (tag === 'iframe' || tag === 'frame') return cap(norm(el.getAttribute('title')) || norm(el.getAttribute('name')), NAME_CAP);
    if (role === 'row') return rowName(el);
    if (CONTENT_NAME.has(role)) {
      // A cell, list item or paragraph holding elements shows them as
      // children instead (cheaper, and no text said twice).
      if (LEAF_NAME.has(role) && el.firstElementChild !== null) return '';
      const t = subtreeText(el);
      if (t) return cap(t, NAME_CAP);
    }
    if (role === 'textbox' && el.isContentEditable) {
      const l = labelsText(el);
      if (l) return cap(l, NAME_CAP);
    }
    return cap(norm(el.getAttribute('title')), NAME_CAP);
  }

  const CELL_ROLES = new Set(['cell', 'gridcell', 'columnheader', 'rowheader']);

  // leafCell reports a cell that holds text only: its row's line says it.
  function leafCell(el) {
    return el.firstElementChild === null && CELL_ROLES.has(roleOf(el)) && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby');
  }

  // rowName joins the texts of a row's text-only cells: one line per row
  // instead of one per cell keeps a big table's outline small.
  function rowName(el) {
    const parts = [];
    for (const c of el.children) if (leafCell(c)) parts.push(norm(c.textContent));
    return cap(parts.join(' | '), ROW_CAP);
  }

  // ---------------------------------------------------------------- state

  function isDisabled(el) {
    if (el.matches(':disabled')) return true;
    return el.closest('[aria-disabled="true"]') !== null;
  }

  function isSecret(el) {
    if (el.localName !== 'input') return false;
    if (inputType(el) === 'password') return true;
    const ac = (el.getAttribute('autocomplete') || '').toLowerCase();
    return /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc)(\s|$)/.test(ac);
  }

  function deepActive() {
    let a = document.activeElement;
    while (a) {
      if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
      if ((a.localName === 'iframe' || a.localName === 'frame')) {
        let d = null;
        try { d = a.contentDocument; } catch (e) { d = null; }
        if (d && d.activeElement) { a = d.activeElement; continue; }
      }
      break;
    }
    return a;
  }

  function valueOf(el) {
    if (el.localName === 'input' || el.localName === 'textarea') return el.value;
    if (el.isContentEditable) return el.innerText.replace(/\n$/, '');
    return null;
  }

  function states(el, role, focused, act) {
    const out = [];
    const tag = el.localName;
    if (role === 'heading') {
      const m = /^h([1-6])$/.exec(tag);
      out.push('level=' + (el.getAttribute('aria-level') || (m ? m[1] : '2')));
    }
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      let c = el.getAttribute('aria-checked');
      if (tag === 'input') c = el.indeterminate ? 'mixed' : String(el.checked);
      if (c === 'true') out.push('checked'); else if (c === 'mixed') out.push('mixed');
    }
    const pressed = el.getAttribute('aria-pressed');
    if (pressed === 'true') out.push('pressed');
    const exp = el.getAttribute('aria-expanded');
    if (exp === 'true') out.push('expanded'); else if (exp === 'false') out.push('collapsed');
    if (tag === 'details') out.push(el.open ? 'expanded' : 'collapsed');
    if (role === 'option' && (el.selected || el.getAttribute('aria-selected') === 'true')) out.push('selected');
    if (role === 'tab' && el.getAttribute('aria-selected') === 'true') out.push('selected');
    if ((act || ACTION_ROLES.has(role)) && isDisabled(el)) out.push('disabled');
    if (el.required || el.getAttribute('aria-required') === 'true') out.push('required');
    if (el.readOnly && (tag === 'input' || tag === 'textarea')) out.push('readonly');
    if (focused === el) out.push('focused');
    if (tag === 'select') {
      const sel = Array.from(el.selectedOptions || [], o => norm(o.label || o.text));
      if (sel.length) out.push('value=' + quote(cap(sel.join(', '), VALUE_CAP)));
    } else if (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'combobox' || role === 'slider') {
      const v = valueOf(el);
      if (v != null && v !== '') {
        if (isSecret(el)) out.push('password(' + chars(v) + ' chars)');
        else out.push('value=' + quote(cap(v.replace(/\s+/g, ' '), VALUE_CAP)));
      } else if (isSecret(el)) out.push('password(empty)');
      if (tag === 'input' && inputType(el) === 'file' && el.files) out.push('files=' + el.files.length);
    } else if (tag === 'input' && inputType(el) === 'file') {
      out.push('files=' + (el.files ? el.files.length : 0));
    }
    return out;
  }

  // ---------------------------------------------------------------- visibility

  function boxed(el) {
    const r = el.getClientRects();
    for (const q of r) if (q.width > 0 && q.height > 0) return true;
    return false;
  }

  function visible(el) {
    if (!el.isConnected) return false;
    if (!el.checkVisibility({ visibilityProperty: true })) return false;
    if (boxed(el)) return true;
    // A zero-size element with rendered content (a label around an
    // absolutely positioned control) still counts when a child is boxed.
    return el.localName === 'option' && el.parentElement != null && visible(el.parentElement);
  }

  // ---------------------------------------------------------------- actionable

  const CURSOR_ROLES = new Set(['', 'img', 'listitem', 'cell', 'row', 'paragraph']);

  function actionable(el, role) {
    if (ACTION_ROLES.has(role)) return true;
    if (el.localName === 'input' && inputType(el) === 'file') return true;
    if (el.hasAttribute('onclick')) return true;
    const ti = el.getAttribute('tabindex');
    if (ti != null && +ti >= 0 && role !== 'dialog' && role !== 'main' && role !== 'region') return true;
    // A generic element with a pointer cursor of its own (not inherited
    // from a clickable parent) is how most script-driven controls look.
    if (CURSOR_ROLES.has(role) && getComputedStyle(el).cursor === 'pointer') {
      const p = el.parentElement || (el.parentNode && el.parentNode.host);
      return !p || getComputedStyle(p).cursor !== 'pointer';
    }
    return false;
  }

  // ---------------------------------------------------------------- registry

  // Each ref keeps its element's parent and element index there: enough
  // to find a re-rendered replacement in the same place (rebind).
  function refFor(el, role, name, index) {
    let id = W.idOf.get(el);
    const parent = el.parentNode;
    if (index < 0 && parent) index = Array.prototype.indexOf.call(parent.children, el);
    if (id === undefined) {
      id = W.nextId++;
      W.idOf.set(el, id);
      W.byId.set(id, { ref: new WeakRef(el), role, name, parent: parent && new WeakRef(parent), index, tag: el.localName, rebound: false });
    } else {
      const e = W.byId.get(id);
      e.role = role; e.name = name; e.index = index;
      if (!e.parent || e.parent.deref() !== parent) e.parent = parent && new WeakRef(parent);
    }
    return id;
  }

  function forgetUnreachable() {
    // Entries whose element is gone and that no kept snapshot lists.
    const live = new Set();
    for (const s of W.snaps.values()) for (const id of s) live.add(id);
    for (const [id, e] of W.byId) if (!live.has(id) && !e.ref.deref()) W.byId.delete(id);
  }

  // ---------------------------------------------------------------- snapshot

  // Only these elements (and custom elements) can host a shadow root.
  const HOSTS = new Set(['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3',
    'h4', 'h5', 'h6', 'header', 'main', 'nav', 'p', 'section', 'span']);

  function shadowOf(node) {
    const t = node.localName;
    return t && (HOSTS.has(t) || t.includes('-')) ? node.shadowRoot : null;
  }

  function composedChildren(node) {
    // The children in the rendered tree: a shadow host shows its shadow
    // root; a slot shows what is assigned to it (or its fallback).
    if (node.localName === 'slot') {
      const a = node.assignedNodes({ flatten: true });
      if (a.length) return a;
    }
    const sr = node.nodeType === 1 ? shadowOf(node) : null;
    if (sr) return sr.childNodes;
    return node.childNodes;
  }

  // snapshot starts an outline walk and returns its first chunk: the walk
  // pauses once the chunk holds a.budget characters (a generator), so the
  // cost of a chunk follows its size, not the page's. more() resumes it.
  // Chunks after the first show the page as it is when they are read.
  function snapshot(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const ctx = {
      lines: [], chars: 0, budget: a.budget > 0 ? a.budget : Infinity, frames: [], closed: [],
      ids: new Set(), interactive: !!a.interactive, prefix: a.prefix || 'e', focused: deepActive(),
      text: '', textDepth: 0, truncated: false, total: 0, maxLines: a.maxLines > 0 ? a.maxLines : MAX_LINES,
      noFold: !!a.full, mute: false, folds: [], foldTag: foldTag(a.prefix || 'e'), muteMin: 0, muteMax: 0,
    };
    W.closed = [];
    let start, matches = -1;
    if (a.query) {
      const q = query(a.query);
      if (q.err) return q;
      start = q.els;
      matches = q.total;
    } else if (a.scopeRef) {
      const r = byRef(a.scopeRef, a.scopeSnap);
      if (r.err) return r;
      start = [r.el];
    } else if (a.scopeCss) {
      try { start = deepQuery(a.scopeCss); } catch (e) { return { err: 'invalid', detail: 'invalid CSS selector' }; }
      if (!start.length) return { err: 'not_found', count: 0 };
    }
    const gen = walk(start, ctx);
    W.snaps.set(a.snap, ctx.ids);
    W.folds.set(a.snap, ctx.folds);
    while (W.snaps.size > MAX_SNAPS) {
      const old = W.snaps.keys().next().value;
      W.snaps.delete(old);
      W.walks.delete(old);
      W.folds.delete(old);
    }
    const out = step(a.snap, gen, ctx);
    if (matches >= 0) out.matches = matches;
    return out;
  }

  // foldTag is how a fold of the document with ref prefix p is named:
  // "3" in the main document, "f1:3" in frame f1.
  function foldTag(p) { return p === 'e' ? '' : p.slice(0, -1) + ':'; }

  // shapeOf is an element's tag and role with its children's tags and
  // child counts: rows, list items and cards built from one template share
  // it.
  function shapeOf(el) {
    let s = el.localName + '/' + roleOf(el) + '(';
    let n = 0;
    for (const c of el.children) {
      if (++n > 16) break;
      s += c.localName + c.childElementCount + ',';
    }
    return s + ')';
  }

  // runAt returns the positions in kids of the same-shaped element
  // siblings starting at i; text between them ends the run, white space
  // and comments do not.
  function runAt(kids, i) {
    const shape = shapeOf(kids[i]);
    const run = [i];
    for (let j = i + 1; j < kids.length; j++) {
      const c = kids[j];
      if (c.nodeType === 1) {
        if (shapeOf(c) !== shape) break;
        run.push(j);
      } else if (c.nodeType === 3 && c.data.trim()) break;
    }
    return run;
  }

  // foldRun shows the first samples of a run and one line for the rest.
  // The rest is walked without output so that its refs exist (the line
  // gives their range, and a ref from it acts), and kept for expand().
  function* foldRun(kids, run, depth, ctx, ei, own) {
    for (let k = 0; k < FOLD_SAMPLES; k++) yield* visitElement(kids[run[k]], depth, ctx, own ? ei + k : -1);
    if (ctx.truncated) return;
    const rest = run.slice(FOLD_SAMPLES).map(i => kids[i]);
    ctx.mute = true; ctx.muteMin = 0; ctx.muteMax = 0;
    for (let k = 0; k < rest.length; k++) yield* visitElement(rest[k], depth, ctx, own ? ei + FOLD_SAMPLES + k : -1);
    ctx.mute = false;
    if (ctx.interactive && !ctx.muteMin) return; // nothing to act on in the rest
    ctx.folds.push({ els: rest.map(e => new WeakRef(e)), first: FOLD_SAMPLES + 1, total: run.length, own, ei: ei + FOLD_SAMPLES });
    const first = rest[0];
    const what = roleOf(first) || first.localName;
    let line = '\u2026 ' + rest.length + ' more ' + what + ' like the ' + FOLD_SAMPLES + ' above (items ' + (FOLD_SAMPLES + 1) + '\u2013' + run.length + ' of ' + run.length;
    if (ctx.muteMin) line += '; refs ' + ctx.prefix + ctx.muteMin + '\u2013' + ctx.prefix + ctx.muteMax;
    line += ') [fold ' + ctx.foldTag + ctx.folds.length + ']';
    push(ctx, depth, line);
    if (ctx.chars >= ctx.budget) yield;
  }

  // expand walks items [from, to) (1-based, as the fold line counts) of a
  // fold of a snapshot, registering their refs in that snapshot.
  function expand(a) {
    const folds = W.folds.get(a.snap), ids = W.snaps.get(a.snap);
    if (!folds || !ids) return { err: 'stale', detail: 'snapshot expired in this document' };
    const f = folds[a.fold - 1];
    if (!f) return { err: 'not_found', detail: 'no fold with that number in the snapshot' };
    const from = Math.max(a.from || f.first, f.first), to = Math.min(a.to > 0 ? a.to : f.total, f.total);
    const ctx = {
      lines: [], chars: 0, budget: Infinity, frames: [], closed: [], ids, newIds: [], interactive: !!a.interactive,
      prefix: a.prefix || 'e', focused: deepActive(), text: '', textDepth: 0, truncated: false, total: 0,
      maxLines: a.maxLines > 0 ? a.maxLines : MAX_LINES, noFold: false, mute: false, folds, foldTag: foldTag(a.prefix || 'e'),
    };
    let gone = 0;
    for (let i = from; i <= to; i++) {
      const el = f.els[i - f.first].deref();
      if (!el || !el.isConnected) { gone++; continue; }
      const gen = visitElement(el, 0, ctx, f.own ? f.ei + i - f.first : -1);
      while (!gen.next().done) { /* no budget: the whole range */ }
      flushText(ctx);
    }
    if (gone) push(ctx, 0, 'limit: ' + gone + ' of these items left the document');
    return { text: ctx.lines.join('\n'), ids: ctx.newIds, done: true, truncated: ctx.truncated, frames: [], closed: [], url: location.href, title: document.title };
  }

  // query lists, in document order, the elements the outline would show
  // that match a role, a name and a text (each optional, names and texts
  // as case-insensitive substrings); of nested matches only the innermost
  // counts. It returns at most limit of them and the total.
  function query(q) {
    const role = norm(q.role).toLowerCase(), name = norm(q.name).toLowerCase(), text = norm(q.text).toLowerCase();
    if (!role && !name && !text) return { err: 'invalid', detail: 'empty query' };
    const limit = Math.min(q.limit > 0 ? q.limit : 20, QUERY_MAX);
    const hits = [];
    const visit = node => {
      for (const c of composedChildren(node)) {
        if (c.nodeType !== 1) continue;
        const tag = c.localName;
        if (SKIP.has(tag) || c.getAttribute('aria-hidden') === 'true' || !c.checkVisibility()) continue;
        if (tag === 'iframe' || tag === 'frame') {
          const d = contentDocOf(c);
          if (d && d.body) visit(d.body);
          continue;
        }
        const before = hits.length;
        visit(c);
        if (hits.length > before || !c.checkVisibility(VIS)) continue; // an inner match wins
        const r = roleOf(c);
        if (role ? r !== role : !(STRUCT_ROLES.has(r) || actionable(c, r))) continue;
        if (name && !nameOf(c, r).toLowerCase().includes(name)) continue;
        if (text && !norm(c.innerText || c.value || '').toLowerCase().includes(text)) continue;
        hits.push(c);
      }
    };
    const root = document.body || document.documentElement;
    if (root) visit(root);
    return { els: hits.slice(0, limit), total: hits.length };
  }

  function* walk(start, ctx) {
    if (start) {
      for (const el of start) yield* visitElement(el, 0, ctx, -1);
    } else {
      const root = document.body || document.documentElement;
      if (root) yield* visitChildren(root, 0, ctx);
    }
    flushText(ctx);
  }

  function step(snap, gen, ctx) {
    ctx.lines = []; ctx.chars = 0; ctx.frames = []; ctx.closed = []; ctx.newIds = []; ctx.chunk = (ctx.chunk || 0) + 1;
    W.closed = [];
    const r = gen.next();
    if (r.done) W.walks.delete(snap); else W.walks.set(snap, { gen, ctx });
    forgetUnreachable();
    return {
      text: ctx.lines.join('\n'), frames: ctx.frames, closed: ctx.closed, ids: ctx.newIds, done: !!r.done,
      truncated: ctx.truncated, url: location.href, title: document.title,
    };
  }

  // more returns the next chunk of a paused walk.
  function more(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const w = W.walks.get(a.snap);
    if (!w) return { err: 'stale', detail: 'snapshot walk expired' };
    w.ctx.budget = a.budget > 0 ? a.budget : Infinity;
    return step(a.snap, w.gen, w.ctx);
  }

  function push(ctx, depth, s) {
    if (ctx.mute) return true;
    if (ctx.total >= ctx.maxLines) { ctx.truncated = true; return false; }
    const l = (depth < 64 ? INDENT[depth] : '  '.repeat(depth) + '- ') + s;
    ctx.lines.push(l);
    ctx.chars += l.length + 1;
    ctx.total++;
    return true;
  }

  function flushText(ctx) {
    if (ctx.text && ctx.mute) ctx.text = '';
    if (ctx.text) {
      const t = norm(ctx.text);
      if (t && !ctx.interactive) push(ctx, ctx.textDepth, 'text ' + quote(cap(t, TEXT_CAP)));
      ctx.text = '';
    }
  }

  function* visitChildren(node, depth, ctx) {
    const kids = composedChildren(node);
    // Element indexes are those of the real parent, except for nodes
    // assigned to a slot (their parent is elsewhere).
    const own = !Array.isArray(kids);
    let ei = 0, shortUntil = -1;
    const foldable = !ctx.noFold && !ctx.mute && kids.length >= FOLD_MIN;
    for (let i = 0; i < kids.length; i++) {
      const c = kids[i];
      if (ctx.truncated) return;
      if (c.nodeType === 3) {
        if (!ctx.interactive && c.data.trim()) {
          if (!ctx.text) ctx.textDepth = depth;
          ctx.text += ' ' + c.data;
        }
      } else if (c.nodeType === 1) {
        if (foldable && i > shortUntil) {
          const run = runAt(kids, i);
          if (run.length >= FOLD_MIN) {
            flushText(ctx);
            yield* foldRun(kids, run, depth, ctx, ei, own);
            i = run[run.length - 1];
            ei += run.length;
            continue;
          }
          // A run starting inside a short one is shorter still.
          shortUntil = run[run.length - 1];
        }
        yield* visitElement(c, depth, ctx, own ? ei : -1);
        ei++;
      }
    }
  }

  function* visitElement(el, depth, ctx, index) {
    const tag = el.localName;
    if (SKIP.has(tag)) return;
    if (el.getAttribute('aria-hidden') === 'true') return;
    const selfVisible = el.checkVisibility(VIS);
    if (!selfVisible && !el.checkVisibility()) return;
    const role = roleOf(el);
    if (BLOCK.has(tag)) flushText(ctx);
    if (CELL_ROLES.has(role) && el.parentElement && roleOf(el.parentElement) === 'row' && !actionable(el, role)) {
      // Its row's name says a text-only cell; a cell of controls is shown
      // by its controls.
      if (leafCell(el)) return;
      if (!el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby')) {
        yield* visitChildren(el, depth, ctx);
        flushText(ctx);
        return;
      }
    }
    if (role === 'iframe') { flushText(ctx); yield* visitFrame(el, depth, ctx, selfVisible); return; }
    if (tag === 'label' && !ctx.interactive) {
      // The control carries the label as its name: the label's own text
      // would say it twice.
      const c = el.control;
      if (c && c.isConnected && !el.contains(c) && c.checkVisibility()) return;
      if (c && el.contains(c)) {
        const saved = ctx.interactive;
        ctx.interactive = true;
        yield* visitChildren(el, depth, ctx);
        ctx.interactive = saved;
        return;
      }
    }
    const act = selfVisible && actionable(el, role);
    const emit = selfVisible && (act || (!ctx.interactive && STRUCT_ROLES.has(role)));
    let childDepth = depth;
    let nameCoversText = false;
    if (emit) {
      flushText(ctx);
      let name = nameOf(el, role);
      if (!name && act && !role) name = cap(subtreeText(el), NAME_CAP);
      let line = (role || 'generic') + (name ? ' ' + quote(name) : '');
      const st = states(el, role, ctx.focused, act);
      if (st.length) line += ' [' + st.join(', ') + ']';
      if (act) {
        const id = refFor(el, role || 'generic', name, index);
        if (!ctx.ids.has(id)) { ctx.ids.add(id); ctx.newIds.push(id); }
        if (ctx.mute) {
          if (!ctx.muteMin || id < ctx.muteMin) ctx.muteMin = id;
          if (id > ctx.muteMax) ctx.muteMax = id;
        }
        line += ' [' + ctx.prefix + id + ']';
      }
      if (!push(ctx, depth, line)) return;
      if (ctx.chars >= ctx.budget && !ctx.mute) yield;
      childDepth = depth + 1;
      nameCoversText = !!name && (CONTENT_NAME.has(role) || (act && !role));
    }
    if (!ctx.mute && tag.includes('-') && el.shadowRoot === null && el.matches(':defined') && !el.firstElementChild && boxed(el)) {
      // Maybe a closed shadow root: Go confirms it through DOM.describeNode.
      ctx.closed.push({ line: ctx.lines.length - 1, depth: childDepth, i: W.closed.length });
      W.closed.push(el);
    }
    if (tag === 'select' || tag === 'textarea' || (role === 'textbox' && el.isContentEditable)) return;
    const mark = emit && role === 'row' ? { at: ctx.lines.length - 1, chunk: ctx.chunk, frames: ctx.frames.length, closed: ctx.closed.length } : null;
    if (nameCoversText) {
      const saved = ctx.interactive;
      // The name already says the text: visit children for controls only.
      ctx.interactive = true;
      yield* visitChildren(el, childDepth, ctx);
      ctx.interactive = saved;
    } else {
      yield* visitChildren(el, childDepth, ctx);
    }
    if (BLOCK.has(tag)) flushText(ctx);
    if (mark) joinOnlyChild(ctx, mark);
  }

  // joinOnlyChild puts a row's one child line (its one control, say) on the
  // row's own line: `- row "3 | Item 3" › button "Open" [e3]`. Only when
  // both lines are in the chunk being built and the child names no frame or
  // shadow root (their line numbers are kept).
  function joinOnlyChild(ctx, m) {
    if (ctx.mute || ctx.chunk !== m.chunk || ctx.lines.length !== m.at + 2 || ctx.frames.length !== m.frames || ctx.closed.length !== m.closed) return;
    const child = ctx.lines.pop();
    const body = child.replace(/^ *- /, '');
    ctx.lines[m.at] += ' \u203a ' + body;
    ctx.chars -= child.length - body.length - 3;
    ctx.total--;
  }

  function* visitFrame(el, depth, ctx, selfVisible) {
    if (!selfVisible || ctx.mute) return;
    const name = nameOf(el, 'iframe');
    let doc = null;
    try { doc = el.contentDocument; } catch (e) { doc = null; }
    if (doc && doc.documentElement) {
      push(ctx, depth, 'iframe' + (name ? ' ' + quote(name) : ''));
      const body = doc.body || doc.documentElement;
      yield* visitChildren(body, depth + 1, ctx);
      flushText(ctx);
      return;
    }
    const key = W.frameKeys.get(el);
    if (key) {
      push(ctx, depth, 'iframe' + (name ? ' ' + quote(name) : '') + ' [frame ' + key + ']');
      ctx.frames.push({ key, line: ctx.lines.length - 1, depth: depth + 1 });
    } else {
      push(ctx, depth, 'iframe' + (name ? ' ' + quote(name) : '') + ' [cross-origin, not reachable]');
    }
  }

  // closedHosts returns the candidate hosts of the last snapshot, for Go to
  // check with DOM.describeNode.
  function closedHosts() { return W.closed.slice(0, 16); }

  function tagFrame(el, key) {
    if (isFrame(el)) {
      W.frameKeys.set(el, key);
      W.frameEls.set(key, new WeakRef(el));
      return true;
    }
    return false;
  }

  // frameOrder lists the keys of tagged frames in document order.
  function frameOrder(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const keys = [];
    for (const el of deepQuery('iframe,frame')) {
      const k = W.frameKeys.get(el);
      let d = null;
      try { d = el.contentDocument; } catch (e) { d = null; }
      if (k && !d) keys.push(k); // same-origin frames are searched inline
    }
    return { keys };
  }

  // frameBox scrolls the <iframe> of a frame key into view and returns the
  // offset of its content box in this world's top viewport.
  function frameBox(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const r = W.frameEls.get(a.key);
    const el = r && r.deref();
    if (!el || !el.isConnected) return { err: 'stale', detail: 'frame element gone' };
    let rect = el.getBoundingClientRect();
    if (!inView(rect, el.ownerDocument.defaultView)) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      rect = el.getBoundingClientRect();
    }
    const cs = el.ownerDocument.defaultView.getComputedStyle(el);
    const off = frameOffset(el);
    return { x: off.x + rect.left + el.clientLeft + parseFloat(cs.paddingLeft), y: off.y + rect.top + el.clientTop + parseFloat(cs.paddingTop) };
  }

  // ---------------------------------------------------------------- targets

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

  function find(t) {
    if (t.css) {
      try { return deepQuery(t.css); } catch (e) { return { err: 'invalid', detail: 'invalid CSS selector' }; }
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
    return { err: 'invalid', detail: 'empty target' };
  }

  function byRef(ref, snap) {
    const m = /^(?:f\d+)?e(\d+)$/.exec(ref || '');
    if (!m) return { err: 'invalid', detail: 'malformed ref' };
    const id = +m[1];
    const s = W.snaps.get(snap);
    if (!s) return { err: 'stale', detail: 'snapshot expired in this document' };
    if (!s.has(id)) return { err: 'stale', detail: 'ref not in that snapshot' };
    const e = W.byId.get(id);
    if (!e) return { err: 'stale', detail: 'ref no longer held' };
    const el = e.ref.deref();
    if (el && el.isConnected) return { el, rebound: false };
    // One unique, strongly equivalent rebind: same position, role and name.
    if (e.rebound) return { err: 'stale', detail: 'element removed again after a rebind' };
    const parent = e.parent && e.parent.deref();
    const c = parent && parent.isConnected && e.index >= 0 ? parent.children[e.index] : null;
    if (!c || c.localName !== e.tag) return { err: 'stale', detail: 'element removed from the document' };
    const role = roleOf(c) || 'generic';
    if (role !== e.role || nameOf(c, roleOf(c)) !== e.name) return { err: 'stale', detail: 'element replaced by a different one' };
    const other = W.idOf.get(c);
    if (other !== undefined && other !== id) {
      // The replacement already has a ref of its own: binding a second
      // one to it would make two refs one element.
      const oe = W.byId.get(other);
      if (oe && oe.ref.deref() === c) return { err: 'stale', detail: 'the element was replaced; take a new snapshot' };
    }
    e.ref = new WeakRef(c);
    e.rebound = true;
    W.idOf.set(c, id);
    return { el: c, rebound: true };
  }

  // resolve returns {el} for one visible element, or a refusal with counts.
  function resolve(t) {
    if (t.ref) {
      const r = byRef(t.ref, t.snap);
      if (r.err) return r;
      if (!visible(r.el)) return { err: 'hidden', count: 1, visible: 0 };
      return r;
    }
    const els = find(t);
    if (els.err) return els;
    if (!els.length) return { err: 'not_found', count: 0 };
    const vis = els.filter(visible);
    if (!vis.length) return { err: 'hidden', count: els.length, visible: 0 };
    if (t.index != null) {
      if (t.index < 0 || t.index >= vis.length) return { err: 'not_found', count: els.length, visible: vis.length, index: t.index };
      return { el: vis[t.index], rebound: false };
    }
    if (vis.length > 1) return { err: 'ambiguous', count: els.length, visible: vis.length };
    return { el: vis[0], rebound: false };
  }

  // count reports how many elements match a semantic target, and how many
  // of them are visible, without touching any.
  function count(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const els = find(a.target);
    if (els.err) return els;
    return { count: els.length, visible: els.filter(visible).length };
  }

  // ---------------------------------------------------------------- geometry

  function frameOffset(el) {
    // Offset of el's document viewport in the top document of this world.
    let x = 0, y = 0;
    let win = el.ownerDocument.defaultView;
    while (win && win !== window && win.frameElement) {
      const fe = win.frameElement;
      const r = fe.getBoundingClientRect();
      const cs = fe.ownerDocument.defaultView.getComputedStyle(fe);
      x += r.left + fe.clientLeft + parseFloat(cs.paddingLeft);
      y += r.top + fe.clientTop + parseFloat(cs.paddingTop);
      win = fe.ownerDocument.defaultView;
    }
    return { x, y };
  }

  function inView(r, win) {
    return r.top >= 0 && r.left >= 0 && r.bottom <= win.innerHeight && r.right <= win.innerWidth;
  }

  function clickPoint(el) {
    const win = el.ownerDocument.defaultView;
    let r = el.getBoundingClientRect();
    if (!inView(r, win)) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      r = el.getBoundingClientRect();
    }
    // Prefer the first boxed client rect (a wrapped inline link).
    for (const q of el.getClientRects()) {
      if (q.width > 0 && q.height > 0) { r = q; break; }
    }
    const left = Math.max(r.left, 0), top = Math.max(r.top, 0);
    const right = Math.min(r.right, win.innerWidth), bottom = Math.min(r.bottom, win.innerHeight);
    if (right <= left || bottom <= top) return { err: 'hidden', count: 1, visible: 0, detail: 'outside the viewport after scrolling' };
    const x = (left + right) / 2, y = (top + bottom) / 2;
    return { x, y, win };
  }

  function deepHit(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  function composedContains(el, n) {
    while (n) {
      if (n === el) return true;
      n = n.assignedSlot || n.parentNode || n.host || null;
    }
    return false;
  }

  function hitOK(el, hit) {
    if (!hit) return false;
    if (composedContains(el, hit)) return true;
    let labs = null;
    try { labs = el.labels; } catch (e) { labs = null; }
    if (labs) for (const l of labs) if (composedContains(l, hit)) return true;
    return false;
  }

  // point scrolls el into view and returns the click point in this world's
  // top-document viewport, after checking the point hits el.
  function point(el, noHitCheck) {
    const p = clickPoint(el);
    if (p.err) return p;
    if (!noHitCheck) {
      const hit = deepHit(el.ownerDocument, p.x, p.y);
      if (!hitOK(el, hit)) return { err: 'obscured', count: 1, hitTag: hit ? hit.localName : '' };
    }
    const off = frameOffset(el);
    return { x: p.x + off.x, y: p.y + off.y };
  }

  // ---------------------------------------------------------------- actions

  function guard(a) {
    if (a.nonce !== W.nonce) return { err: 'stale', detail: 'document changed' };
    const r = resolve(a.target);
    if (r.err) return r;
    return r;
  }

  function editableKind(el) {
    if (el.localName === 'textarea') return 'input';
    if (el.localName === 'input') {
      const t = inputType(el);
      if (TEXT_TYPES.has(t) || ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'].includes(t)) return 'input';
      return '';
    }
    if (el.isContentEditable) return 'ce';
    return '';
  }

  // prepare resolves the target and checks it for the action kind. It keeps
  // the element for the follow-up calls of the same action.
  function prepare(a) {
    const r = guard(a);
    if (r.err) return r;
    const el = r.el;
    W.pending = el;
    const kind = a.kind;
    const out = { rebound: r.rebound, role: roleOf(el) || 'generic', tag: el.localName };
    if (kind !== 'hover' && kind !== 'scroll' && kind !== 'screenshot' && kind !== 'focus' && isDisabled(el)) {
      return { err: 'disabled', count: 1 };
    }
    if (kind === 'click' || kind === 'hover' || kind === 'check') {
      if (kind === 'check') {
        const c = checkedOf(el);
        if (c == null) return { err: 'invalid', detail: 'not a checkbox, radio or switch' };
        out.checked = c;
        if (c === a.want) return out; // nothing to do
      }
      const p = point(el, kind === 'hover');
      if (p.err) return p;
      out.x = p.x; out.y = p.y;
      return out;
    }
    if (kind === 'type') {
      const ek = editableKind(el);
      if (!ek) return { err: 'invalid', detail: 'element is not editable (' + el.localName + ')' };
      if (el.readOnly) return { err: 'disabled', count: 1, detail: 'read-only' };
      el.focus({ preventScroll: false });
      if (deepActive() !== el && !(ek === 'ce' && el.contains(deepActive()))) {
        return { err: 'obscured', count: 1, detail: 'element did not take focus' };
      }
      const v = valueOf(el) || '';
      if (a.clear) {
        if (ek === 'input') { try { el.select(); } catch (e) { /* no selection API */ } }
        else {
          const s = el.ownerDocument.getSelection();
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(el);
          s.removeAllRanges(); s.addRange(range);
        }
        if (a.empty && v !== '') el.ownerDocument.execCommand('delete');
      } else if (ek === 'input') {
        try { el.setSelectionRange(v.length, v.length); } catch (e) { out.needEnd = v !== ''; /* email, number: no selection API */ }
      } else {
        const s = el.ownerDocument.getSelection();
        const range = el.ownerDocument.createRange();
        range.selectNodeContents(el); range.collapse(false);
        s.removeAllRanges(); s.addRange(range);
      }
      out.before = a.clear ? '' : v;
      out.beforeLen = chars(out.before);
      out.secret = isSecret(el);
      out.kind = ek;
      W.before = out.before;
      delete out.before;
      return out;
    }
    if (kind === 'focus') { el.focus(); return out; }
    if (kind === 'select') {
      if (el.localName !== 'select') return { err: 'invalid', detail: 'not a <select> (' + el.localName + ')' };
      return selectOptions(el, a.values || []);
    }
    if (kind === 'upload') {
      if (el.localName !== 'input' || inputType(el) !== 'file') return { err: 'invalid', detail: 'not a file input' };
      return out;
    }
    if (kind === 'scroll') {
      el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
      return Object.assign(out, scrollState());
    }
    if (kind === 'screenshot') {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      // In this world's top viewport: Go crops the box out of a capture.
      const r = el.getBoundingClientRect();
      const off = frameOffset(el);
      return Object.assign(out, { x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height });
    }
    return out;
  }

  // pendingElement returns the element of the action in progress (for
  // DOM.setFileInputFiles, which needs its object id).
  function pendingElement() { return W.pending; }

  function checkedOf(el) {
    if (el.localName === 'input' && (inputType(el) === 'checkbox' || inputType(el) === 'radio')) return el.checked;
    const c = el.getAttribute('aria-checked');
    if (c != null) return c === 'true';
    const p = el.getAttribute('aria-pressed');
    if (p != null) return p === 'true';
    return null;
  }

  function selectOptions(el, values) {
    const opts = Array.from(el.options);
    const chosen = [];
    for (const v of values) {
      let o = opts.find(o => o.value === v);
      if (!o) o = opts.find(o => norm(o.label) === norm(v) || norm(o.text) === norm(v));
      if (!o) o = opts.find(o => norm(o.label).toLowerCase() === norm(v).toLowerCase());
      if (!o) return { err: 'not_found', count: 0, detail: 'no option with that value or label' };
      if (o.disabled) return { err: 'disabled', count: 1, detail: 'option is disabled' };
      chosen.push(o);
    }
    if (!el.multiple && chosen.length > 1) return { err: 'invalid', detail: 'several values for a single <select>' };
    for (const o of opts) o.selected = chosen.includes(o);
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { selected: Array.from(el.selectedOptions).length, values: Array.from(el.selectedOptions, o => o.value) };
  }

  // readBack measures what reached the field of the pending action.
  function readBack(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const el = W.pending;
    if (!el || !el.isConnected) return { err: 'stale', detail: 'element removed during the action' };
    const v = valueOf(el) || '';
    const before = W.before || '';
    const want = a.text;
    const wantLen = chars(want);
    let delivered = 0;
    if (v.startsWith(before)) {
      const got = Array.from(v.slice(before.length)), w = Array.from(want);
      while (delivered < w.length && delivered < got.length && got[delivered] === w[delivered]) delivered++;
      if (delivered < w.length && el.isContentEditable && norm(v.slice(before.length)) === norm(want)) delivered = w.length;
    }
    return { requested: wantLen, delivered, length: chars(v), exact: v === before + want };
  }

  function readChecked(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const el = W.pending;
    if (!el || !el.isConnected) return { err: 'stale', detail: 'element removed during the action' };
    return { checked: checkedOf(el) };
  }

  function scrollState() {
    const se = document.scrollingElement || document.documentElement;
    const atBottom = Math.ceil(scrollY + innerHeight) >= se.scrollHeight - 1;
    return { atBottom, atTop: scrollY <= 0, y: Math.round(scrollY), height: se.scrollHeight, viewport: innerHeight };
  }

  function scroll(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const se = document.scrollingElement || document.documentElement;
    if (a.to === 'top') scrollTo({ top: 0, behavior: 'instant' });
    else if (a.to === 'bottom') scrollTo({ top: se.scrollHeight, behavior: 'instant' });
    else scrollBy({ left: a.dx || 0, top: a.dy || 0, behavior: 'instant' });
    return scrollState();
  }

  // ---------------------------------------------------------------- reads

  function identity(a) {
    return { ok: a.nonce === W.nonce, url: location.href, title: document.title, readyState: document.readyState };
  }

  function read(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const body = document.body || document.documentElement;
    const t = body ? body.innerText : '';
    const max = a.max > 0 ? a.max : 20000;
    return { text: t.length > max ? t.slice(0, max) : t, total: t.length, url: location.href, title: document.title };
  }

  // ---------------------------------------------------------------- waits

  function check(a) {
    const c = a.cond;
    if (c === 'text' || c === 'text_gone') {
      const t = (document.body || document.documentElement).innerText || '';
      const has = t.includes(a.text);
      return c === 'text' ? (has ? { found: true } : null) : (has ? null : { found: true });
    }
    if (c === 'load') return document.readyState === 'complete' ? { found: true } : null;
    if (c === 'hidden') {
      const els = find(a.target);
      if (els.err) return els;
      const vis = els.filter(visible).length;
      return vis === 0 ? { found: true, count: els.length } : null;
    }
    if (c === 'visible' || c === 'enabled') {
      const r = resolve(a.target);
      if (r.err === 'ambiguous' || r.err === 'invalid' || r.err === 'stale') return r;
      if (r.err) return null;
      if (c === 'enabled' && isDisabled(r.el)) return null;
      return { found: true };
    }
    return { err: 'invalid', detail: 'unknown condition' };
  }

  function wait(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const first = check(a);
    if (first) return first;
    return new Promise(resolveP => {
      let done = false;
      const roots = [document];
      for (const el of allElements()) if (el.shadowRoot) roots.push(el.shadowRoot);
      const observers = [];
      const finish = v => {
        if (done) return;
        done = true;
        for (const o of observers) o.disconnect();
        clearTimeout(timer);
        document.removeEventListener('transitionend', onEvent, true);
        document.removeEventListener('animationend', onEvent, true);
        window.removeEventListener('load', onEvent, true);
        document.removeEventListener('readystatechange', onEvent, true);
        resolveP(v);
      };
      let scheduled = false;
      const onEvent = () => {
        if (scheduled || done) return;
        scheduled = true;
        // Coalesce a burst of mutations into one check.
        queueMicrotask(() => {
          scheduled = false;
          const v = check(a);
          if (v) finish(v);
        });
      };
      for (const r of roots) {
        const o = new MutationObserver(onEvent);
        o.observe(r, { subtree: true, childList: true, attributes: true, characterData: true });
        observers.push(o);
      }
      document.addEventListener('transitionend', onEvent, true);
      document.addEventListener('animationend', onEvent, true);
      window.addEventListener('load', onEvent, true);
      document.addEventListener('readystatechange', onEvent, true);
      const timer = setTimeout(() => finish({ found: false }), Math.max(0, a.timeout | 0));
    });
  }

  // settle resolves once the DOM has been quiet for quietMs, or at maxMs.
  function settle(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    return new Promise(resolveP => {
      let quiet = null;
      const o = new MutationObserver(() => { clearTimeout(quiet); quiet = setTimeout(done(true), a.quietMs); });
      const done = ok => () => { o.disconnect(); clearTimeout(quiet); clearTimeout(capTimer); resolveP({ settled: ok }); };
      o.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      quiet = setTimeout(done(true), a.quietMs);
      const capTimer = setTimeout(done(false), a.maxMs);
    });
  }

  // ---------------------------------------------------------------- reach

  // Frames of other origins are judged in Go; these functions tell Go which
  // frame an input or a capture would reach. A cross-origin <iframe> is
  // named by the key Go tagged it with ('' when untagged: Go refuses what it
  // cannot name).

  // Every element that can hold another document: an <object> or <embed>
  // of HTML is a frame as much as an <iframe> is.
  const FRAME_SEL = 'iframe,frame,object,embed,fencedframe';

  function contentDocOf(el) {
    try { return el.contentDocument || null; } catch (e) { return null; }
  }

  // contentBox returns the origin of el's content box (where its frame's
  // viewport starts) in el's document viewport, and its scale.
  function contentBox(el) {
    const r = el.getBoundingClientRect();
    const cs = el.ownerDocument.defaultView.getComputedStyle(el);
    const sx = el.offsetWidth > 0 ? r.width / el.offsetWidth : 1;
    const sy = el.offsetHeight > 0 ? r.height / el.offsetHeight : 1;
    return { x: r.left + (el.clientLeft + parseFloat(cs.paddingLeft)) * sx, y: r.top + (el.clientTop + parseFloat(cs.paddingTop)) * sy, sx: sx || 1, sy: sy || 1 };
  }

  // hitFrame hit-tests point (x, y) of this world's top viewport as input
  // would (pointer-events and overlays included), entering same-origin
  // frames; when the point lands on a cross-origin frame it returns that
  // frame's key and the point in the frame's viewport.
  function hitFrame(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    let doc = document, x = a.x, y = a.y;
    for (let i = 0; i < 32; i++) {
      const hit = deepHit(doc, x, y);
      if (!isFrame(hit)) return { cross: false };
      const b = contentBox(hit);
      const fx = (x - b.x) / b.sx, fy = (y - b.y) / b.sy;
      const d = contentDocOf(hit);
      if (!d) return { cross: true, key: W.frameKeys.get(hit) || '', x: fx, y: fy };
      doc = d; x = fx; y = fy;
    }
    return { err: 'invalid', detail: 'frames nested too deep' };
  }

  // focusFrame follows the focus (activeElement through shadow roots and
  // same-origin frames) and returns the key of the cross-origin frame that
  // holds it, if one does: key events go to the focused frame.
  function focusFrame(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    let el = document.activeElement;
    for (let i = 0; i < 64 && el; i++) {
      if (el.shadowRoot && el.shadowRoot.activeElement) { el = el.shadowRoot.activeElement; continue; }
      if (!isFrame(el)) return { cross: false };
      const d = contentDocOf(el);
      if (!d) return { cross: true, key: W.frameKeys.get(el) || '' };
      el = d.activeElement;
    }
    return { cross: false };
  }

  function composedParent(n) {
    if (n.parentElement) return n.parentElement;
    const p = n.parentNode;
    if (p && p.host) return p.host;
    const d = n.ownerDocument;
    // Out of a same-origin frame: on to its <iframe> in the parent document.
    return n === d.documentElement && d.defaultView && d.defaultView !== window ? d.defaultView.frameElement : null;
  }

  // spreadOf returns how far, in CSS pixels of this world's top viewport,
  // filters on el and its ancestors (up to this world's top document) can
  // paint el's pixels outside its box; -1 when nothing bounds it (an SVG
  // filter, a reflection).
  function spreadOf(el) {
    let spread = 0;
    for (let n = el, i = 0; n && i < 4096; n = composedParent(n), i++) {
      const cs = n.ownerDocument.defaultView.getComputedStyle(n);
      const refl = cs.webkitBoxReflect;
      if (refl && refl !== 'none') return -1;
      const f = cs.filter;
      if (f && f !== 'none') {
        if (f.includes('url(')) return -1;
        // blur(r) spreads about 3r, drop-shadow(x y r) |x|+|y|+3r: count
        // every length three times.
        for (const m of f.matchAll(/(-?[\d.]+)px/g)) spread += 3 * Math.abs(parseFloat(m[1]));
      }
    }
    return spread;
  }

  // transformed reports whether el or an ancestor scales, rotates, skews
  // or puts it in perspective (a translation alone does not count): offsets
  // into such a frame are then not exact.
  function transformed(el) {
    for (let n = el, i = 0; n && i < 4096; n = composedParent(n), i++) {
      const cs = n.ownerDocument.defaultView.getComputedStyle(n);
      if (cs.rotate !== 'none' || cs.scale !== 'none' || cs.perspective !== 'none' || (cs.zoom && cs.zoom !== '1')) return true;
      if (cs.transform !== 'none') {
        let m;
        try { m = new DOMMatrixReadOnly(cs.transform); } catch (e) { return true; }
        if (m.m11 !== 1 || m.m12 !== 0 || m.m13 !== 0 || m.m14 !== 0 || m.m21 !== 0 || m.m22 !== 1 || m.m23 !== 0 ||
          m.m24 !== 0 || m.m31 !== 0 || m.m32 !== 0 || m.m33 !== 1 || m.m34 !== 0 || m.m44 !== 1) return true;
      }
    }
    return false;
  }

  // frameLayout lists the cross-origin frames this document shows: found
  // through open shadow roots and same-origin frames, plus every frame Go
  // tagged (which reaches into closed shadow roots). Each has its key, its
  // <iframe>'s bounding box and content-box origin and scale in this
  // world's top viewport, and the spread of filters on it. A frame inside a
  // transformed same-origin frame gets that frame's whole box. When there
  // are frames, elements with a backdrop-filter are listed too: they can
  // smear what is behind them across their own box. Zero-size frames paint
  // nothing and are left out.
  function frameLayout(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    const els = new Set(deepQuery(FRAME_SEL));
    for (const r of W.frameEls.values()) { const el = r.deref(); if (el && el.isConnected) els.add(el); }
    const frames = [];
    for (const el of els) {
      if (contentDocOf(el)) continue; // same-origin: its frames are listed themselves
      const r = el.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0)) continue;
      const off = frameOffset(el);
      const b = contentBox(el);
      const f = { key: W.frameKeys.get(el) || '', x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height,
        cx: b.x + off.x, cy: b.y + off.y, sx: b.sx, sy: b.sy, spread: spreadOf(el), tf: transformed(el) };
      // Through a transformed same-origin frame the offsets are not exact:
      // take the outermost such frame's box.
      for (let win = el.ownerDocument.defaultView; win && win !== window && win.frameElement; win = win.frameElement.ownerDocument.defaultView) {
        const fe = win.frameElement;
        if (!transformed(fe)) continue;
        const fr = fe.getBoundingClientRect(), fo = frameOffset(fe);
        Object.assign(f, { x: fr.left + fo.x, y: fr.top + fo.y, w: fr.width, h: fr.height, cx: fr.left + fo.x, cy: fr.top + fo.y, inexact: true });
      }
      frames.push(f);
    }
    const backdrops = [];
    if (frames.length) {
      for (const el of allElements()) {
        const cs = el.ownerDocument.defaultView.getComputedStyle(el);
        if (!cs.backdropFilter || cs.backdropFilter === 'none') continue;
        const r = el.getBoundingClientRect(), off = frameOffset(el);
        if (r.width > 0 && r.height > 0) backdrops.push({ x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height });
      }
    }
    const vv = window.visualViewport;
    return {
      frames, backdrops, vw: innerWidth, vh: innerHeight, scrollX, scrollY,
      vvx: vv ? vv.offsetLeft : 0, vvy: vv ? vv.offsetTop : 0, vvs: vv ? vv.scale : 1,
    };
  }

  // afterFrame resolves after the next animation frame, or after 100 ms
  // when the page renders no frames (a hidden tab).
  function afterFrame(a) {
    if (a.nonce !== W.nonce) return { err: 'stale' };
    return new Promise(resolveP => {
      const t = setTimeout(() => resolveP({ frame: false }), 100);
      requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); resolveP({ frame: true }); }));
    });
  }

  return {
    hitFrame, focusFrame, frameLayout, afterFrame,
    snapshot, more, expand, closedHosts, tagFrame, frameOrder, frameBox, prepare, pendingElement, readBack, readChecked, scroll,
    identity, read, wait, settle, count,
  };
})
