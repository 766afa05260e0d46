// The service worker: every listener is registered at the top level, on
// the first turn, so Chrome can wake the worker for any of them.
import { createBridge } from './bridge.js';
import { idbStore } from './store.js';

const bridge = createBridge(chrome, { storage: idbStore(indexedDB) });

// The popup's actions, also reachable by a test driving the worker over
// CDP (Runtime.evaluate in the service worker target).
globalThis.webcodex = { share: bridge.share, revoke: bridge.revoke, status: bridge.status };
