// @ts-check
// Accessible names.
// A part of the page script: see 99-api.js.

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

// contentName is a name from content as the browser computes it: the text,
// with the alt of images and the aria-label of elements in it (an icon
// button, a logo link). Hidden parts do not count.
function contentName(el) {
  if (el.firstElementChild === null || !el.querySelector('img,[aria-label],[aria-hidden]')) return subtreeText(el);
  const parts = [];
  const visit = n => {
    for (const c of n.childNodes) {
      if (c.nodeType === 3) { parts.push(c.data); continue; }
      if (c.nodeType !== 1 || c.getAttribute('aria-hidden') === 'true' || SKIP.has(c.localName)) continue;
      const label = norm(c.getAttribute('aria-label'));
      if (label) parts.push(label);
      else if (c.localName === 'img') parts.push(c.getAttribute('alt') || '');
      else if (c.checkVisibility && !c.checkVisibility()) continue;
      else visit(c);
    }
  };
  visit(el);
  return norm(parts.join(' '));
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
    const t = contentName(el);
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
