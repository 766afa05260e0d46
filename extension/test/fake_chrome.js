// A hand-written fake of the chrome.* APIs the worker uses: enough to
// drive it without a browser, recording every call. The real extension is
// driven in real Chromium by the Go end-to-end test.

export class Event {
  constructor() {
    this.listeners = [];
  }
  addListener(fn) {
    this.listeners.push(fn);
  }
  removeListener(fn) {
    this.listeners = this.listeners.filter((l) => l !== fn);
  }
  fire(...args) {
    return this.listeners.map((l) => l(...args));
  }
}

export class FakePort {
  constructor(chrome, name) {
    this.chrome = chrome;
    this.name = name;
    this.sent = [];
    this.onMessage = new Event();
    this.onDisconnect = new Event();
    this.disconnected = false;
  }
  postMessage(msg) {
    if (this.disconnected) throw new Error('Attempting to use a disconnected port object');
    // What Chrome does: the message is serialized on the way out.
    this.sent.push(JSON.parse(JSON.stringify(msg)));
  }
  disconnect() {
    this.disconnected = true;
  }
  // receive delivers a message from the host (the Runner).
  receive(msg) {
    this.onMessage.fire(msg);
  }
  // drop is the host exiting: Chrome sets lastError and fires onDisconnect.
  drop(message = 'Native host has exited.') {
    this.disconnected = true;
    this.chrome.runtime.lastError = { message };
    this.onDisconnect.fire(this);
    this.chrome.runtime.lastError = undefined;
  }
}

// deferred is a promise the test settles by hand.
export function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function fakeChrome(opts = {}) {
  const store = opts.store || new Map(); // survives a worker restart when shared
  const calls = [];
  const chrome = {
    calls,
    store,
    // tabs by id: {id, url, title, targetId}
    tabsById: new Map(Object.entries(opts.tabs || {}).map(([id, t]) => [Number(id), { id: Number(id), ...t }])),
    ports: [],
    attachHold: null, // set to a deferred to hold the next attach
    commandHandler: async () => ({}),
    runtime: {
      id: 'lbgchfdhfomgaekhbbampfjbpafcjdfk',
      lastError: undefined,
      getURL: (p) => 'chrome-extension://lbgchfdhfomgaekhbbampfjbpafcjdfk/' + p,
      onMessage: new Event(),
      connectNative(name) {
        calls.push(['connectNative', name]);
        const p = new FakePort(chrome, name);
        chrome.ports.push(p);
        if (opts.autoReady !== false) queueMicrotask(() => p.receive({ t: 'ready', v: 1 }));
        return p;
      },
    },
    // The worker's store (IndexedDB in the extension, store.js), backed by
    // a Map: the extension has no chrome.storage permission.
    store: {
      async get(key) {
        return store.has(key) ? { [key]: JSON.parse(store.get(key)) } : {};
      },
      async set(obj) {
        for (const [k, v] of Object.entries(obj)) store.set(k, JSON.stringify(v));
      },
    },
    debugger: {
      onEvent: new Event(),
      onDetach: new Event(),
      attached: new Set(),
      async getTargets() {
        return [...chrome.tabsById.values()].map((t) => ({ id: t.targetId, tabId: t.id, type: 'page', url: t.url, title: t.title, attached: chrome.debugger.attached.has(t.id) }));
      },
      async attach(target, version) {
        calls.push(['attach', target.tabId, version]);
        const hold = chrome.attachHold;
        chrome.attachHold = null;
        if (hold) await hold.promise;
        if (!chrome.tabsById.has(target.tabId)) throw new Error('No tab with given id ' + target.tabId + '.');
        chrome.debugger.attached.add(target.tabId);
      },
      async detach(target) {
        calls.push(['detach', target.tabId, chrome.storageSnapshot()]);
        if (!chrome.debugger.attached.delete(target.tabId)) throw new Error('Debugger is not attached to the tab with id: ' + target.tabId + '.');
      },
      async sendCommand(target, method, params) {
        calls.push(['sendCommand', target.tabId, method]);
        if (!chrome.debugger.attached.has(target.tabId)) throw new Error('Debugger is not attached to the tab with id: ' + target.tabId + '.');
        return chrome.commandHandler(method, params, target);
      },
    },
    tabs: {
      onRemoved: new Event(),
      async create(props) {
        const id = 1000 + chrome.tabsById.size;
        chrome.tabsById.set(id, { id, url: props.url, title: '', targetId: 'T' + id });
        calls.push(['tabs.create', id]);
        return { id };
      },
      async remove(id) {
        calls.push(['tabs.remove', id]);
        chrome.tabsById.delete(id);
      },
      async query() {
        return [];
      },
    },
    // storageSnapshot is the stored state as the worker last wrote it.
    storageSnapshot() {
      return store.has('webcodex') ? JSON.parse(store.get('webcodex')) : null;
    },
    // Chrome closing a tab: the debugger is detached with target_closed
    // first, then the tab is removed.
    closeTab(id) {
      if (chrome.debugger.attached.delete(id)) chrome.debugger.onDetach.fire({ tabId: id }, 'target_closed');
      chrome.tabsById.delete(id);
      chrome.tabs.onRemoved.fire(id, { windowId: 1, isWindowClosing: false });
    },
  };
  return chrome;
}

// settle lets pending promise callbacks (storage writes, awaited attaches)
// run.
export async function settle(rounds = 20) {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}
