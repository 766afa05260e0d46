// @ts-check
// Text: normalizing, capping and quoting.
// A part of the page script: see 99-api.js.

const VIS = { visibilityProperty: true };
const INDENT = [];
for (let i = 0; i < 64; i++) INDENT.push('  '.repeat(i) + '- ');
const norm = s => (s == null ? '' : String(s)).replace(/\s+/g, ' ').trim();
const cap = (s, n) => (s.length > n ? s.slice(0, n - 1) + '\u2026' : s);
const quote = s => JSON.stringify(s);
const chars = s => Array.from(s).length;
