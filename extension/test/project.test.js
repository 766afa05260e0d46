import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clip, eventFrame, utf8Length } from '../src/project.js';
import { detachCode } from '../src/protocol.js';

test('clip never splits a surrogate pair and replaces lone surrogates', () => {
  assert.equal(clip('ab\u{1F600}', 3), 'ab');
  assert.equal(clip('a\ud800b', 10), 'a\ufffdb');
  assert.equal(clip('x\udc00', 10), 'x\ufffd');
  assert.equal(clip(42, 10), undefined);
  // What survives is strict I-JSON: no lone surrogate escape.
  assert.equal(/\\ud[89ab]/i.test(JSON.stringify({ v: clip('\ud83d', 5) })), false);
});

test('utf8Length counts bytes as UTF-8 does', () => {
  for (const s of ['', 'abc', 'é', '€', '\u{1F600}', 'a\u{1F600}é€']) {
    assert.equal(utf8Length(s), Buffer.byteLength(s), s);
  }
});

test('console arguments keep primitives, never object previews', () => {
  const f = eventFrame(3, 'Runtime.consoleAPICalled', {
    type: 'error', executionContextId: 9, stackTrace: { callFrames: [{}] },
    args: [{ type: 'string', value: 'hi' }, { type: 'object', className: 'Object', description: 'Object', preview: { properties: [{ name: 'password', value: 'hunter2' }] } }, { type: 'number', value: 1, description: '1' }],
  });
  assert.deepEqual(f, { t: 'ev', ch: 3, method: 'Runtime.consoleAPICalled', params: { type: 'error', executionContextId: 9, args: [{ type: 'string', value: 'hi' }, { type: 'object', description: 'Object' }, { type: 'number', value: 1, description: '1' }] } });
});

test('request ids are never clipped; error text is', () => {
  const id = 'R'.repeat(200);
  const f = eventFrame(1, 'Network.loadingFailed', { requestId: id, errorText: 'e'.repeat(500), canceled: false, type: 'XHR' });
  assert.equal(f.params.requestId, id);
  assert.equal(f.params.errorText.length, 200);
});

test('unknown Chrome detach reasons map to the generic code', () => {
  assert.equal(detachCode('target_closed'), 'debugger_target_closed');
  assert.equal(detachCode('canceled_by_user'), 'debugger_canceled_by_user');
  assert.equal(detachCode(undefined), 'debugger_detached');
  assert.equal(detachCode('replaced_with_devtools'), 'debugger_detached');
});
