// @ts-check
// Visibility, and what counts as actionable.
// A part of the page script: see 99-api.js.

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

// ---- actionable

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
