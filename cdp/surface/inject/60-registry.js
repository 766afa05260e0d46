// @ts-check
// The element registry behind refs.
// A part of the page script: see 99-api.js.

// Each ref keeps its element's parent and element index there: enough
// to find a re-rendered replacement in the same place (rebind).
function refFor(el, role, name, index) {
  let id = W.idOf.get(el);
  const parent = el.parentNode;
  if (index < 0 && parent) index = Array.prototype.indexOf.call(parent.children, el);
  if (id === undefined) {
    id = W.nextId++;
    W.idOf.set(el, id);
    W.byId.set(id, { ref: new WeakRef(el), role, name, parent: parent && new WeakRef(parent), index, tag: el.localName, rebound: false });
  } else {
    const e = W.byId.get(id);
    e.role = role; e.name = name; e.index = index;
    if (!e.parent || e.parent.deref() !== parent) e.parent = parent && new WeakRef(parent);
  }
  return id;
}

function forgetUnreachable() {
  // Entries whose element is gone and that no kept snapshot lists.
  const live = new Set();
  for (const s of W.snaps.values()) for (const id of s) live.add(id);
  for (const [id, e] of W.byId) if (!live.has(id) && !e.ref.deref()) W.byId.delete(id);
}
