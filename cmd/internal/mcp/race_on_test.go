//go:build race

package mcp

// raceBuild makes TestMain build the server with the race detector too, so
// the server's own goroutines are checked while the tests drive it.
const raceBuild = true
