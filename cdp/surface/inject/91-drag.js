// @ts-check
// Drags: whether the page started a drag and took a drop, seen from this
// world (its listeners see the page's own events, after the page's
// handlers decided: the event objects are read once the input was
// delivered).
// A part of the page script: see 99-api.js.

/** @type {{start: Event|null, drop: Event|null} | null} */
let DRAG = null;

function dragSeen(/** @type {Event} */ e) { if (DRAG && !DRAG.start) DRAG.start = e; }
function dropSeen(/** @type {Event} */ e) { if (DRAG) DRAG.drop = e; }

// armDrag starts watching for a dragstart and a drop in this document.
function armDrag() {
  DRAG = { start: null, drop: null };
  window.addEventListener('dragstart', dragSeen, true);
  window.addEventListener('drop', dropSeen, true);
  return {};
}

// dragState reports what the watch saw: a drag the page started (its
// dragstart not cancelled) and a drop it received. done ends the watch.
function dragState(/** @type {{done?: boolean}} */ a) {
  const d = DRAG;
  const out = { started: !!(d && d.start && !d.start.defaultPrevented), dropped: !!(d && d.drop) };
  if (a.done) {
    window.removeEventListener('dragstart', dragSeen, true);
    window.removeEventListener('drop', dropSeen, true);
    DRAG = null;
  }
  return out;
}
