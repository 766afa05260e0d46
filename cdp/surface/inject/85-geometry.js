// @ts-check
// Geometry: click points and hit tests.
// A part of the page script: see 99-api.js.

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
  if (right <= left || bottom <= top) return { err: R.hidden, count: 1, visible: 0, detail: 'outside the viewport after scrolling' };
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
    if (!hitOK(el, hit)) return { err: R.obscured, count: 1, hitTag: hit ? hit.localName : '' };
  }
  const off = frameOffset(el);
  return { x: p.x + off.x, y: p.y + off.y };
}
