// The extension's service-worker logic, written against an injected
// `chrome` so tests can run it with a fake one (test/fake_chrome.js).
//
// Consent is per tab and lives in the worker's store (IndexedDB: the
// extension has no "storage" permission; see store.js), mirrored in memory
// and written before anything acts on it:
//
//   (none) --Share--> offered --Runner attach ctl--> attaching --debugger
//   attached--> attached --revoke | detach | tab closed | native lost-->
//   (none)
//
// Sharing only sends an offer; the debugger is attached only when the
// Runner consumes that exact offer. Ownership of a tab is reserved (state
// attaching, persisted) before chrome.debugger.attach is dispatched, and
// anything that ends consent while the attach is in flight makes the
// worker detach again when it completes. Revoke removes consent before
// its asynchronous detach. A native disconnect, or a worker that restarts
// (its native port died with it), detaches everything and clears consent:
// a reconnect is a new peer and needs a new Share.
import { PROTOCOL, detachCode } from './protocol.js';
import { clip, eventFrame, utf8Length } from './project.js';

const KEY = 'webcodex';
const CONNECT_TIMEOUT_MS = 5000;

// Domains the worker never forwards, whatever the Runner asks: they act on
// the browser, other targets or the profile. The Runner's own table is
// narrower still; this is the last line.
const DENIED_DOMAINS = new Set(['Browser', 'Target', 'SystemInfo', 'Storage', 'Extensions', 'Tethering', 'PWA', 'BluetoothEmulation', 'DeviceAccess', 'FedCm']);

// State lines the popup shows.
export const LINES = {
  notShared: 'not shared',
  waiting: 'waiting for attach',
  attached: 'attached',
  disconnected: 'disconnected',
};

function emptyState() {
  // link: none (never connected) | connecting | connected | disconnected
  return { link: 'none', gen: 0, tabs: {} };
}

// opts.storage is the worker's store (store.js in the extension; a Map in
// tests), with chrome.storage.session's get/set shape.
export function createBridge(chrome, opts) {
  const now = opts.now || (() => Date.now());
  const storage = opts.storage;
  let st = emptyState();
  let port = null;
  let connecting = null; // promise of the connection in progress

  const persist = () => storage.set({ [KEY]: JSON.parse(JSON.stringify(st)) });

  const send = (msg) => {
    if (!port || st.link !== 'connected') return false;
    try {
      port.postMessage(msg);
      return true;
    } catch {
      return false;
    }
  };

  const detachQuietly = (tabId) => chrome.debugger.detach({ tabId }).catch(() => {});

  // A worker that starts with stored consent lost its native port when its
  // predecessor stopped: nothing of that peer is valid any more.
  const loaded = (async () => {
    const got = await storage.get(KEY);
    const prev = got && got[KEY];
    if (!prev) return;
    st = { link: prev.link === 'none' ? 'none' : 'disconnected', gen: prev.gen || 0, tabs: {} };
    const stale = Object.entries(prev.tabs || {});
    await persist();
    await Promise.all(stale.filter(([, e]) => e.state !== 'offered').map(([id]) => detachQuietly(Number(id))));
  })();

  const entryOfChannel = (ch) => {
    for (const [id, e] of Object.entries(st.tabs)) {
      if (e.ch === ch && e.gen === st.gen) return [Number(id), e];
    }
    return [null, null];
  };

  const expireOffers = () => {
    for (const [id, e] of Object.entries(st.tabs)) {
      if (e.state === 'offered' && now() - e.at >= PROTOCOL.offerTTLms) delete st.tabs[id];
    }
  };

  const lineFor = (tabId) => {
    expireOffers();
    const e = st.tabs[tabId];
    if (e && (e.state === 'offered' || e.state === 'attaching')) return LINES.waiting;
    if (e && e.state === 'attached') return LINES.attached;
    if (st.link === 'disconnected') return LINES.disconnected;
    return LINES.notShared;
  };

  const reply = (id, result, error) => {
    let msg = error ? { t: 'res', id, error } : { t: 'res', id, result: result || {} };
    if (!error) {
      const text = JSON.stringify(msg);
      // A result above the response limit would make the Runner close the
      // whole peer; answer with an error instead.
      if (text.length > PROTOCOL.maxResponse / 3 && utf8Length(text) > PROTOCOL.maxResponse) {
        msg = { t: 'res', id, error: { code: -32002, message: 'the response is above the bridge limit of 4 MiB' } };
      }
    }
    send(msg);
  };

  const errorOf = (e) => ({ code: -32000, message: clip(String((e && e.message) || e), 1000) || 'failed' });

  // ---------------------------------------------------------------- link

  const onPortMessage = (p, m) => {
    if (p !== port || !m || typeof m !== 'object') return;
    switch (m.t) {
      case 'ready':
        if (m.v === PROTOCOL.version) {
          st.link = 'connected';
          persist();
        }
        break;
      case 'offered': {
        const e = st.tabs[m.tab];
        if (e && e.state === 'offered' && e.gen === st.gen && !e.offer) {
          e.offer = m.offer;
          persist();
        }
        break;
      }
      case 'ended': {
        // The offer expired unconsumed, or was refused when shared (16
        // offers already wait): either way the tab is no longer shared.
        const e = st.tabs[m.tab];
        if (e && e.state === 'offered' && (m.reason === 'offer_refused' ? !e.offer : e.offer === m.offer)) {
          delete st.tabs[m.tab];
          persist();
        }
        break;
      }
      case 'cmd':
        command(m);
        break;
      case 'ctl':
        control(m);
        break;
    }
  };

  const onPortDisconnect = (p) => {
    void chrome.runtime.lastError; // read, so Chrome does not report it unchecked
    if (p !== port) return;
    port = null;
    const tabs = st.tabs;
    st.tabs = {};
    st.link = 'disconnected';
    persist();
    for (const [id, e] of Object.entries(tabs)) {
      if (e.state !== 'offered') detachQuietly(Number(id));
    }
  };

  // connect opens the native port once and waits for the Runner's ready.
  const connect = () => {
    if (port && st.link === 'connected') return Promise.resolve(true);
    if (connecting) return connecting;
    connecting = new Promise((resolve) => {
      let p;
      try {
        p = chrome.runtime.connectNative(PROTOCOL.hostName);
      } catch {
        resolve(false);
        return;
      }
      port = p;
      st.gen += 1; // a new peer: nothing of an older one carries over
      st.link = 'connecting';
      persist();
      const timer = setTimeout(() => {
        if (port === p && st.link !== 'connected') p.disconnect();
        onPortDisconnect(p);
        resolve(false);
      }, CONNECT_TIMEOUT_MS);
      p.onMessage.addListener((m) => {
        onPortMessage(p, m);
        if (m && m.t === 'ready' && port === p) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      p.onDisconnect.addListener(() => {
        clearTimeout(timer);
        onPortDisconnect(p);
        resolve(false);
      });
    }).finally(() => {
      connecting = null;
    });
    return connecting;
  };

  // ------------------------------------------------------------ commands

  const command = async (m) => {
    const [tabId, e] = entryOfChannel(m.ch);
    if (!e || e.state !== 'attached') return reply(m.id, null, { code: -32001, message: 'no such channel' });
    const domain = String(m.method).split('.')[0];
    if (DENIED_DOMAINS.has(domain)) return reply(m.id, null, { code: -32601, message: 'not forwarded by the extension' });
    const p = port;
    let result;
    try {
      result = await chrome.debugger.sendCommand({ tabId }, m.method, m.params || {});
    } catch (err) {
      if (p === port) reply(m.id, null, errorOf(err));
      return;
    }
    if (p === port) reply(m.id, result);
  };

  // attachTab reserves tabId for channel ch, attaches the debugger and
  // reports whether the attachment stands: anything that ended the
  // reservation meanwhile (a detach, revoke, closed tab or lost link)
  // makes it detach again.
  const attachTab = async (tabId, ch, extra) => {
    const gen = st.gen;
    const entry = { ...(st.tabs[tabId] || {}), ...extra, state: 'attaching', ch, gen };
    st.tabs[tabId] = entry;
    await persist(); // ownership is durable before the attach is dispatched
    try {
      await chrome.debugger.attach({ tabId }, '1.3');
    } catch (err) {
      if (st.tabs[tabId] === entry) {
        delete st.tabs[tabId];
        await persist();
      }
      return errorOf(err);
    }
    if (st.tabs[tabId] !== entry || entry.state !== 'attaching' || st.gen !== gen) {
      await detachQuietly(tabId);
      return { code: -32003, message: 'the share ended while attaching' };
    }
    entry.state = 'attached';
    await persist();
    return null;
  };

  const targetOf = async (tabId) => {
    const all = await chrome.debugger.getTargets();
    return all.find((t) => t.tabId === tabId && t.type === 'page') || null;
  };

  const control = async (m) => {
    switch (m.op) {
      case 'attach': {
        const e = st.tabs[m.tab];
        if (!e || e.state !== 'offered' || e.offer !== m.offer || e.gen !== st.gen) {
          return reply(m.id, null, { code: -32004, message: 'no such offer' });
        }
        const [, taken] = entryOfChannel(m.ch);
        if (taken) return reply(m.id, null, { code: -32005, message: 'the channel is in use' });
        const err = await attachTab(m.tab, m.ch, { offer: null });
        if (err) return reply(m.id, null, err);
        const t = await targetOf(m.tab);
        return reply(m.id, { targetId: t ? t.id : e.target, url: clip(t ? t.url : '', 4096), title: clip(t ? t.title : '', 200) });
      }
      case 'detach': {
        const [tabId, e] = entryOfChannel(m.ch);
        if (!e) return reply(m.id, {});
        e.state = 'detaching'; // blocks a new Share until the detach is done
        await persist();
        await detachQuietly(tabId);
        if (st.tabs[tabId] === e) {
          delete st.tabs[tabId];
          await persist();
        }
        return reply(m.id, {});
      }
      case 'targets': {
        const [tabId, e] = entryOfChannel(m.ch);
        if (!e || e.state !== 'attached') return reply(m.id, null, { code: -32001, message: 'no such channel' });
        const t = await targetOf(tabId);
        const infos = t ? [{ targetId: t.id, type: 'page', title: clip(t.title, 200), url: clip(t.url, 4096), attached: true }] : [];
        return reply(m.id, { targetInfos: infos });
      }
      case 'new_page': {
        // Opens a tab for an attached lease (m.tab names its shared tab);
        // the new tab's consent is that lease's, no wider.
        const parent = st.tabs[m.tab];
        if (!parent || parent.state !== 'attached' || parent.gen !== st.gen) return reply(m.id, null, { code: -32001, message: 'no such lease' });
        const [, taken] = entryOfChannel(m.ch);
        if (taken) return reply(m.id, null, { code: -32005, message: 'the channel is in use' });
        let tab;
        try {
          tab = await chrome.tabs.create({ url: 'about:blank', active: false });
        } catch (err) {
          return reply(m.id, null, errorOf(err));
        }
        const err = await attachTab(tab.id, m.ch, { child: true, parent: m.tab, at: now() });
        if (err) return reply(m.id, null, err);
        const t = await targetOf(tab.id);
        return reply(m.id, { targetId: t ? t.id : '', tab: tab.id });
      }
      case 'close_page': {
        const [tabId, e] = entryOfChannel(m.ch);
        if (!e || !e.child) return reply(m.id, null, { code: -32006, message: 'only a tab opened by new_page can be closed' });
        delete st.tabs[tabId];
        await persist();
        await detachQuietly(tabId);
        try {
          await chrome.tabs.remove(tabId);
        } catch (err) {
          return reply(m.id, null, errorOf(err));
        }
        return reply(m.id, {});
      }
    }
    return reply(m.id, null, { code: -32601, message: 'unknown control' });
  };

  // --------------------------------------------------------- chrome events

  chrome.debugger.onEvent.addListener((source, method, params) => {
    if (!source || source.sessionId) return; // child sessions are never forwarded
    const e = st.tabs[source.tabId];
    if (!e || !e.ch || e.gen !== st.gen || (e.state !== 'attached' && e.state !== 'attaching')) return;
    const frame = eventFrame(e.ch, method, params);
    if (frame) send(frame);
  });

  chrome.debugger.onDetach.addListener((source, reason) => {
    const e = source && st.tabs[source.tabId];
    if (!e || e.state === 'offered' || e.state === 'detaching') return;
    delete st.tabs[source.tabId];
    persist();
    if (e.gen === st.gen) send({ t: 'detached', tab: source.tabId, ch: e.ch, reason: detachCode(reason) });
  });

  chrome.tabs.onRemoved.addListener((tabId) => {
    const e = st.tabs[tabId];
    if (!e) return;
    delete st.tabs[tabId];
    persist();
    if (e.gen !== st.gen) return;
    if (e.ch) send({ t: 'detached', tab: tabId, ch: e.ch, reason: 'tab_closed' });
    else send({ t: 'revoke', tab: tabId });
  });

  // -------------------------------------------------------- popup actions

  const share = async (tabId) => {
    await loaded;
    if (!Number.isInteger(tabId)) return { ok: false, error: 'no tab', state: LINES.notShared };
    expireOffers();
    const have = st.tabs[tabId];
    if (have) {
      if (have.state === 'detaching') return { ok: false, error: 'the tab is being released; share again in a moment', state: LINES.notShared };
      return { ok: true, state: lineFor(tabId) }; // repeated Share keeps the offer
    }
    const t = await targetOf(tabId);
    if (!t || !/^https?:\/\//.test(t.url || '')) return { ok: false, error: 'only http and https tabs can be shared', state: lineFor(tabId) };
    if (!(await connect())) return { ok: false, error: 'webcodex is not running or not installed (webcodex install-bridge)', state: lineFor(tabId) };
    if (st.tabs[tabId]) return { ok: true, state: lineFor(tabId) };
    st.tabs[tabId] = { state: 'offered', offer: null, ch: null, gen: st.gen, target: t.id, at: now() };
    await persist(); // consent is recorded before the offer leaves
    send({ t: 'share', tab: tabId, target: t.id, url: clip(t.url, 4096), title: clip(t.title || '', 200) });
    return { ok: true, state: lineFor(tabId) };
  };

  const revoke = async (tabId) => {
    await loaded;
    const gone = [];
    for (const [id, e] of Object.entries(st.tabs)) {
      if (Number(id) === tabId || (e.child && e.parent === tabId)) {
        gone.push([Number(id), e]);
        delete st.tabs[id];
      }
    }
    if (gone.length === 0) return { ok: true, state: lineFor(tabId) };
    await persist(); // consent is gone before the asynchronous detach
    for (const [id, e] of gone) {
      if (e.gen === st.gen) send({ t: 'revoke', tab: id });
    }
    await Promise.all(gone.filter(([, e]) => e.state !== 'offered').map(([id]) => detachQuietly(id)));
    return { ok: true, state: lineFor(tabId) };
  };

  const status = async (tabId) => {
    await loaded;
    return { ok: true, state: lineFor(tabId) };
  };

  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    // Only the extension's own popup may ask; web pages cannot reach this
    // listener (no externally_connectable), and content scripts do not
    // exist.
    if (!sender || sender.id !== chrome.runtime.id || !String(sender.url || '').startsWith(chrome.runtime.getURL('src/popup.html'))) return false;
    const act = { share, revoke, status }[msg && msg.op];
    if (!act) return false;
    act(msg.tab).then(sendResponse, (err) => sendResponse({ ok: false, error: String(err), state: LINES.notShared }));
    return true;
  });

  return { share, revoke, status, loaded, state: () => st };
}
