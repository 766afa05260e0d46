package rendezvous

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/platform"
)

func privateState(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := platform.EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRecordRoundTripIsPrivate(t *testing.T) {
	t.Parallel()
	state := privateState(t)
	r, err := NewRecord(4242)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Token) != 64 || len(r.Instance) != 32 {
		t.Fatalf("token %d hex digits, instance %d", len(r.Token), len(r.Instance))
	}
	if err := WriteRecord(state, r); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(Dir(state), RecordName))
	if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Fatalf("record mode %v, %v", st.Mode(), err)
	}
	if dst, _ := os.Stat(Dir(state)); dst.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v", dst.Mode())
	}
	got, err := ReadRecord(state)
	if err != nil || got != r {
		t.Fatalf("ReadRecord = %+v, %v", got, err)
	}
	other, _ := NewRecord(4243)
	RemoveRecord(state, other) // not ours: stays
	if _, err := ReadRecord(state); err != nil {
		t.Fatalf("another instance's removal took the record: %v", err)
	}
	RemoveRecord(state, r)
	if _, err := ReadRecord(state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after removal: %v", err)
	}
}

func TestRecordRefusals(t *testing.T) {
	t.Parallel()
	state := privateState(t)
	r, _ := NewRecord(4242)
	if err := WriteRecord(state, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(Dir(state), RecordName)
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dup := `{"v":1,"port":1,"token":"` + strings.Repeat("a", 64) + `","instance":"` + strings.Repeat("b", 32) + `","token":"` + strings.Repeat("c", 64) + `"}`
	write(dup)
	if _, err := ReadRecord(state); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("duplicated token member: %v", err)
	}
	write(`{"v":1,"port":1,"token":"short","instance":"` + strings.Repeat("b", 32) + `"}`)
	if _, err := ReadRecord(state); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("short token: %v", err)
	}
	write(`{"v":1,"port":1,"token":"` + strings.Repeat("a", 64) + `","instance":"` + strings.Repeat("b", 32) + `","extra":` + strings.Repeat(" ", maxRecord) + `1}`)
	if _, err := ReadRecord(state); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("oversized record: %v", err)
	}
	if err := WriteRecord(state, r); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o640)
	if _, err := ReadRecord(state); !errors.Is(err, ErrUnsafe) {
		t.Errorf("group-readable record: %v", err)
	}
	os.Chmod(path, 0o600)
	if os.Getuid() == 0 {
		os.Chown(path, 65534, 65534)
		if _, err := ReadRecord(state); !errors.Is(err, ErrUnsafe) {
			t.Errorf("record owned by another user: %v", err)
		}
		os.Chown(path, 0, 0)
	}
	os.Chmod(Dir(state), 0o755)
	if _, err := ReadRecord(state); err == nil {
		t.Error("a record in a directory others can list was read")
	}
}

func TestInstallRecord(t *testing.T) {
	t.Parallel()
	state := privateState(t)
	if err := WriteInstall(state, Install{Origin: "chrome-extension://*/"}); err == nil {
		t.Fatal("a wildcard origin was recorded")
	}
	origin := OriginOf(strings.Repeat("p", 32))
	if err := WriteInstall(state, Install{Origin: origin}); err != nil {
		t.Fatal(err)
	}
	in, err := ReadInstall(state)
	if err != nil || in.Origin != origin {
		t.Fatalf("ReadInstall = %+v, %v", in, err)
	}
}
