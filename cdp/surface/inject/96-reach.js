// @ts-check
// Reach: which frame an input or a capture would land in.
// A part of the page script: see 99-api.js.

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
  return { err: R.invalid, detail: 'frames nested too deep' };
}

// focusFrame follows the focus (activeElement through shadow roots and
// same-origin frames) and returns the key of the cross-origin frame that
// holds it, if one does: key events go to the focused frame.
function focusFrame(a) {
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

// viewTransitionShown reports whether a view transition may be showing a
// snapshot of this document or of a same-origin frame in it. A snapshot is
// a copy of what was painted, frames of other origins included, drawn after
// those frames have gone: no mask can follow them. Seen by the scope that
// matches :active-view-transition (the document's root for a document
// transition, same- or cross-document, the scope element for a scoped one,
// found through open shadow roots when deep) or by an animation of a
// ::view-transition pseudo-element (which reaches scopes in closed shadow
// roots), or in a closed shadow root Go handed over (closedRoot).
function viewTransitionShown(deep) {
  for (const r of W.closedRoots) {
    const root = r.deref();
    if (root && root.host && root.host.isConnected && root.querySelector(':active-view-transition')) return true;
  }
  const docs = [document];
  for (let i = 0; i < docs.length && i < 4096; i++) {
    const d = docs[i];
    try {
      if (d.querySelector(':active-view-transition')) return true;
      // getAnimations updates style: in the samples only, not every frame.
      if (deep && d.getAnimations().some(an => { const fx = an.effect; return !!(fx && fx.pseudoElement && fx.pseudoElement.startsWith('::view-transition')); })) return true;
    } catch (e) { return true; } // cannot tell: say shown
    for (const f of d.querySelectorAll('iframe,frame')) { const c = contentDocOf(f); if (c) docs.push(c); }
  }
  if (deep) {
    for (const el of allElements()) {
      if (el.shadowRoot && el.shadowRoot.querySelector(':active-view-transition')) return true;
    }
  }
  return false;
}

// closedRoot keeps a closed shadow root of this document, which Go found
// through DOM.describeNode, for viewTransitionShown (Go calls it with the
// root as its element argument); called with {reset: true} alone it forgets
// the ones kept before.
function closedRoot(root, a) {
  if (a === undefined) {
    if (root && root.reset) W.closedRoots = [];
    return true;
  }
  if (root instanceof ShadowRoot && W.closedRoots.length < 1024) W.closedRoots.push(new WeakRef(root));
  return true;
}

// watchTransitions starts ('start') or stops ('stop') a check of
// viewTransitionShown at every animation frame while a capture is taken: a
// transition that starts and ends between the two layout samples of the
// capture is still seen, since every frame that shows its snapshot runs
// the page's animation frame callbacks while it is active. Bounded: it
// stops by itself after 600 frames.
function watchTransitions(op) {
  if (op === 'stop') { W.vtWatch = 0; return; }
  if (op !== 'start') return;
  const run = !W.vtWatch;
  W.vtWatch = 600;
  if (!run) return;
  const tick = () => {
    if (!W.vtWatch) return;
    W.vtWatch--;
    if (viewTransitionShown(false)) W.vtSeen = true;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

// frameLayout lists the cross-origin frames this document shows: found
// through open shadow roots and same-origin frames, plus every frame Go
// tagged (which reaches into closed shadow roots). Each has its key, its
// <iframe>'s bounding box and content-box origin and scale in this
// world's top viewport, and the spread of filters on it. A frame inside a
// transformed same-origin frame gets that frame's whole box. When there
// are frames, elements with a backdrop-filter are listed too: they can
// smear what is behind them across their own box. Zero-size frames paint
// nothing and are left out. vt says a view transition is shown now or,
// when a.watch stops the watch, was seen by it since it started (see
// watchTransitions).
function frameLayout(a) {
  const op = a && a.watch;
  if (op === 'start') W.vtSeen = false;
  const vt = viewTransitionShown(true) || (op === 'stop' && !!W.vtSeen);
  watchTransitions(op);
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
  // Password fields are masked in every capture: a secret typed into one
  // never reaches an image.
  const secrets = [];
  for (const el of deepQuery('input[type="password" i]')) {
    const r = el.getBoundingClientRect(), off = frameOffset(el);
    if (r.width > 0 && r.height > 0) secrets.push({ x: r.left + off.x, y: r.top + off.y, w: r.width, h: r.height });
  }
  const vv = window.visualViewport;
  return {
    frames, backdrops, secrets, vt, vw: innerWidth, vh: innerHeight, scrollX, scrollY,
    vvx: vv ? vv.offsetLeft : 0, vvy: vv ? vv.offsetTop : 0, vvs: vv ? vv.scale : 1,
  };
}

// afterFrame resolves after the next animation frame, or after 100 ms
// when the page renders no frames (a hidden tab).
function afterFrame(a) {
  return new Promise(resolveP => {
    const t = setTimeout(() => resolveP({ frame: false }), 100);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); resolveP({ frame: true }); }));
  });
}
