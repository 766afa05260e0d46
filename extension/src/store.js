// A small key-value store on IndexedDB for the worker's state. The
// extension asks for no "storage" permission (its permissions are exactly
// activeTab, debugger and nativeMessaging), and IndexedDB needs none. It
// outlives a worker restart, which is all the worker needs: a new worker
// treats whatever it finds as belonging to a dead native port.
const DB = 'webcodex-bridge';
const STORE = 'kv';

export function idbStore(indexedDB) {
  let opened = null;
  const db = () => {
    if (!opened) {
      opened = new Promise((resolve, reject) => {
        const req = indexedDB.open(DB, 1);
        req.onupgradeneeded = () => req.result.createObjectStore(STORE);
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
    }
    return opened;
  };
  const run = async (mode, fn) => {
    const d = await db();
    return new Promise((resolve, reject) => {
      const tx = d.transaction(STORE, mode);
      const req = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req ? req.result : undefined);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  };
  return {
    // The same shape as chrome.storage.session's get and set.
    async get(key) {
      const v = await run('readonly', (s) => s.get(key));
      return v === undefined ? {} : { [key]: v };
    },
    async set(obj) {
      await run('readwrite', (s) => {
        let last = null;
        for (const [k, v] of Object.entries(obj)) last = s.put(v, k);
        return last;
      });
    },
  };
}
