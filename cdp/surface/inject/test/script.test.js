// @ts-check
// Tests per function of the page script, under node's own test runner (no
// npm packages): `node --test cdp/surface/inject/test/`.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { load, files, dir } = require('./load.js');
const { h, makeDocument } = require('./dom.js');

const plain = (/** @type {any} */ x) => JSON.parse(JSON.stringify(x));
/** deepEqual across the script's realm (its arrays have their own prototype). */
const eq = (/** @type {any} */ a, /** @type {any} */ b) => assert.deepEqual(plain(a), b);
const S = load(['R', 'W', 'norm', 'cap', 'quote', 'chars', 'inputType', 'roleOf', 'nameOf', 'rowName', 'leafCell',
  'isSecret', 'isDisabled', 'states', 'actionable', 'refFor', 'forgetUnreachable', 'foldTag', 'shapeOf', 'runAt',
  'joinOnlyChild', 'push', 'matchSet', 'byRef', 'editableKind', 'checkedOf', 'identity', 'WRONG_DOCUMENT']);

// ---------------------------------------------------------------- 00-base, 99-api

test('R holds only codes of the project (snake case, browser_ or invalid_argument)', () => {
  for (const c of Object.values(S.R)) assert.match(c, /^(browser_[a-z_]+|invalid_argument)$/);
  assert.ok(Object.isFrozen(S.R));
});

test('every R.x the script uses is in R', () => {
  for (const f of files()) {
    const src = fs.readFileSync(path.join(dir, f), 'utf8').replace(/\/\/[^\n]*/g, '');
    for (const m of src.matchAll(/\bR\.(\w+)/g)) assert.ok(m[1] in S.R, `${f}: R.${m[1]}`);
    assert.doesNotMatch(src, /err: '/, `${f} returns a code that is not in R`);
  }
});

test('API.call checks the nonce in one place', () => {
  let thrown;
  try { S.API.call('identity', 'other', {}); } catch (e) { thrown = e; }
  assert.equal(thrown, S.WRONG_DOCUMENT);
  assert.equal(S.API.call('identity', 'n1', {}).ok, true);
  eq(S.API.call('noSuchEntry', 'n1', {}), { err: S.R.invalid, detail: 'no such entry point' });
});

test('API.call passes an element argument (tagFrame)', () => {
  const f = h('iframe');
  assert.equal(S.API.call('tagFrame', 'n1', { key: 'f1' }, f), true);
  assert.equal(S.W.frameEls.get('f1').deref(), f);
  assert.equal(S.API.call('tagFrame', 'n1', { key: 'f2' }, h('div')), false);
});

test('every file compiles on its own (a syntax error names its file)', () => {
  const vm = require('node:vm');
  for (const f of files()) {
    assert.doesNotThrow(() => new vm.Script(fs.readFileSync(path.join(dir, f), 'utf8'), { filename: f }), f);
  }
});

test('tsconfig.json lists every file of the script', () => {
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'tsconfig.json'), 'utf8'));
  assert.deepEqual(cfg.files.filter((/** @type {string} */ f) => f.endsWith('.js')), files());
});

test('every file starts with // @ts-check', () => {
  for (const f of files()) assert.match(fs.readFileSync(path.join(dir, f), 'utf8'), /^\/\/ @ts-check\n/, f);
});

// ---------------------------------------------------------------- 10-text

test('norm collapses white space', () => {
  assert.equal(S.norm('  a \n\t b  '), 'a b');
  assert.equal(S.norm(null), '');
  assert.equal(S.norm(undefined), '');
});

test('cap cuts with an ellipsis within n', () => {
  assert.equal(S.cap('abcdef', 4), 'abc\u2026');
  assert.equal(S.cap('abc', 4), 'abc');
});

test('quote and chars', () => {
  assert.equal(S.quote('a "b"'), '"a \\"b\\""');
  assert.equal(S.chars('h\u00e9\u{1F600}'), 3);
});

// ---------------------------------------------------------------- 20-roles

test('roleOf: native elements', () => {
  const cases = [
    [h('button'), 'button'], [h('a', { href: '/' }), 'link'], [h('a'), ''], [h('input'), 'textbox'],
    [h('input', { type: 'checkbox' }), 'checkbox'], [h('input', { type: 'submit' }), 'button'],
    [h('input', { type: 'range' }), 'slider'], [h('input', { type: 'number' }), 'spinbutton'],
    [h('input', { type: 'search' }), 'searchbox'], [h('input', { type: 'hidden' }), ''],
    [h('input', { type: 'email', list: 'x' }), 'combobox'], [h('textarea'), 'textbox'],
    [h('select'), 'combobox'], [h('select', { multiple: '' }), 'listbox'], [h('select', { size: '4' }), 'listbox'],
    [h('h3'), 'heading'], [h('ul'), 'list'], [h('li'), 'listitem'], [h('tr'), 'row'], [h('td'), 'cell'],
    [h('th'), 'columnheader'], [h('th', { scope: 'row' }), 'rowheader'], [h('img', { alt: '' }), ''],
    [h('img', { alt: 'x' }), 'img'], [h('section'), ''], [h('section', { 'aria-label': 'S' }), 'region'],
    [h('div'), ''], [h('div', { contenteditable: 'true' }), 'textbox'],
  ];
  for (const [el, want] of cases) assert.equal(S.roleOf(el), want, el.localName + JSON.stringify([...el.attrs]));
});

test('roleOf: explicit roles, first token, none', () => {
  assert.equal(S.roleOf(h('div', { role: 'Tab  button' })), 'tab');
  assert.equal(S.roleOf(h('button', { role: 'presentation' })), '');
  assert.equal(S.roleOf(h('li', { role: 'none' })), '');
});

test('roleOf: header and footer are landmarks only outside sectioning', () => {
  assert.equal(S.roleOf(h('header')), 'banner');
  const inner = h('header');
  h('article', {}, inner);
  assert.equal(S.roleOf(inner), '');
  assert.equal(S.roleOf(h('footer')), 'contentinfo');
});

test('inputType defaults to text, lower case', () => {
  assert.equal(S.inputType(h('input')), 'text');
  assert.equal(S.inputType(h('input', { type: 'EMAIL' })), 'email');
});

// ---------------------------------------------------------------- 30-names

test('nameOf: aria-labelledby, aria-label, content, value', () => {
  const doc = makeDocument();
  const lab = h('span', { id: 'l' }, 'From  label');
  const b = h('button', { 'aria-labelledby': 'l' }, 'Text');
  doc.append(h('body', {}, lab, b));
  assert.equal(S.nameOf(b, 'button'), 'From label');
  assert.equal(S.nameOf(h('button', { 'aria-label': ' Close ' }, 'x'), 'button'), 'Close');
  assert.equal(S.nameOf(h('button', {}, ' Save ', h('b', {}, 'all')), 'button'), 'Save all');
  assert.equal(S.nameOf(h('input', { type: 'submit' }), 'button'), 'Submit');
  assert.equal(S.nameOf(h('input', { type: 'button', value: 'Go' }), 'button'), 'Go');
  assert.equal(S.nameOf(h('input', { placeholder: 'Search' }), 'textbox'), 'Search');
  assert.equal(S.nameOf(h('img', { alt: 'Logo' }), 'img'), 'Logo');
});

test('nameOf from content counts image alts and aria-labels, not hidden parts', () => {
  assert.equal(S.nameOf(h('button', {}, h('img', { alt: 'Icon only' })), 'button'), 'Icon only');
  assert.equal(S.nameOf(h('a', { href: '/', title: 'T' }, h('img', { alt: 'Logo' }), ' Home'), 'link'), 'Logo Home');
  assert.equal(S.nameOf(h('button', {}, h('span', { 'aria-hidden': 'true' }, 'x'), 'Close'), 'button'), 'Close');
  assert.equal(S.nameOf(h('a', { href: '/', title: 'T' }, h('img', { alt: '' })), 'link'), 'T');
});

test('nameOf: a field is named by its labels', () => {
  const i = h('input');
  i._labels = [h('label', {}, 'Email')];
  assert.equal(S.nameOf(i, 'textbox'), 'Email');
});

test('nameOf: a cell holding elements has no name of its own', () => {
  assert.equal(S.nameOf(h('td', {}, h('button', {}, 'x')), 'cell'), '');
  assert.equal(S.nameOf(h('td', {}, 'Item 3'), 'cell'), 'Item 3');
});

test('nameOf caps names at 100 characters', () => {
  assert.equal(S.nameOf(h('button', {}, 'x'.repeat(300)), 'button').length, 100);
});

test('rowName joins text-only cells; leafCell tells which', () => {
  const btnCell = h('td', {}, h('button', {}, 'Open'));
  const row = h('tr', {}, h('td', {}, '3'), h('td', {}, ' Item  3 '), btnCell);
  assert.equal(S.rowName(row), '3 | Item 3');
  assert.equal(S.leafCell(row.children[0]), true);
  assert.equal(S.leafCell(btnCell), false);
  assert.equal(S.leafCell(h('td', { 'aria-label': 'x' }, 'y')), false);
  assert.equal(S.nameOf(row, 'row'), '3 | Item 3');
});

// ---------------------------------------------------------------- 40-state

test('isSecret: passwords and secret autocomplete tokens', () => {
  assert.equal(S.isSecret(h('input', { type: 'password' })), true);
  assert.equal(S.isSecret(h('input', { autocomplete: 'cc-number' })), true);
  assert.equal(S.isSecret(h('input', { autocomplete: 'email' })), false);
  assert.equal(S.isSecret(h('textarea')), false);
});

test('states: heading level, checked, expanded, required, password length', () => {
  eq(S.states(h('h2'), 'heading', null, false), ['level=2']);
  eq(S.states(h('input', { type: 'checkbox', checked: '' }), 'checkbox', null, true), ['checked']);
  eq(S.states(h('button', { 'aria-expanded': 'false' }), 'button', null, true), ['collapsed']);
  eq(S.states(h('input', { required: '' }), 'textbox', null, true), ['required']);
  eq(S.states(h('input', { type: 'password', value: 'h\u00e9llo' }), 'textbox', null, true), ['password(5 chars)']);
  eq(S.states(h('input', { value: 'v' }), 'textbox', null, true), ['value="v"']);
  const f = h('input');
  eq(S.states(f, 'textbox', f, true), ['focused']);
});

// ---------------------------------------------------------------- 50-visibility

test('actionable: roles, onclick, tabindex', () => {
  assert.equal(S.actionable(h('button'), 'button'), true);
  assert.equal(S.actionable(h('div', { onclick: 'x()' }), ''), true);
  assert.equal(S.actionable(h('div', { tabindex: '0' }), ''), true);
  assert.equal(S.actionable(h('div', { tabindex: '-1' }), ''), false);
  assert.equal(S.actionable(h('main', { tabindex: '0' }), 'main'), false);
  assert.equal(S.actionable(h('input', { type: 'file' }), 'button'), true);
  assert.equal(S.actionable(h('p'), 'paragraph'), false);
});

// ---------------------------------------------------------------- 60-registry

test('refFor keeps one id per element and its place for a rebind', () => {
  const b1 = h('button', {}, 'A'), b2 = h('button', {}, 'B');
  h('div', {}, b1, b2);
  const id1 = S.refFor(b1, 'button', 'A', -1), id2 = S.refFor(b2, 'button', 'B', -1);
  assert.notEqual(id1, id2);
  assert.equal(S.refFor(b1, 'button', 'A', -1), id1);
  const e = S.W.byId.get(id2);
  assert.equal(e.index, 1);
  assert.equal(e.parent.deref(), b1.parentNode);
});

test('byRef refuses malformed, expired and foreign refs with the project codes', () => {
  assert.equal(S.byRef('x1', 's').err, S.R.invalid);
  assert.equal(S.byRef('e1', 'no-such-snapshot').err, S.R.stale);
  const b = h('button', {}, 'A');
  h('div', {}, b);
  const id = S.refFor(b, 'button', 'A', -1);
  S.W.snaps.set('s1', new Set([id]));
  assert.equal(S.byRef('e' + (id + 1000), 's1').err, S.R.stale);
  b.isConnected = true;
  assert.equal(S.byRef('e' + id, 's1').el, b);
  assert.equal(S.byRef('f2e' + id, 's1').el, b);
});

// ---------------------------------------------------------------- 70-snapshot

test('foldTag names folds by document', () => {
  assert.equal(S.foldTag('e'), '');
  assert.equal(S.foldTag('f3e'), 'f3:');
});

test('shapeOf: same template, same shape', () => {
  const row = n => h('tr', {}, h('td', {}, String(n)), h('td', {}, h('button', {}, 'Open')));
  assert.equal(S.shapeOf(row(1)), S.shapeOf(row(2)));
  assert.notEqual(S.shapeOf(row(1)), S.shapeOf(h('tr', {}, h('td', {}, '1'))));
  assert.notEqual(S.shapeOf(h('li')), S.shapeOf(h('li', { role: 'none' })));
});

test('runAt: same-shaped siblings, white space between, text ends a run', () => {
  const li = () => h('li', {}, h('a', { href: '/' }, 'x'));
  const ul = h('ul', {}, li(), '\n ', li(), li(), h('li', {}, 'plain'), li());
  const kids = ul.childNodes;
  eq(S.runAt(kids, 0), [0, 2, 3]);
  eq(S.runAt(kids, 4), [4]);
  const withText = h('div', {}, h('p'), 'words', h('p'));
  eq(S.runAt(withText.childNodes, 0), [0]);
});

test('push indents, counts and stops at the line bound; mute writes nothing', () => {
  const ctx = { lines: [], chars: 0, total: 0, maxLines: 2, truncated: false, mute: false };
  assert.equal(S.push(ctx, 1, 'button "A"'), true);
  eq(ctx.lines, ['  - button "A"']);
  assert.equal(ctx.chars, 15);
  ctx.mute = true;
  assert.equal(S.push(ctx, 0, 'x'), true);
  assert.equal(ctx.lines.length, 1);
  ctx.mute = false;
  S.push(ctx, 0, 'y');
  assert.equal(S.push(ctx, 0, 'z'), false);
  assert.equal(ctx.truncated, true);
});

test('joinOnlyChild puts a row\'s one child on the row\'s line', () => {
  const ctx = { lines: ['  - row "1 | A"', '    - button "Open" [e1]'], chars: 0, total: 2, chunk: 1, frames: [], closed: [], mute: false };
  ctx.chars = ctx.lines.reduce((n, l) => n + l.length + 1, 0);
  S.joinOnlyChild(ctx, { at: 0, chunk: 1, frames: 0, closed: 0 });
  eq(ctx.lines, ['  - row "1 | A" \u203a button "Open" [e1]']);
  assert.equal(ctx.chars, ctx.lines[0].length + 1);
  assert.equal(ctx.total, 1);
  // Two children, or the row line in an earlier chunk: left as they are.
  const two = { lines: ['- row', '  - a', '  - b'], chars: 0, total: 3, chunk: 1, frames: [], closed: [], mute: false };
  S.joinOnlyChild(two, { at: 0, chunk: 1, frames: 0, closed: 0 });
  assert.equal(two.lines.length, 3);
  const later = { lines: ['  - button "x"'], chars: 0, total: 1, chunk: 2, frames: [], closed: [], mute: false };
  S.joinOnlyChild(later, { at: -1, chunk: 1, frames: 0, closed: 0 });
  assert.equal(later.lines.length, 1);
});

// ---------------------------------------------------------------- 80-targets

test('matchSet: exact matches win over substrings, without case', () => {
  const items = ['Save', 'Save all', 'save'];
  eq(S.matchSet(items, 'SAVE', x => x), ['Save', 'save']);
  eq(S.matchSet(items, 'all', x => x), ['Save all']);
  eq(S.matchSet(items, 'none', x => x), []);
});

// ---------------------------------------------------------------- 90-actions

test('editableKind: text fields, contenteditable, not buttons', () => {
  assert.equal(S.editableKind(h('input', { type: 'email' })), 'input');
  assert.equal(S.editableKind(h('textarea')), 'input');
  assert.equal(S.editableKind(h('input', { type: 'checkbox' })), '');
  assert.equal(S.editableKind(h('div', { contenteditable: '' })), 'ce');
  assert.equal(S.editableKind(h('button')), '');
});

test('checkedOf: native, aria-checked, aria-pressed, none', () => {
  assert.equal(S.checkedOf(h('input', { type: 'checkbox', checked: '' })), true);
  assert.equal(S.checkedOf(h('div', { role: 'switch', 'aria-checked': 'false' })), false);
  assert.equal(S.checkedOf(h('button', { 'aria-pressed': 'true' })), true);
  assert.equal(S.checkedOf(h('button')), null);
});
