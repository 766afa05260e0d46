// Command webcodex-bridge-host is the Native Messaging host of the
// webcodex extension bridge: Chrome starts it for the extension, and it
// relays frames to the Runner (see package nativehost). `webcodex
// install-bridge` registers it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/extension/nativehost"
)

func main() {
	// Non-blocking stdin lets Go's poller interrupt the read when the
	// Runner's side ends, so the host exits at once.
	syscall.SetNonblock(0, true)
	stdin := os.NewFile(0, "stdin")
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	dir, err := localapi.StateDir()
	if err != nil {
		logf("webcodex-bridge-host: %v", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = nativehost.Run(ctx, nativehost.Options{Args: os.Args, Stdin: stdin, Stdout: os.Stdout, StateDir: dir, Logf: logf})
	if err != nil {
		logf("webcodex-bridge-host: %v", err)
		os.Exit(1)
	}
}
