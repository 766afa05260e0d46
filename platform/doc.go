// Package platform answers operating-system questions for webcodex: where
// Chromium is installed, how to launch and reap its process tree, which
// process a PID or a listening socket really is, and whether a profile
// directory is private and free to use.
//
// The package holds no state across calls: every answer is read fresh from
// the operating system, and a [Process] owns only the browser it launched.
// Linux is supported; on other systems every function that needs OS facts
// returns a [fsm.RouteUnavailable] refusal wrapping [errors.ErrUnsupported].
//
// Nothing here logs. Errors and refusal details never carry ports,
// WebSocket URLs or profile paths; internal causes that do are attached
// with [fsm.Refusal.WithCause] and stay in this process.
package platform
