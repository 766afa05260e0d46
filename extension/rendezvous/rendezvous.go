// Package rendezvous reads and writes the two private records the bridge's
// processes find each other by, under browser/extension in the state root:
// the Runner's rendezvous record (its loopback port, a fresh 256-bit token
// and an instance id) and the installation record (the one extension
// origin the native host serves).
//
// Both files are written whole (temporary file, fsync, rename) with mode
// 0600 in a 0700 directory, and read only when they are regular files (not
// symbolic links) owned by this user, unreadable by others, in a private
// directory. The token never leaves these files except to authenticate the
// native host: it is never logged, shown or sent to the extension.
package rendezvous

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// File names inside Dir.
const (
	RecordName  = "rendezvous.json"
	InstallName = "install.json"
	HostRunName = "host-run.json"
	// HostWrapperName is the executable install-bridge registers as the
	// native host: it names this state root (WEBCODEX_STATE_DIR) for the
	// host, whatever environment Chrome starts it in.
	HostWrapperName = "webcodex-bridge-host"
)

// HostRun is what the native host records of its last start: when, and how
// it ended its checks (one of the HostOutcome values). It holds no token,
// port, origin or path.
type HostRun struct {
	V       int    `json:"v"`
	At      int64  `json:"at"` // Unix seconds
	Outcome string `json:"outcome"`
}

// The outcomes of a native host's start.
const (
	HostConnected     = "connected"     // the Runner accepted the handshake
	HostNotInstalled  = "not_installed" // no valid installation record here
	HostWrongOrigin   = "wrong_origin"  // the caller is not the installed extension
	HostNotBrowser    = "parent_not_browser"
	HostRunnerAbsent  = "runner_absent" // no Runner record, or nothing listened
	HostHandshakeFail = "handshake_failed"
)

// WriteHostRun records the native host's last start, in a bridge directory
// that exists already (a host started for a state root no Runner or
// installer made creates nothing there).
func WriteHostRun(stateDir string, r HostRun) error {
	if err := platform.CheckPrivateDir(Dir(stateDir)); err != nil {
		return err
	}
	r.V = wire.Version
	return writePrivate(stateDir, HostRunName, r)
}

// ReadHostRun reads the native host's last start.
func ReadHostRun(stateDir string) (HostRun, error) {
	var r HostRun
	if err := readPrivate(stateDir, HostRunName, &r); err != nil {
		return HostRun{}, err
	}
	if r.V != wire.Version || r.Outcome == "" {
		return HostRun{}, fmt.Errorf("rendezvous: %w: the host record is not valid", wire.ErrMalformed)
	}
	return r, nil
}

// maxRecord bounds a record file.
const maxRecord = 4 << 10

// Dir is the bridge's directory in the state root.
func Dir(stateDir string) string { return filepath.Join(stateDir, "browser", "extension") }

// Record is what a Runner publishes for the native host.
type Record struct {
	V        int    `json:"v"`
	Port     int    `json:"port"`
	Token    string `json:"token"`    // 64 hex digits; secret
	Instance string `json:"instance"` // 32 hex digits: this Runner's listener
}

// Install is what install-bridge records: the extension origin the native
// host serves, exactly as Chrome passes it (chrome-extension://ID/).
type Install struct {
	V      int    `json:"v"`
	Origin string `json:"origin"`
}

// originPattern is an extension origin: 32 letters a-p, with the trailing
// slash Chrome's allowed_origins and argv[1] carry.
var originPattern = regexp.MustCompile(`^chrome-extension://[a-p]{32}/$`)

// ValidOrigin reports whether s is an exact extension origin.
func ValidOrigin(s string) bool { return originPattern.MatchString(s) }

// OriginOf returns the origin of extension id.
func OriginOf(id string) string { return "chrome-extension://" + id + "/" }

// NewRecord mints a record for a listener on port: a fresh token and
// instance id from crypto/rand.
func NewRecord(port int) (Record, error) {
	var tok [wire.TokenBytes]byte
	var inst [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return Record{}, fmt.Errorf("rendezvous: token: %w", err)
	}
	if _, err := rand.Read(inst[:]); err != nil {
		return Record{}, fmt.Errorf("rendezvous: instance: %w", err)
	}
	return Record{V: wire.Version, Port: port, Token: hex.EncodeToString(tok[:]), Instance: hex.EncodeToString(inst[:])}, nil
}

// WriteRecord publishes r in stateDir, replacing an older one.
func WriteRecord(stateDir string, r Record) error {
	return writePrivate(stateDir, RecordName, r)
}

// RemoveRecord removes the record if it is still r's (a newer Runner's
// record is left alone).
func RemoveRecord(stateDir string, r Record) {
	if cur, err := ReadRecord(stateDir); err == nil && cur.Instance == r.Instance {
		os.Remove(filepath.Join(Dir(stateDir), RecordName))
	}
}

// ReadRecord reads and checks the Runner's record.
func ReadRecord(stateDir string) (Record, error) {
	var r Record
	if err := readPrivate(stateDir, RecordName, &r); err != nil {
		return Record{}, err
	}
	if r.V != wire.Version || r.Port <= 0 || r.Port > 65535 || !isHex(r.Token, 2*wire.TokenBytes) || !isHex(r.Instance, 32) {
		return Record{}, fmt.Errorf("rendezvous: %w: the record is not a version 1 record", wire.ErrMalformed)
	}
	return r, nil
}

// WriteInstall records the extension origin the host serves.
func WriteInstall(stateDir string, in Install) error {
	if !ValidOrigin(in.Origin) {
		return fsm.Refuse(fsm.InvalidArgument, "an extension id is 32 letters a to p")
	}
	in.V = wire.Version
	return writePrivate(stateDir, InstallName, in)
}

// ReadInstall reads and checks the installation record.
func ReadInstall(stateDir string) (Install, error) {
	var in Install
	if err := readPrivate(stateDir, InstallName, &in); err != nil {
		return Install{}, err
	}
	if in.V != wire.Version || !ValidOrigin(in.Origin) {
		return Install{}, fmt.Errorf("rendezvous: %w: the installation record is not valid", wire.ErrMalformed)
	}
	return in, nil
}

func writePrivate(stateDir, name string, v any) error {
	dir := Dir(stateDir)
	if err := platform.EnsurePrivateDir(dir); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("rendezvous: encode: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("rendezvous: write: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	// CreateTemp makes the file 0600.
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("rendezvous: write: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("rendezvous: write: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("rendezvous: write: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rendezvous: write: %w", err)
	}
	return nil
}

// ErrUnsafe is wrapped by the error for a record that is a symbolic link,
// not a regular file, owned by another user or readable by others.
var ErrUnsafe = errors.New("rendezvous: the record is not private")

func readPrivate(stateDir, name string, v any) error {
	dir := Dir(stateDir)
	if err := platform.CheckPrivateDir(dir); err != nil {
		return err
	}
	f, err := platform.OpenNoFollow(filepath.Join(dir, name))
	if err != nil {
		if errors.Is(err, platform.ErrLink) {
			return fmt.Errorf("%w: a symbolic link", ErrUnsafe)
		}
		return fmt.Errorf("rendezvous: read: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("rendezvous: read: %w", err)
	}
	switch {
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: not a regular file", ErrUnsafe)
	case !platform.OwnedByMe(f):
		return fmt.Errorf("%w: owned by another user", ErrUnsafe)
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: readable or writable by others", ErrUnsafe)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return fmt.Errorf("rendezvous: read: %w", err)
	}
	if len(data) > maxRecord {
		return fmt.Errorf("rendezvous: %w: the record is too large", wire.ErrMalformed)
	}
	// The same strict I-JSON as the wire: a duplicated token member must
	// not be read two ways.
	if err := wire.Validate(data); err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("rendezvous: %w: the record does not decode", wire.ErrMalformed)
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && s == string(bytes.ToLower([]byte(s)))
}
