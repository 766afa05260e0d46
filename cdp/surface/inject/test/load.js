// @ts-check
// load assembles the page script as Go does (the files of inject/ in name
// order, inside the function of the nonce) and runs it in a fresh context
// whose globals are the tiny DOM of dom.js. Besides API it returns the
// script's own functions and tables named in `names`, for tests per
// function.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { makeDocument } = require('./dom.js');

const dir = path.join(__dirname, '..');

/** @returns {string[]} the script's files, in the order Go joins them */
function files() {
  return fs.readdirSync(dir).filter(n => n.endsWith('.js')).sort();
}

/**
 * @param {string[]} names functions and constants of the script to expose
 * @param {{nonce?: string, document?: any}} [opts]
 */
function load(names, opts = {}) {
  const doc = opts.document || makeDocument();
  const src = files().map(n => fs.readFileSync(path.join(dir, n), 'utf8')).join('\n');
  const body = "(function (nonce) {\n'use strict';\n" + src + '\nreturn { API, ' + names.join(', ') + ' };\n})';
  const ctx = vm.createContext({
    document: doc, window: {}, WeakRef, getComputedStyle: () => ({ cursor: 'auto' }),
    location: { href: 'http://127.0.0.1/' }, CSS: { escape: (/** @type {string} */ s) => s },
  });
  const fn = vm.runInContext(body, ctx, { filename: 'inject.js' });
  return fn(opts.nonce || 'n1');
}

module.exports = { load, files, dir };
