package install

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

func setup(t *testing.T) Options {
	t.Helper()
	root := t.TempDir()
	host := filepath.Join(root, "webcodex-bridge-host")
	if err := os.WriteFile(host, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	if err := platform.EnsurePrivateDir(state); err != nil {
		t.Fatal(err)
	}
	return Options{HostPath: host, ConfigDir: filepath.Join(root, "config"), StateDir: state}
}

func TestDefaultExtensionIDMatchesManifestKey(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Key         string   `json:"key"`
		Permissions []string `json:"permissions"`
		MinChrome   string   `json:"minimum_chrome_version"`
		External    any      `json:"externally_connectable"`
		Content     any      `json:"content_scripts"`
		Hosts       any      `json:"host_permissions"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	der, err := base64.StdEncoding.DecodeString(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	id := []byte(hex.EncodeToString(sum[:16]))
	for i, c := range id {
		if c >= 'a' {
			id[i] = 'a' + 10 + (c - 'a')
		} else {
			id[i] = 'a' + (c - '0')
		}
	}
	if string(id) != DefaultExtensionID {
		t.Fatalf("the manifest key gives id %s, DefaultExtensionID is %s", id, DefaultExtensionID)
	}
	if strings.Join(m.Permissions, ",") != "activeTab,debugger,nativeMessaging" || m.MinChrome != "118" || m.External != nil || m.Content != nil || m.Hosts != nil {
		t.Fatalf("manifest permissions %v, minimum Chrome %s, externally_connectable %v, content scripts %v, host permissions %v",
			m.Permissions, m.MinChrome, m.External, m.Content, m.Hosts)
	}
}

func TestInstallFreshAndIdentical(t *testing.T) {
	t.Parallel()
	opts := setup(t)
	res, err := Install(opts)
	if err != nil || res.Action != "installed" || res.Backup != "" {
		t.Fatalf("fresh install: %+v, %v", res, err)
	}
	want := filepath.Join(opts.ConfigDir, "chromium", "NativeMessagingHosts", wire.HostName+".json")
	if res.Manifest != want {
		t.Fatalf("manifest at %s, want %s", res.Manifest, want)
	}
	var m struct {
		Name    string   `json:"name"`
		Path    string   `json:"path"`
		Type    string   `json:"type"`
		Origins []string `json:"allowed_origins"`
	}
	raw, _ := os.ReadFile(res.Manifest)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != wire.HostName || m.Path != WrapperPath(opts.StateDir) || m.Type != "stdio" || len(m.Origins) != 1 || m.Origins[0] != "chrome-extension://"+DefaultExtensionID+"/" {
		t.Fatalf("manifest %+v", m)
	}
	in, err := rendezvous.ReadInstall(opts.StateDir)
	if err != nil || in.Origin != m.Origins[0] {
		t.Fatalf("installation record %+v, %v", in, err)
	}
	again, err := Install(opts)
	if err != nil || again.Action != "unchanged" || again.Backup != "" {
		t.Fatalf("identical re-install: %+v, %v", again, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(res.Manifest))
	if len(entries) != 1 {
		t.Fatalf("%d files beside the manifest after a re-install", len(entries))
	}
}

// TestWrapperNamesTheStateRoot: the host Chrome starts from the manifest
// gets the installer's state root in WEBCODEX_STATE_DIR whatever Chrome's
// environment (here: none at all), with its arguments intact, even for a
// state root whose path holds a quote and a space.
func TestWrapperNamesTheStateRoot(t *testing.T) {
	t.Parallel()
	opts := setup(t)
	opts.StateDir = filepath.Join(filepath.Dir(opts.StateDir), "it's a state")
	if err := platform.EnsurePrivateDir(opts.StateDir); err != nil {
		t.Fatal(err)
	}
	// The "host" reports what it was started with.
	if err := os.WriteFile(opts.HostPath, []byte("#!/bin/sh\nprintf '%s|%s|%s' \"$WEBCODEX_STATE_DIR\" \"$1\" \"$#\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ManifestState(opts.ConfigDir, "chromium", opts.StateDir) != "absent" {
		t.Fatal("a manifest before install")
	}
	res, err := Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Path string `json:"path"`
	}
	raw, _ := os.ReadFile(res.Manifest)
	json.Unmarshal(raw, &m)
	cmd := exec.Command(m.Path, "chrome-extension://"+DefaultExtensionID+"/", "--parent-window=0")
	cmd.Env = []string{} // Chrome's environment may name no state root at all
	out, err := cmd.Output()
	if want := opts.StateDir + "|chrome-extension://" + DefaultExtensionID + "/|2"; err != nil || string(out) != want {
		t.Fatalf("the wrapper started the host with %q (%v), want %q", out, err, want)
	}
	if st, err := os.Stat(m.Path); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("wrapper mode %v (%v), want 0700", st.Mode(), err)
	}
	if got := ManifestState(opts.ConfigDir, "chromium", opts.StateDir); got != "serves" {
		t.Fatalf("ManifestState after install = %s, want serves", got)
	}
	other := filepath.Join(t.TempDir(), "other-state")
	if got := ManifestState(opts.ConfigDir, "chromium", other); got != "other" {
		t.Fatalf("ManifestState for another state root = %s, want other", got)
	}
}

func TestInstallBacksUpAChangedManifest(t *testing.T) {
	t.Parallel()
	opts := setup(t)
	res, _ := Install(opts)
	old := []byte(`{"name":"com.webcodex.bridge","path":"/old/host","type":"stdio","allowed_origins":["chrome-extension://pppppppppppppppppppppppppppppppp/"]}`)
	os.WriteFile(res.Manifest, old, 0o644)
	up, err := Install(opts)
	if err != nil || up.Action != "updated" {
		t.Fatalf("update: %+v, %v", up, err)
	}
	sum := sha256.Sum256(old)
	if up.Backup != res.Manifest+".previous."+hex.EncodeToString(sum[:]) {
		t.Fatalf("backup named %s", filepath.Base(up.Backup))
	}
	if got, _ := os.ReadFile(up.Backup); string(got) != string(old) {
		t.Fatal("the backup does not hold the old bytes")
	}
	// The same old manifest again: its identical backup is reused.
	os.WriteFile(res.Manifest, old, 0o644)
	if again, err := Install(opts); err != nil || again.Backup != up.Backup {
		t.Fatalf("second update: %+v, %v", again, err)
	}
	// Another user id in the options installs that exact origin.
	opts.ExtensionID = strings.Repeat("b", 32)
	if r, err := Install(opts); err != nil || r.Origin != "chrome-extension://"+opts.ExtensionID+"/" {
		t.Fatalf("install for another id: %+v, %v", r, err)
	}
}

func TestInstallRefusals(t *testing.T) {
	t.Parallel()
	opts := setup(t)
	res, _ := Install(opts)

	// A conflicting backup stops the installation, the manifest untouched.
	old := []byte(`{"old":true}`)
	os.WriteFile(res.Manifest, old, 0o644)
	sum := sha256.Sum256(old)
	os.WriteFile(res.Manifest+".previous."+hex.EncodeToString(sum[:]), []byte("something else"), 0o644)
	if _, err := Install(opts); !errors.Is(err, ErrConflict) {
		t.Fatalf("conflicting backup: %v", err)
	}
	if got, _ := os.ReadFile(res.Manifest); string(got) != string(old) {
		t.Fatal("the manifest was replaced despite the conflict")
	}

	// A symbolic link in the manifest's place is refused, never followed.
	os.Remove(res.Manifest)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte(`{}`), 0o644)
	os.Symlink(target, res.Manifest)
	if _, err := Install(opts); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("symlinked manifest: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != `{}` {
		t.Fatal("the symlink's target was written")
	}
	os.Remove(res.Manifest)

	// Inputs are bounded.
	os.WriteFile(res.Manifest, make([]byte, MaxInput+1), 0o644)
	if _, err := Install(opts); !fsm.IsCode(err, fsm.LimitExceeded) {
		t.Fatalf("oversized manifest: %v", err)
	}
	os.Remove(res.Manifest)

	for name, o := range map[string]Options{
		"bad id":        {ExtensionID: "ABC", HostPath: opts.HostPath, StateDir: opts.StateDir},
		"wildcard id":   {ExtensionID: "*", HostPath: opts.HostPath, StateDir: opts.StateDir},
		"relative host": {HostPath: "webcodex-bridge-host", StateDir: opts.StateDir},
		"other browser": {Browser: "firefox", HostPath: opts.HostPath, StateDir: opts.StateDir, ConfigDir: opts.ConfigDir},
	} {
		if _, err := Install(o); !fsm.IsCode(err, fsm.InvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}

	// A missing native host is its own setup step: its next step says to
	// do it, not to install Chromium.
	missing := opts
	missing.HostPath = filepath.Join(t.TempDir(), "webcodex-bridge-host")
	_, err := Install(missing)
	if r, ok := fsm.AsRefusal(err); !ok || r.Code != fsm.RequiresSetup || !strings.Contains(r.Detail, "webcodex-bridge-host") || strings.Contains(strings.ToLower(r.Next), "chromium") {
		t.Errorf("missing host: %v (next %q): want requires_setup naming the host, its next not about Chromium", err, r.Next)
	}
}

func TestInstallIntoAProfile(t *testing.T) {
	t.Parallel()
	opts := setup(t)
	opts.UserDataDir = filepath.Join(t.TempDir(), "profile")
	res, err := Install(opts)
	if err != nil || res.Manifest != filepath.Join(opts.UserDataDir, "NativeMessagingHosts", wire.HostName+".json") {
		t.Fatalf("profile install: %+v, %v", res, err)
	}
}
