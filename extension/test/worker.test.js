import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBridge, LINES } from '../src/bridge.js';
import { fakeChrome, deferred, settle } from './fake_chrome.js';

const TABS = {
  7: { url: 'https://shop.test/cart', title: 'Cart', targetId: 'TARGET7' },
  8: { url: 'chrome://settings/', title: 'Settings', targetId: 'TARGET8' },
  9: { url: 'https://other.test/', title: 'Other', targetId: 'TARGET9' },
  10: { url: 'file:///etc/passwd', title: 'file', targetId: 'TARGET10' },
};

function setup(opts = {}) {
  const chrome = fakeChrome({ tabs: TABS, ...opts });
  const bridge = createBridge(chrome, { storage: chrome.store });
  return { chrome, bridge };
}

const port = (chrome) => chrome.ports.at(-1);
const sentOf = (chrome, t) => port(chrome).sent.filter((m) => m.t === t);
const calls = (chrome, name) => chrome.calls.filter((c) => c[0] === name);

// shareAndOffer shares tab and has the Runner answer with an offer id.
async function shareAndOffer(chrome, bridge, tab, offer) {
  const res = await bridge.share(tab);
  assert.equal(res.ok, true, res.error);
  port(chrome).receive({ t: 'offered', tab, offer });
  await settle();
}

async function attach(chrome, tab, offer, ch, id = 100 + ch) {
  port(chrome).receive({ t: 'ctl', id, op: 'attach', offer, tab, ch });
  await settle();
  return port(chrome).sent.find((m) => m.t === 'res' && m.id === id);
}

test('Share sends an offer for an http(s) tab and attaches nothing', async () => {
  const { chrome, bridge } = setup();
  assert.equal((await bridge.status(7)).state, LINES.notShared);
  assert.equal(chrome.ports.length, 0, 'reading the state opened the native port');
  for (const tab of [8, 10, 999]) {
    const res = await bridge.share(tab);
    assert.equal(res.ok, false, `tab ${tab} was shareable`);
  }
  assert.equal((await bridge.share(7)).state, LINES.waiting);
  assert.deepEqual(sentOf(chrome, 'share'), [{ t: 'share', tab: 7, target: 'TARGET7', url: 'https://shop.test/cart', title: 'Cart' }]);
  assert.equal(calls(chrome, 'attach').length, 0, 'sharing attached the debugger');
  assert.equal(chrome.storageSnapshot().tabs[7].state, 'offered', 'consent was not recorded');
});

test('repeated Share keeps the existing offer', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  assert.equal((await bridge.share(7)).state, LINES.waiting);
  assert.equal((await bridge.share(7)).state, LINES.waiting);
  assert.equal(sentOf(chrome, 'share').length, 1, 'a second offer was sent');
  assert.equal(chrome.storageSnapshot().tabs[7].offer, 'offer-a');
  assert.ok((await attach(chrome, 7, 'offer-a', 1)).result, 'the kept offer no longer attaches');
  assert.equal((await bridge.share(7)).state, LINES.attached, 'Share on an attached tab changed it');
  assert.equal(sentOf(chrome, 'share').length, 1);
});

test('attach consumes exactly the offered tab and offer', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  for (const [tab, offer] of [[7, 'offer-b'], [9, 'offer-a'], [8, 'offer-a']]) {
    const res = await attach(chrome, tab, offer, 1, 200 + tab);
    assert.ok(res.error, `attach of tab ${tab} with ${offer} was accepted`);
  }
  assert.equal(calls(chrome, 'attach').length, 0);
  const res = await attach(chrome, 7, 'offer-a', 1);
  assert.equal(res.result.targetId, 'TARGET7');
  assert.deepEqual(calls(chrome, 'attach'), [['attach', 7, '1.3']]);
  assert.equal((await bridge.status(7)).state, LINES.attached);
  const again = await attach(chrome, 7, 'offer-a', 2, 300);
  assert.ok(again.error, 'an offer attached twice');
});

test('a detach between attach dispatch and completion leaves the tab detached and unshared', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  const hold = deferred();
  chrome.attachHold = hold;
  port(chrome).receive({ t: 'ctl', id: 1, op: 'attach', offer: 'offer-a', tab: 7, ch: 1 });
  await settle();
  assert.equal(calls(chrome, 'attach').length, 1, 'attach was not dispatched');
  assert.equal(chrome.storageSnapshot().tabs[7].state, 'attaching', 'ownership was not reserved before dispatch');
  // A second attach to the same tab while the first is pending is refused.
  port(chrome).receive({ t: 'ctl', id: 2, op: 'attach', offer: 'offer-a', tab: 7, ch: 2 });
  await settle();
  assert.ok(port(chrome).sent.find((m) => m.id === 2).error, 'a pending attach did not block a second one');
  // Chrome detaches (e.g. the person opened DevTools) before the promise settles.
  chrome.debugger.onDetach.fire({ tabId: 7 }, 'canceled_by_user');
  await settle();
  assert.deepEqual(sentOf(chrome, 'detached'), [{ t: 'detached', tab: 7, ch: 1, reason: 'debugger_canceled_by_user' }]);
  hold.resolve();
  await settle();
  const res = port(chrome).sent.find((m) => m.id === 1);
  assert.ok(res.error, 'the raced attach reported success');
  assert.equal(calls(chrome, 'detach').length, 1, 'the late attachment was not detached');
  assert.equal(chrome.debugger.attached.has(7), false);
  assert.equal((await bridge.status(7)).state, LINES.notShared);
  assert.equal(calls(chrome, 'attach').length, 1, 'a detach reason re-armed an attach');
});

test('Revoke invalidates consent before the asynchronous detach', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  const res = await bridge.revoke(7);
  assert.equal(res.state, LINES.notShared);
  const [detach] = calls(chrome, 'detach');
  assert.ok(detach, 'revoke did not detach');
  assert.equal(detach[2].tabs[7], undefined, 'consent was still stored when detach was dispatched');
  assert.deepEqual(sentOf(chrome, 'revoke'), [{ t: 'revoke', tab: 7 }]);
  // Commands on the revoked channel are refused, never forwarded.
  port(chrome).receive({ t: 'cmd', id: 5, ch: 1, method: 'Runtime.evaluate', params: { expression: '1' } });
  await settle();
  assert.ok(port(chrome).sent.find((m) => m.id === 5).error);
  assert.equal(calls(chrome, 'sendCommand').length, 0);
  // An offer not yet consumed is revoked too, with nothing to detach.
  await shareAndOffer(chrome, bridge, 9, 'offer-b');
  await bridge.revoke(9);
  assert.equal(calls(chrome, 'detach').length, 1);
  assert.equal(sentOf(chrome, 'revoke').length, 2);
});

test('native disconnect detaches everything and clears consent', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  await shareAndOffer(chrome, bridge, 9, 'offer-b');
  port(chrome).drop();
  await settle();
  assert.deepEqual(calls(chrome, 'detach').map((c) => c[1]), [7]);
  assert.deepEqual(chrome.storageSnapshot().tabs, {});
  assert.equal((await bridge.status(7)).state, LINES.disconnected);
  assert.equal((await bridge.status(9)).state, LINES.disconnected);
  // A reconnect is a new peer: the old offer does not attach.
  await bridge.share(9);
  await settle();
  const res = await attach(chrome, 9, 'offer-b', 3);
  assert.ok(res.error, 'an offer of the lost peer attached');
});

test('the worker forwards only the seven diagnostic events and page state, projected', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  const before = port(chrome).sent.length;
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Network.requestWillBeSent', {
    requestId: '1000.1', type: 'Fetch', documentURL: 'https://shop.test/cart',
    request: { url: 'https://api.shop.test/pay', method: 'POST', headers: { Cookie: 'sid=secret' }, postData: 'card=4111' },
    initiator: { stack: { callFrames: [] } },
  });
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Network.responseReceived', { requestId: '1000.1', response: { status: 402, headers: { 'Set-Cookie': 'x' } } });
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Runtime.exceptionThrown', { exceptionDetails: { text: 'Uncaught', url: 'https://shop.test/a.js', executionContextId: 3, stackTrace: { callFrames: [{}] }, exception: { description: 'Error: boom\n    at pay (https://shop.test/a.js:1:2)' } } });
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Network.dataReceived', { requestId: '1000.1', dataLength: 10 });
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Debugger.scriptParsed', { scriptId: '1' });
  chrome.debugger.onEvent.fire({ tabId: 9 }, 'Log.entryAdded', { entry: { text: 'not ours' } });
  chrome.debugger.onEvent.fire({ tabId: 7, sessionId: 'CHILD' }, 'Log.entryAdded', { entry: { text: 'child session' } });
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Page.frameAttached', { frameId: 'F2', parentFrameId: 'F1', stack: { callFrames: [{ url: 'x' }] } });
  const evs = port(chrome).sent.slice(before);
  assert.deepEqual(evs.map((m) => m.method), ['Network.requestWillBeSent', 'Network.responseReceived', 'Runtime.exceptionThrown', 'Page.frameAttached']);
  assert.deepEqual(evs[0].params, { requestId: '1000.1', type: 'Fetch', documentURL: 'https://shop.test/cart', request: { url: 'https://api.shop.test/pay', method: 'POST' } });
  assert.deepEqual(evs[1].params, { requestId: '1000.1', response: { status: 402 } });
  assert.deepEqual(evs[2].params.exceptionDetails.exception, { description: 'Error: boom' });
  assert.equal(evs[2].params.exceptionDetails.stackTrace, undefined);
  assert.deepEqual(evs[3].params, { frameId: 'F2', parentFrameId: 'F1' });
  assert.equal(JSON.stringify(evs).includes('secret'), false);
  assert.equal(JSON.stringify(evs).includes('4111'), false);
});

test('an event over 64 KiB becomes a bounded marker, never a disconnect', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  const before = port(chrome).sent.length;
  const big = '\u{1F600}'.repeat(500); // 1000 code units, 2000 bytes of UTF-8
  const args = Array.from({ length: 20 }, () => ({ type: 'string', value: big, description: big }));
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Runtime.consoleAPICalled', { type: 'log', executionContextId: 1, args });
  const aux = Object.fromEntries(Array.from({ length: 12 }, (_, i) => ['k' + i, 'x'.repeat(9000)]));
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Runtime.executionContextCreated', { context: { id: 1, auxData: aux } });
  chrome.debugger.onEvent.fire({ tabId: 7 }, 'Log.entryAdded', { entry: { source: 'other', level: 'info', text: 'after' } });
  const evs = port(chrome).sent.slice(before);
  assert.deepEqual(evs.map((m) => [m.method, m.params.method]), [
    ['WebCodex.eventsDiscarded', 'Runtime.consoleAPICalled'],
    ['WebCodex.eventsDiscarded', 'Runtime.executionContextCreated'],
    ['Log.entryAdded', undefined],
  ]);
  for (const m of evs) assert.ok(Buffer.byteLength(JSON.stringify(m)) <= 65536);
  assert.equal(port(chrome).disconnected, false);
  assert.equal((await bridge.status(7)).state, LINES.attached);
});

test('detach reasons map to fixed codes and never reattach', async () => {
  for (const [reason, code] of [['target_closed', 'debugger_target_closed'], ['canceled_by_user', 'debugger_canceled_by_user'], ['replaced_with_devtools', 'debugger_detached'], ['something_new', 'debugger_detached']]) {
    const { chrome, bridge } = setup();
    await shareAndOffer(chrome, bridge, 7, 'offer-a');
    await attach(chrome, 7, 'offer-a', 1);
    chrome.debugger.attached.delete(7);
    chrome.debugger.onDetach.fire({ tabId: 7 }, reason);
    await settle();
    assert.deepEqual(sentOf(chrome, 'detached'), [{ t: 'detached', tab: 7, ch: 1, reason: code }]);
    assert.equal((await bridge.status(7)).state, LINES.notShared);
    assert.equal(calls(chrome, 'attach').length, 1, `${reason} re-attached`);
  }
});

test('closing the shared tab reports tab_closed; closing an offered tab revokes the offer', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  await shareAndOffer(chrome, bridge, 9, 'offer-b');
  chrome.tabs.onRemoved.fire(7, {});
  chrome.tabs.onRemoved.fire(9, {});
  await settle();
  assert.deepEqual(sentOf(chrome, 'detached'), [{ t: 'detached', tab: 7, ch: 1, reason: 'tab_closed' }]);
  assert.deepEqual(sentOf(chrome, 'revoke'), [{ t: 'revoke', tab: 9 }]);
});

test('a restarted worker restores state from storage, detaches and clears consent', async () => {
  const store = new Map();
  const first = fakeChrome({ tabs: TABS, store });
  const bridge = createBridge(first, { storage: first.store });
  await shareAndOffer(first, bridge, 7, 'offer-a');
  await attach(first, 7, 'offer-a', 1);
  await shareAndOffer(first, bridge, 9, 'offer-b');
  // The worker stops; its native port died with it. A new worker starts
  // on the same session storage.
  const second = fakeChrome({ tabs: TABS, store });
  second.debugger.attached.add(7); // Chrome kept the debugger attached
  const restarted = createBridge(second, { storage: second.store });
  await restarted.loaded;
  assert.deepEqual(calls(second, 'detach').map((c) => c[1]), [7]);
  assert.deepEqual(second.storageSnapshot().tabs, {});
  assert.equal((await restarted.status(7)).state, LINES.disconnected);
  assert.equal(second.ports.length, 0, 'the restarted worker reconnected on its own');
  // Sharing again is a new peer and a new offer.
  await restarted.share(7);
  assert.equal(second.ports.length, 1);
  assert.equal(sentOf(second, 'share').length, 1);
});

test('commands go to the channel tab only; Browser and Target never; oversized results become errors', async () => {
  const { chrome, bridge } = setup();
  chrome.commandHandler = async (method, params) => (method === 'Page.captureScreenshot' ? { data: 'A'.repeat(4 * 1024 * 1024) } : { ok: method, params });
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  const p = port(chrome);
  p.receive({ t: 'cmd', id: 1, ch: 1, method: 'Runtime.evaluate', params: { expression: '1' } });
  p.receive({ t: 'cmd', id: 2, ch: 1, method: 'Browser.close', params: {} });
  p.receive({ t: 'cmd', id: 3, ch: 1, method: 'Target.createTarget', params: { url: 'https://x.test/' } });
  p.receive({ t: 'cmd', id: 4, ch: 2, method: 'Runtime.evaluate', params: {} });
  p.receive({ t: 'cmd', id: 5, ch: 1, method: 'Page.captureScreenshot', params: {} });
  await settle();
  const res = (id) => p.sent.find((m) => m.t === 'res' && m.id === id);
  assert.deepEqual(res(1).result, { ok: 'Runtime.evaluate', params: { expression: '1' } });
  for (const id of [2, 3, 4, 5]) assert.ok(res(id).error, `command ${id} was answered with a result`);
  assert.deepEqual(calls(chrome, 'sendCommand').map((c) => c[2]), ['Runtime.evaluate', 'Page.captureScreenshot']);
});

test('new_page opens a tab within an attached lease and close_page closes only such tabs', async () => {
  const { chrome, bridge } = setup();
  await shareAndOffer(chrome, bridge, 7, 'offer-a');
  await attach(chrome, 7, 'offer-a', 1);
  const p = port(chrome);
  p.receive({ t: 'ctl', id: 1, op: 'close_page', ch: 1 });
  p.receive({ t: 'ctl', id: 2, op: 'new_page', ch: 2, tab: 9 }); // tab 9 is not an attached lease
  await settle();
  assert.ok(p.sent.find((m) => m.id === 1).error, 'close_page closed the shared tab');
  assert.ok(p.sent.find((m) => m.id === 2).error, 'new_page without a lease');
  p.receive({ t: 'ctl', id: 3, op: 'new_page', ch: 2, tab: 7 });
  await settle();
  const res = p.sent.find((m) => m.id === 3);
  assert.ok(res.result && res.result.targetId, JSON.stringify(res));
  p.receive({ t: 'ctl', id: 4, op: 'close_page', ch: 2 });
  await settle();
  assert.deepEqual(p.sent.find((m) => m.id === 4).result, {});
  assert.deepEqual(calls(chrome, 'tabs.remove').map((c) => c[1]), [res.result.tab]);
  assert.equal(chrome.tabsById.has(7), true);
});

test('only the extension popup can ask the worker to share', async () => {
  const { chrome } = setup();
  const answers = [];
  const ask = (sender) => chrome.runtime.onMessage.fire({ op: 'share', tab: 7 }, sender, (r) => answers.push(r));
  assert.deepEqual(ask({ id: 'another-extension', url: 'chrome-extension://another/src/popup.html' }), [false]);
  assert.deepEqual(ask({ id: chrome.runtime.id, url: 'https://shop.test/' }), [false]);
  assert.deepEqual(ask({ id: chrome.runtime.id, url: chrome.runtime.getURL('src/popup.html') }), [true]);
  await settle();
  assert.equal(answers.length, 1);
  assert.equal(answers[0].state, LINES.waiting);
});
