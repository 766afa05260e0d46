package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/install"
	"github.com/webcodex/webcodex/extension/rendezvous"
)

// TestBridgeStatusSaysWhyNoHost: with the bridge installed and listening
// but no native host connected, bridge status says why, from the host's
// record of its last start and from the installed manifest: never started,
// found no Runner, connected then left, and a manifest written for another
// state directory (the WEBCODEX_STATE_DIR case). No browser is needed: the
// host's record is what the real host writes (extension/nativehost tests).
func TestBridgeStatusSaysWhyNoHost(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config")) // the manifest's directory
	state := filepath.Join(root, "state")
	host := filepath.Join(root, "webcodex-bridge-host")
	if err := os.WriteFile(host, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Install(install.Options{HostPath: host, StateDir: state}); err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, Options{StateDir: state})
	why := func(want string) {
		t.Helper()
		st, err := r.BridgeStatus(context.Background(), struct{}{})
		if err != nil || !st.Listening || st.Connected != 0 || !strings.Contains(st.Why, want) || st.Next == "" {
			t.Fatalf("bridge status = %+v, %v; want listening, no host, why containing %q and a next step", st, err, want)
		}
		if strings.Contains(st.Why+st.Next, root) {
			t.Fatalf("bridge status names a path: %+v", st)
		}
	}
	why("no native host has started for this Runner")

	rendezvous.WriteHostRun(state, rendezvous.HostRun{At: time.Now().Unix(), Outcome: rendezvous.HostRunnerAbsent})
	why("found no Runner listening")

	rendezvous.WriteHostRun(state, rendezvous.HostRun{At: time.Now().Unix(), Outcome: rendezvous.HostConnected})
	why("has since disconnected")

	// install-bridge run again for another state directory: Chrome now
	// starts a host that serves another Runner.
	other := filepath.Join(root, "other-state")
	if _, err := install.Install(install.Options{HostPath: host, StateDir: other}); err != nil {
		t.Fatal(err)
	}
	why("starts a host for another state directory")
}
