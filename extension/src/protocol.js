// Wire protocol v1 as the extension sees it. The object between the
// markers is JSON: a Go test (extension/wire) reads it and compares every
// value with the Go side, so the two cannot drift.
// PROTOCOL-BEGIN
export const PROTOCOL = {
  "version": 1,
  "hostName": "com.webcodex.bridge",
  "maxCommand": 262144,
  "maxResponse": 4194304,
  "maxEvent": 65536,
  "offerTTLms": 600000,
  "discardedMethod": "WebCodex.eventsDiscarded",
  "ops": ["attach", "detach", "targets", "new_page", "close_page"],
  "reasons": ["debugger_target_closed", "debugger_canceled_by_user", "debugger_detached", "native_disconnected", "explicit_revoke", "tab_closed"],
  "diagnosticEvents": ["Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded", "Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished", "Network.loadingFailed"],
  "stateEvents": ["Page.lifecycleEvent", "Page.frameNavigated", "Page.navigatedWithinDocument", "Page.frameStartedLoading", "Page.frameStoppedLoading", "Page.frameAttached", "Page.frameDetached", "Page.javascriptDialogOpening", "Page.javascriptDialogClosed", "Runtime.executionContextCreated", "Runtime.executionContextDestroyed", "Runtime.executionContextsCleared"]
};
// PROTOCOL-END

// Chrome's detach reasons (chrome.debugger.onDetach) mapped to the fixed
// codes. Anything else, including reasons a later Chrome adds, is the
// generic code. No reason permits reattaching.
export function detachCode(chromeReason) {
  switch (chromeReason) {
    case 'target_closed': return 'debugger_target_closed';
    case 'canceled_by_user': return 'debugger_canceled_by_user';
    default: return 'debugger_detached';
  }
}
