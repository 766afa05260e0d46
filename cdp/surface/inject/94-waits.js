// @ts-check
// Condition waits and DOM settling.
// A part of the page script: see 99-api.js.

function check(a) {
  const c = a.cond;
  if (c === 'text' || c === 'text_gone') {
    const t = (document.body || document.documentElement).innerText || '';
    const has = t.includes(a.text);
    return c === 'text' ? (has ? { found: true } : null) : (has ? null : { found: true });
  }
  if (c === 'load') return document.readyState === 'complete' ? { found: true } : null;
  if (c === 'hidden') {
    const els = find(a.target);
    if (els.err) return els;
    const vis = els.filter(visible).length;
    return vis === 0 ? { found: true, count: els.length } : null;
  }
  if (c === 'visible' || c === 'enabled') {
    const r = resolve(a.target);
    if (r.err === R.ambiguous || r.err === R.invalid || r.err === R.stale) return r;
    if (r.err) return null;
    if (c === 'enabled' && isDisabled(r.el)) return null;
    return { found: true };
  }
  return { err: R.invalid, detail: 'unknown condition' };
}

function wait(a) {
  const first = check(a);
  if (first) return first;
  return new Promise(resolveP => {
    let done = false;
    const roots = [document];
    for (const el of allElements()) if (el.shadowRoot) roots.push(el.shadowRoot);
    const observers = [];
    const finish = v => {
      if (done) return;
      done = true;
      for (const o of observers) o.disconnect();
      clearTimeout(timer);
      document.removeEventListener('transitionend', onEvent, true);
      document.removeEventListener('animationend', onEvent, true);
      window.removeEventListener('load', onEvent, true);
      document.removeEventListener('readystatechange', onEvent, true);
      resolveP(v);
    };
    let scheduled = false;
    const onEvent = () => {
      if (scheduled || done) return;
      scheduled = true;
      // Coalesce a burst of mutations into one check.
      queueMicrotask(() => {
        scheduled = false;
        const v = check(a);
        if (v) finish(v);
      });
    };
    for (const r of roots) {
      const o = new MutationObserver(onEvent);
      o.observe(r, { subtree: true, childList: true, attributes: true, characterData: true });
      observers.push(o);
    }
    document.addEventListener('transitionend', onEvent, true);
    document.addEventListener('animationend', onEvent, true);
    window.addEventListener('load', onEvent, true);
    document.addEventListener('readystatechange', onEvent, true);
    const timer = setTimeout(() => finish({ found: false }), Math.max(0, a.timeout | 0));
  });
}

// settle resolves once the DOM has been quiet for quietMs, or at maxMs.
function settle(a) {
  return new Promise(resolveP => {
    let quiet = null;
    const o = new MutationObserver(() => { clearTimeout(quiet); quiet = setTimeout(done(true), a.quietMs); });
    const done = ok => () => { o.disconnect(); clearTimeout(quiet); clearTimeout(capTimer); resolveP({ settled: ok }); };
    o.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    quiet = setTimeout(done(true), a.quietMs);
    const capTimer = setTimeout(done(false), a.maxMs);
  });
}
