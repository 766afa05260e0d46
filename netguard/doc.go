// Package netguard is the network boundary of a browser webcodex owns: the
// egress proxy that is its only way out under an allowlist (Proxy),
// request interception that fails what the origin gate denies
// (Interceptor), and the download jail its files land in (Jail). Each is
// started by the Runner for one browser and stopped with it; none knows
// the Runner, the local API or the command line.
package netguard
