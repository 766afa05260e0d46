// Package admincmd holds the verbs that look after webcodex itself rather
// than drive a browser through the Runner's local API: serve (the Runner
// daemon in the foreground), doctor, policy check and install-bridge. They
// live beside cli, not in it, because they link what the thin CLI must
// not: the Runner, the platform layer, the origin gate.
package admincmd
