// Event projection: the worker forwards only the events the Runner uses,
// each cut down to the fields it reads. Bodies, headers, cookies, object
// previews and stacks never leave the browser. An event that is still
// above the event limit becomes a bounded loss marker instead.
import { PROTOCOL } from './protocol.js';

// Display budgets, in UTF-16 code units, matching the Runner's (cdp/surface
// diag.go): entry text 1000, network error text 200. URLs keep 4096, which
// always holds the origin the Runner judges them by. Request ids are never
// clipped: they are how entries are matched.
const TEXT = 1000;
const URL_MAX = 4096;
const ERROR_TEXT = 200;
const STATE_STRING = 8192;
const MAX_ARGS = 20;
const STATE_DEPTH = 8;

const diagnostic = new Set(PROTOCOL.diagnosticEvents);
const state = new Set(PROTOCOL.stateEvents);

// clip shortens s to max code units without splitting a surrogate pair,
// and replaces lone surrogates (which strict I-JSON refuses) with U+FFFD.
export function clip(s, max) {
  if (typeof s !== 'string') return undefined;
  let out = s.length > max ? s.slice(0, max) : s;
  const last = out.charCodeAt(out.length - 1);
  if (out.length < s.length && last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  return wellFormed(out);
}

// wellFormed replaces lone surrogates with U+FFFD (String.prototype.
// toWellFormed, which Node 18 lacks).
function wellFormed(s) {
  if (!/[\ud800-\udfff]/.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += s[i] + s[i + 1];
        i++;
        continue;
      }
      out += '\ufffd';
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      out += '\ufffd';
    } else {
      out += s[i];
    }
  }
  return out;
}

// noStack keeps an error's description up to its stack: V8 appends the
// stack ("\n    at f (url:1:2)") to an Error's description.
function noStack(s) {
  if (typeof s !== 'string') return s;
  const i = s.search(/\n\s+at /);
  return i >= 0 ? s.slice(0, i) : s;
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v) => (typeof v === 'boolean' ? v : undefined);

// arg keeps what the Runner shows of a console argument: a primitive's
// value, else its description or type. Object values and previews stay.
function arg(a) {
  if (!a || typeof a !== 'object') return { type: 'undefined' };
  const out = { type: clip(a.type, 32) };
  if (typeof a.value === 'string') out.value = clip(a.value, TEXT);
  else if (typeof a.value === 'number' || typeof a.value === 'boolean') out.value = a.value;
  if (typeof a.unserializableValue === 'string') out.unserializableValue = clip(a.unserializableValue, 64);
  if (typeof a.description === 'string') out.description = clip(noStack(a.description), TEXT);
  return out;
}

const projections = {
  'Runtime.consoleAPICalled': (p) => ({
    type: clip(p.type, 32),
    executionContextId: num(p.executionContextId),
    args: Array.isArray(p.args) ? p.args.slice(0, MAX_ARGS).map(arg) : [],
  }),
  'Runtime.exceptionThrown': (p) => {
    const d = p.exceptionDetails || {};
    const out = { text: clip(d.text, TEXT), url: clip(d.url, URL_MAX), executionContextId: num(d.executionContextId) };
    if (d.exception && typeof d.exception.description === 'string') {
      out.exception = { description: clip(noStack(d.exception.description), TEXT) };
    }
    return { exceptionDetails: out };
  },
  'Log.entryAdded': (p) => {
    const e = p.entry || {};
    return { entry: { source: clip(e.source, 32), level: clip(e.level, 16), text: clip(e.text, TEXT), url: clip(e.url, URL_MAX), networkRequestId: clip(e.networkRequestId, 256) } };
  },
  'Network.requestWillBeSent': (p) => ({
    requestId: clip(p.requestId, 256),
    type: clip(p.type, 32),
    documentURL: clip(p.documentURL, URL_MAX),
    request: { url: clip(p.request && p.request.url, URL_MAX), method: clip(p.request && p.request.method, 16) },
  }),
  'Network.responseReceived': (p) => ({ requestId: clip(p.requestId, 256), response: { status: num(p.response && p.response.status) } }),
  'Network.loadingFinished': (p) => ({ requestId: clip(p.requestId, 256) }),
  'Network.loadingFailed': (p) => ({ requestId: clip(p.requestId, 256), errorText: clip(p.errorText, ERROR_TEXT), canceled: bool(p.canceled) }),
};

// stateCopy copies a page-state event (frames, lifecycle, contexts,
// dialogs) with stacks dropped and strings clipped.
function stateCopy(v, depth) {
  if (typeof v === 'string') return clip(v, STATE_STRING);
  if (typeof v !== 'object' || v === null) return typeof v === 'number' && !Number.isFinite(v) ? null : v;
  if (depth >= STATE_DEPTH) return undefined;
  if (Array.isArray(v)) return v.slice(0, 64).map((x) => stateCopy(x, depth + 1));
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'stack' || k === 'stackTrace') continue;
    const c = stateCopy(x, depth + 1);
    if (c !== undefined) out[k] = c;
  }
  return out;
}

// forwarded reports whether method is one the worker forwards.
export function forwarded(method) {
  return diagnostic.has(method) || state.has(method);
}

// utf8Length is the UTF-8 size of s (well-formed: lone surrogates were
// replaced).
export function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) { n += 4; i++; }
    else n += 3;
  }
  return n;
}

// eventFrame returns the message to send for a CDP event on channel ch, or
// null when the event is not forwarded. One above the event limit becomes
// the WebCodex.eventsDiscarded marker naming the event.
export function eventFrame(ch, method, params) {
  if (!forwarded(method)) return null;
  const p = params && typeof params === 'object' ? params : {};
  const projected = diagnostic.has(method) ? projections[method](p) : stateCopy(p, 0);
  const msg = { t: 'ev', ch, method, params: projected };
  const text = JSON.stringify(msg);
  if (utf8Length(text) <= PROTOCOL.maxEvent) return msg;
  return { t: 'ev', ch, method: PROTOCOL.discardedMethod, params: { method, count: 1 } };
}
