// Package install writes the current user's Native Messaging manifest for
// the bridge's host, with one exact allowed_origins entry, and the
// installation record the host checks its caller against.
//
// It writes nothing else: no browser preference, no extension, no profile
// content, no system-wide manifest. A manifest that exists and differs is
// backed up first as NAME.json.previous.<sha256 of its bytes>: the whole
// bytes, published without replacing anything and synced before the
// manifest is replaced. An identical backup is reused; a different file
// under that name, a symbolic link in either place, or a failed backup
// stops the installation. Every input read is bounded to 64 KiB.
package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// DefaultExtensionID is the id of extension/ as shipped: its manifest's
// key fixes it (the first 32 hex digits of the key's SHA-256, 0-f mapped
// to a-p).
const DefaultExtensionID = "lbgchfdhfomgaekhbbampfjbpafcjdfk"

// MaxInput bounds every file the installer reads.
const MaxInput = 64 << 10

// Browsers the installer knows, by their user-level manifest directory
// under the config directory (where Chromium 156 and Chrome read
// NativeMessagingHosts manifests).
var Browsers = map[string]string{
	"chromium": "chromium",
	"chrome":   "google-chrome",
}

// Options configures Install.
type Options struct {
	Browser     string // chromium (default) or chrome; ignored with UserDataDir
	ExtensionID string // default DefaultExtensionID
	// UserDataDir installs into that profile's NativeMessagingHosts
	// instead of the browser's default (a test profile, or a browser run
	// with --user-data-dir).
	UserDataDir string
	HostPath    string // absolute path of webcodex-bridge-host
	ConfigDir   string // the user's config directory; empty is os.UserConfigDir
	// StateDir is the state root of the Runner the host serves (absolute):
	// the installation record goes there, and the manifest names a wrapper
	// there that starts the host with WEBCODEX_STATE_DIR set to it, so the
	// host Chrome starts finds this Runner whatever Chrome's environment.
	StateDir string
}

// Result says what Install did. Manifest and Backup are paths for the
// caller's own use; the CLI names only the file and the browser.
type Result struct {
	Action   string // installed, unchanged or updated
	Manifest string
	Backup   string // set when a changed manifest was backed up (or its backup reused)
	Origin   string
}

var idPattern = regexp.MustCompile(`^[a-p]{32}$`)

// ErrUnsafe is wrapped when a manifest or backup is a symbolic link or not
// a regular file.
var ErrUnsafe = errors.New("install: not a regular file")

// ErrConflict is wrapped when a backup name holds different bytes.
var ErrConflict = errors.New("install: a different backup exists")

// Install writes the manifest and the installation record.
func Install(opts Options) (Result, error) {
	if opts.ExtensionID == "" {
		opts.ExtensionID = DefaultExtensionID
	}
	if !idPattern.MatchString(opts.ExtensionID) {
		return Result{}, fsm.Refuse(fsm.InvalidArgument, "an extension id is 32 letters a to p (chrome://extensions shows it)")
	}
	if !filepath.IsAbs(opts.HostPath) {
		return Result{}, fsm.Refuse(fsm.InvalidArgument, "the native host's path must be absolute")
	}
	if st, err := os.Stat(opts.HostPath); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return Result{}, fsm.Refuse(fsm.RequiresSetup, "webcodex-bridge-host was not found beside webcodex: build it (make build) or pass --host").WithCause(err)
	}
	if !filepath.IsAbs(opts.StateDir) {
		return Result{}, fsm.Refuse(fsm.InvalidArgument, "the state directory must be absolute")
	}
	dir, err := manifestDir(opts)
	if err != nil {
		return Result{}, err
	}
	wrapper, err := writeWrapper(opts.StateDir, opts.HostPath)
	if err != nil {
		return Result{}, err
	}
	origin := rendezvous.OriginOf(opts.ExtensionID)
	body, err := json.MarshalIndent(map[string]any{
		"name":            wire.HostName,
		"description":     "webcodex extension bridge: relays one shared tab to the webcodex Runner",
		"path":            wrapper,
		"type":            "stdio",
		"allowed_origins": []string{origin},
	}, "", "  ")
	if err != nil {
		return Result{}, fmt.Errorf("install: %w", err)
	}
	body = append(body, '\n')
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Result{}, fmt.Errorf("install: manifest directory: %w", err)
	}
	res := Result{Manifest: filepath.Join(dir, wire.HostName+".json"), Origin: origin}
	old, err := readBounded(res.Manifest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Action = "installed"
	case err != nil:
		return Result{}, err
	case bytes.Equal(old, body):
		res.Action = "unchanged"
	default:
		res.Action = "updated"
		if res.Backup, err = backup(res.Manifest, old); err != nil {
			return Result{}, err
		}
	}
	if res.Action != "unchanged" {
		if err := replace(res.Manifest, body); err != nil {
			return Result{}, err
		}
	}
	if err := rendezvous.WriteInstall(opts.StateDir, rendezvous.Install{Origin: origin}); err != nil {
		return Result{}, err
	}
	return res, nil
}

// WrapperPath is the host wrapper install writes for the Runner whose state
// root is stateDir; the manifest names it as the host.
func WrapperPath(stateDir string) string {
	return filepath.Join(rendezvous.Dir(stateDir), rendezvous.HostWrapperName)
}

// wrapperScript starts host with WEBCODEX_STATE_DIR set to stateDir. exec
// keeps the process id, so the host's parent is still the browser (the
// host checks it).
func wrapperScript(stateDir, host string) []byte {
	return []byte("#!/bin/sh\n# Written by webcodex install-bridge: the native host serves the Runner whose state is here.\n" +
		"WEBCODEX_STATE_DIR=" + shellQuote(stateDir) + " exec " + shellQuote(host) + " \"$@\"\n")
}

// shellQuote quotes s for sh: single quotes, each ' written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeWrapper writes the host wrapper (0700, whole, through a rename) in
// the state root's private bridge directory and returns its path.
func writeWrapper(stateDir, host string) (string, error) {
	dir := rendezvous.Dir(stateDir)
	if err := platform.EnsurePrivateDir(dir); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".webcodex-host-*")
	if err != nil {
		return "", fmt.Errorf("install: wrapper: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(wrapperScript(stateDir, host))
	if err == nil {
		err = f.Chmod(0o700)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, WrapperPath(stateDir))
	}
	if err != nil {
		return "", fmt.Errorf("install: wrapper: %w", err)
	}
	return WrapperPath(stateDir), nil
}

// ManifestState says whether the native messaging manifest of browser
// (chromium or chrome) under configDir (empty: os.UserConfigDir) starts the
// host for the Runner whose state root is stateDir: "serves" when its path
// is that Runner's wrapper, "absent" when there is no manifest, "other"
// when it starts a host for another state root (or an older install that
// named the host itself, which then reads Chrome's environment).
func ManifestState(configDir, browser, stateDir string) string {
	dir, err := manifestDir(Options{Browser: browser, ConfigDir: configDir})
	if err != nil {
		return "absent"
	}
	data, err := readBounded(filepath.Join(dir, wire.HostName+".json"))
	if err != nil {
		return "absent"
	}
	var m struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(data, &m) != nil || m.Path != WrapperPath(stateDir) {
		return "other"
	}
	return "serves"
}

func manifestDir(opts Options) (string, error) {
	if opts.UserDataDir != "" {
		abs, err := filepath.Abs(opts.UserDataDir)
		if err != nil {
			return "", fsm.Refuse(fsm.InvalidArgument, "the user data directory is not a valid path")
		}
		return filepath.Join(abs, "NativeMessagingHosts"), nil
	}
	name := opts.Browser
	if name == "" {
		name = "chromium"
	}
	sub, ok := Browsers[name]
	if !ok {
		return "", fsm.Refuse(fsm.InvalidArgument, "--browser is chromium or chrome (other Chromium-family browsers need their own registration)")
	}
	cfg := opts.ConfigDir
	if cfg == "" {
		var err error
		if cfg, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("install: config directory: %w", err)
		}
	}
	return filepath.Join(cfg, sub, "NativeMessagingHosts"), nil
}

// readBounded reads a regular file (never through a symbolic link) of at
// most MaxInput bytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fsm.Refuse(fsm.ProfileUnsafe, "the native messaging manifest is a symbolic link; remove it and install again").WithCause(ErrUnsafe)
		}
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fsm.Refuse(fsm.ProfileUnsafe, "the native messaging manifest is not a regular file").WithCause(ErrUnsafe)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("install: read: %w", err)
	}
	if len(data) > MaxInput {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the existing manifest is above %d KiB; move it away and install again", MaxInput>>10)
	}
	return data, nil
}

// backup publishes old as NAME.previous.<sha256>, whole and synced, without
// replacing anything; an identical existing backup is reused.
func backup(manifest string, old []byte) (string, error) {
	sum := sha256.Sum256(old)
	path := manifest + ".previous." + hex.EncodeToString(sum[:])
	have, err := readBounded(path)
	switch {
	case err == nil && bytes.Equal(have, old):
		return path, nil // reused
	case err == nil:
		return "", fsm.Refuse(fsm.ProfileUnsafe, "a different file holds the backup's name; move it away and install again").WithCause(ErrConflict)
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("install: backup: %w", err)
	}
	if _, err := f.Write(old); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("install: backup: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("install: backup: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("install: backup: %w", err)
	}
	return path, syncDir(filepath.Dir(path))
}

// replace writes body to path through a synced temporary file and a
// rename, so the manifest is never half written.
func replace(path string, body []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".webcodex-manifest-*")
	if err != nil {
		return fmt.Errorf("install: write: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o644); err == nil {
		_, err = f.Write(body)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			return fmt.Errorf("install: write: %w", err)
		}
	} else {
		f.Close()
		return fmt.Errorf("install: write: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("install: sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("install: sync: %w", err)
	}
	return nil
}

// Installed reports whether the installation record exists and is valid
// (the manifest itself lives in the browser's directory, which the Runner
// does not search).
func Installed(stateDir string) bool {
	_, err := rendezvous.ReadInstall(stateDir)
	return err == nil
}
