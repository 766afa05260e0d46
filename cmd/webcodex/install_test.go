package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall: `make install` from this checkout puts both binaries,
// stamped with the checkout's commit, into the directory asked for (as it
// would into $(go env GOPATH)/bin): `webcodex --version` names the commit,
// and the bridge host carries the same revision.
func TestMakeInstall(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v (the test reads the checkout's commit: apt-get install -y git)", err)
	}
	commit := strings.TrimSpace(string(head))
	bindir := filepath.Join(t.TempDir(), "bin")
	cmd := exec.Command("make", "-C", root, "install", "BINDIR="+bindir)
	cmd.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")) // bindir is not on PATH: make says how to add it
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), bindir+" is not on PATH") {
		t.Errorf("make install did not say how to put %s on PATH:\n%s", bindir, out)
	}
	version, err := exec.Command(filepath.Join(bindir, "webcodex"), "--version").Output()
	if err != nil {
		t.Fatalf("webcodex --version: %v", err)
	}
	if !strings.Contains(string(version), "revision "+commit[:12]) {
		t.Fatalf("webcodex --version = %q, want the revision %s", version, commit[:12])
	}
	for _, bin := range []string{"webcodex", "webcodex-bridge-host"} {
		info, err := exec.Command("go", "version", "-m", filepath.Join(bindir, bin)).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		if !strings.Contains(string(info), "vcs.revision="+commit) && !strings.Contains(string(info), "linkedRevision="+commit) {
			t.Fatalf("%s carries no revision %s:\n%s", bin, commit, info)
		}
	}
}
