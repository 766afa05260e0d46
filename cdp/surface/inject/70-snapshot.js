// @ts-check
// The outline walk: snapshots, folds, queries, frames.
// A part of the page script: see 99-api.js.

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
  const focused = deepActive();
  const newCtx = (/** @type {boolean} */ noFold, /** @type {number} */ budget) => ({
    lines: [], chars: 0, budget, frames: [], closed: [],
    ids: new Set(), interactive: !!a.interactive, prefix: a.prefix || 'e', focused,
    text: '', textDepth: 0, truncated: false, total: 0, maxLines: a.maxLines > 0 ? a.maxLines : MAX_LINES,
    noFold, mute: false, folds: [], foldTag: foldTag(a.prefix || 'e'), muteMin: 0, muteMax: 0,
  });
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
    try { start = deepQuery(a.scopeCss); } catch (e) { return { err: R.invalid, detail: 'invalid CSS selector' }; }
    if (!start.length) return { err: R.notFound, count: 0 };
  }
  const budget = a.budget > 0 ? a.budget : Infinity;
  const begin = (/** @type {any} */ ctx) => {
    W.snaps.set(a.snap, ctx.ids);
    W.folds.set(a.snap, ctx.folds);
    return step(a.snap, walk(start, ctx), ctx);
  };
  // Runs of same-shaped siblings fold only on a page whose outline does not
  // fit one chunk (a.foldAt characters): a page that fits is shown whole.
  let out = null;
  if (!a.full && a.foldAt > 0 && a.foldAt <= budget) {
    out = begin(newCtx(true, a.foldAt));
    if (!out.done) {
      W.walks.delete(a.snap);
      out = null;
    }
  }
  if (!out) out = begin(newCtx(!!a.full, budget));
  while (W.snaps.size > MAX_SNAPS) {
    const old = W.snaps.keys().next().value;
    W.snaps.delete(old);
    W.walks.delete(old);
    W.folds.delete(old);
  }
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
  if (!folds || !ids) return { err: R.stale, detail: 'snapshot expired in this document' };
  const f = folds[a.fold - 1];
  if (!f) return { err: R.notFound, detail: 'no fold with that number in the snapshot' };
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
  if (!role && !name && !text) return { err: R.invalid, detail: 'empty query' };
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
  const w = W.walks.get(a.snap);
  if (!w) return { err: R.stale, detail: 'snapshot walk expired' };
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
  ctx.chars -= child.length + 1 - (body.length + 3); // the line and its newline, for " › " and the body
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

function tagFrame(el, a) {
  const key = a.key;
  if (isFrame(el)) {
    W.frameKeys.set(el, key);
    W.frameEls.set(key, new WeakRef(el));
    return true;
  }
  return false;
}

// frameOrder lists the keys of tagged frames in document order.
function frameOrder(a) {
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
  const r = W.frameEls.get(a.key);
  const el = r && r.deref();
  if (!el || !el.isConnected) return { err: R.stale, detail: 'frame element gone' };
  let rect = el.getBoundingClientRect();
  if (!inView(rect, el.ownerDocument.defaultView)) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    rect = el.getBoundingClientRect();
  }
  const cs = el.ownerDocument.defaultView.getComputedStyle(el);
  const off = frameOffset(el);
  return { x: off.x + rect.left + el.clientLeft + parseFloat(cs.paddingLeft), y: off.y + rect.top + el.clientTop + parseFloat(cs.paddingTop) };
}
