// @ts-check
// Constants, the refusal codes and the registry of this document.
// A part of the page script: see 99-api.js.

const NAME_CAP = 100, VALUE_CAP = 80, TEXT_CAP = 160, MAX_LINES = 60000, MAX_SNAPS = 6;
// A run of at least FOLD_MIN same-shaped siblings shows FOLD_SAMPLES of
// them and one line for the rest; ROW_CAP bounds a row's joined cells.
const FOLD_MIN = 20, FOLD_SAMPLES = 2, ROW_CAP = 200, QUERY_MAX = 200;

// R is every refusal the script returns, as {err: R.x, ...counts}: the
// project's own codes (fsm/refusal.go), so Go maps none of them. A Go test
// keeps this set equal to the one Go decodes.
const R = Object.freeze({
  notFound: 'browser_element_not_found',
  hidden: 'browser_element_hidden',
  ambiguous: 'browser_element_ambiguous',
  disabled: 'browser_element_disabled',
  obscured: 'browser_element_obscured',
  stale: 'browser_binding_stale',
  invalid: 'invalid_argument',
});

const W = {
  nonce, // the wrapper's parameter: this document's nonce (99-api.js)
  nextId: 1,
  byId: new Map(),     // id -> {ref: WeakRef<Element>, role, name, path, rebound}
  idOf: new WeakMap(), // Element -> id
  snaps: new Map(),    // snapshot id -> Set of ids it listed
  frameKeys: new WeakMap(), // cross-origin <iframe> -> frame key set from Go
  frameEls: new Map(),      // frame key -> WeakRef of its <iframe>
  walks: new Map(),         // snapshot id -> paused outline walk
  folds: new Map(),         // snapshot id -> folded runs: [{els: WeakRef[], first, total}]
  closed: [],          // candidate hosts of closed shadow roots of the last snapshot
  pending: null,       // element of the action in progress
  vtWatch: 0,          // frames left to the view transition watch of a capture (96-reach.js)
  vtSeen: false,       // the watch saw a view transition
  /** @type {WeakRef<ShadowRoot>[]} */
  closedRoots: [],     // closed shadow roots Go found (closedRoot, 96-reach.js)
};
