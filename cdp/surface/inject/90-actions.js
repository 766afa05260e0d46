// @ts-check
// Actions: checks before input, read-backs after.
// A part of the page script: see 99-api.js.

/** @returns {any} {el, rebound} or {err, ...} */
function guard(a) {
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
  // The document's navigation count before anything happens, for navState
  // after the action.
  const navSeq = NAVS.seq;
  const r = prepareFor(a);
  if (!r.err) r.navSeq = navSeq;
  return r;
}

/** @returns {any} what prepare answers, or {err, ...} */
function prepareFor(a) {
  const r = guard(a);
  if (r.err) return r;
  const el = r.el;
  W.pending = el;
  const kind = a.kind;
  const out = { rebound: r.rebound, role: roleOf(el) || 'generic', tag: el.localName };
  if (kind !== 'hover' && kind !== 'scroll' && kind !== 'screenshot' && kind !== 'focus' && kind !== 'evaluate' && isDisabled(el)) {
    return { err: R.disabled, count: 1 };
  }
  if (kind === 'click' || kind === 'hover' || kind === 'check') {
    if (kind === 'check') {
      const c = checkedOf(el);
      if (c == null) return { err: R.invalid, detail: 'not a checkbox, radio or switch' };
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
    if (!ek) return { err: R.invalid, detail: 'element is not editable (' + el.localName + ')' };
    if (el.readOnly) return { err: R.disabled, count: 1, detail: 'read-only' };
    el.focus({ preventScroll: false });
    if (deepActive() !== el && !(ek === 'ce' && el.contains(deepActive()))) {
      return { err: R.obscured, count: 1, detail: 'element did not take focus' };
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
    if (el.localName !== 'select') return { err: R.invalid, detail: 'not a <select> (' + el.localName + ')' };
    return selectOptions(el, a.values || []);
  }
  if (kind === 'upload') {
    if (el.localName !== 'input' || inputType(el) !== 'file') return { err: R.invalid, detail: 'not a file input' };
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
    if (!o) return { err: R.notFound, count: 0, detail: 'no option with that value or label' };
    if (o.disabled) return { err: R.disabled, count: 1, detail: 'option is disabled' };
    chosen.push(o);
  }
  if (!el.multiple && chosen.length > 1) return { err: R.invalid, detail: 'several values for a single <select>' };
  for (const o of opts) o.selected = chosen.includes(o);
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { selected: Array.from(el.selectedOptions).length, values: Array.from(el.selectedOptions, o => o.value) };
}

// readBack measures what reached the field of the pending action.
function readBack(a) {
  const el = W.pending;
  if (!el || !el.isConnected) return { err: R.stale, detail: 'element removed during the action' };
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
  // With the document's navigation state: Go then needs no second call to
  // learn whether the typing navigated (an Enter in a form).
  return { requested: wantLen, delivered, length: chars(v), exact: v === before + want, nav: navState() };
}

function readChecked(a) {
  const el = W.pending;
  if (!el || !el.isConnected) return { err: R.stale, detail: 'element removed during the action' };
  return { checked: checkedOf(el) };
}

function scrollState() {
  const se = document.scrollingElement || document.documentElement;
  const atBottom = Math.ceil(scrollY + innerHeight) >= se.scrollHeight - 1;
  return { atBottom, atTop: scrollY <= 0, y: Math.round(scrollY), height: se.scrollHeight, viewport: innerHeight };
}

function scroll(a) {
  const se = document.scrollingElement || document.documentElement;
  if (a.to === 'top') scrollTo({ top: 0, behavior: 'instant' });
  else if (a.to === 'bottom') scrollTo({ top: se.scrollHeight, behavior: 'instant' });
  else scrollBy({ left: a.dx || 0, top: a.dy || 0, behavior: 'instant' });
  return scrollState();
}
