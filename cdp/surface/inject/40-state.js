// @ts-check
// States an outline line shows (checked, expanded, value, ...).
// A part of the page script: see 99-api.js.

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
  /** @type {any} */
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
