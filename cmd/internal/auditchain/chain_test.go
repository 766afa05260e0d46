package auditchain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type testRecord struct {
	Tool string `json:"tool"`
	Pad  string `json:"pad,omitempty"`
}

// chainOf writes n records and returns the head hash.
func chainOf(t *testing.T, dir string, n int) string {
	t.Helper()
	l := Open(dir)
	var head string
	for i := range n {
		h, err := l.Append(testRecord{Tool: "t" + fmtSeq(uint64(i+1))})
		if err != nil {
			t.Fatal(err)
		}
		head = h
	}
	return head
}

func readLines(t *testing.T, dir string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(t *testing.T, dir string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, FileName), bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func fixLastNewline(lines [][]byte) [][]byte {
	last := lines[len(lines)-1]
	if !bytes.HasSuffix(last, []byte("\n")) {
		lines[len(lines)-1] = append(append([]byte(nil), last...), '\n')
	}
	return lines
}

func wantBreak(t *testing.T, dir string, line int, reason string) {
	t.Helper()
	_, err := Verify(dir, "")
	be, ok := errors.AsType[*BreakError](err)
	if !ok {
		t.Fatalf("verify: %v, want a break at line %d", err, line)
	}
	if be.Line != line || !strings.Contains(be.Reason, reason) {
		t.Fatalf("verify: %v, want line %d (%s)", be, line, reason)
	}
}

// TestFreshChainVerifies: records appended from nothing verify, their seq
// runs from 1, and the head Append returned is the one Verify reports.
func TestFreshChainVerifies(t *testing.T) {
	dir := t.TempDir()
	if rep, err := Verify(dir, ""); err != nil || rep.Records != 0 {
		t.Fatalf("an empty trail: %+v, %v", rep, err)
	}
	head := chainOf(t, dir, 5)
	rep, err := Verify(dir, head)
	if err != nil || rep.Records != 5 || rep.First != 1 || rep.Head != head || rep.AfterHead != 0 {
		t.Fatalf("verify: %+v, %v (head %s)", rep, err, head)
	}
	if !bytes.Contains(readLines(t, dir)[0], []byte(`{"seq":1,"prev":"","tool":"t1","hash":"`)) {
		t.Fatalf("first record: %s", readLines(t, dir)[0])
	}
}

// TestTamperingDetectedAtThatRecord: editing, deleting, reordering or
// cutting out a run of records in the middle is reported at the record
// where it happened; cutting the start is reported at the new first line.
func TestTamperingDetectedAtThatRecord(t *testing.T) {
	cases := []struct {
		name   string
		tamper func([][]byte) [][]byte
		line   int
		reason string
	}{
		{"edit", func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"tool":"t3"`), []byte(`"tool":"t9"`), 1)
			return l
		}, 3, "edited"},
		{"delete", func(l [][]byte) [][]byte { return append(l[:2:2], l[3:]...) }, 3, "deleted, reordered or cut"},
		{"reorder", func(l [][]byte) [][]byte { l[2], l[3] = l[3], l[2]; return l }, 3, "deleted, reordered or cut"},
		{"cut in the middle", func(l [][]byte) [][]byte { return append(l[:1:1], l[4:]...) }, 2, "deleted, reordered or cut"},
		{"cut the start", func(l [][]byte) [][]byte { return l[2:] }, 1, "does not start here"},
		{"strip a hash", func(l [][]byte) [][]byte {
			l[1] = append(bytes.TrimSuffix(l[1], l[1][len(l[1])-hashSuffixLen-1:]), []byte("}\n")...)
			return l
		}, 2, "no hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			chainOf(t, dir, 6)
			writeLines(t, dir, fixLastNewline(c.tamper(readLines(t, dir))))
			wantBreak(t, dir, c.line, c.reason)
		})
	}
}

// TestRehashedEditDetectedAtNextRecord: an editor who also recomputes the
// edited record's hash is found at the record after it, whose prev no
// longer matches; only rewriting every later record too hides an edit, and
// then the head hash printed at detach or stop no longer matches.
func TestRehashedEditDetectedAtNextRecord(t *testing.T) {
	dir := t.TempDir()
	head := chainOf(t, dir, 4)
	lines := readLines(t, dir)
	body := func(i int) []byte {
		b, _, _ := unseal(bytes.TrimSuffix(lines[i], []byte("\n")))
		return b
	}
	forged, _ := seal(bytes.Replace(body(1), []byte(`"t2"`), []byte(`"tX"`), 1))
	lines[1] = append(forged, '\n')
	writeLines(t, dir, lines)
	wantBreak(t, dir, 3, "deleted, reordered or cut")
	// Rewrite the rest of the chain too: it verifies, but not against the
	// head printed before.
	for i := 2; i < len(lines); i++ {
		_, prevHash := seal(body(i - 1))
		re, _ := seal(replacePrev(t, body(i), prevHash))
		lines[i] = append(re, '\n')
	}
	writeLines(t, dir, lines)
	if _, err := Verify(dir, ""); err != nil {
		t.Fatalf("a fully rewritten chain: %v", err)
	}
	if _, err := Verify(dir, head); !errors.Is(err, ErrHeadNotFound) {
		t.Fatalf("against the printed head: %v, want ErrHeadNotFound", err)
	}
}

func replacePrev(t *testing.T, body []byte, prev string) []byte {
	t.Helper()
	i := bytes.Index(body, []byte(`"prev":"`))
	j := bytes.Index(body[i+8:], []byte(`"`))
	return append(append(append([]byte(nil), body[:i+8]...), prev...), body[i+8+j:]...)
}

// TestCutAtTheEndFoundAgainstHead: a trail cut after the head printed at
// detach or stop verifies on its own (a chain cannot know its own end) but
// not against that head; records appended after the head are counted.
func TestCutAtTheEndFoundAgainstHead(t *testing.T) {
	dir := t.TempDir()
	head := chainOf(t, dir, 4)
	if _, err := Open(dir).Append(testRecord{Tool: "later"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(dir, head); err != nil || rep.AfterHead != 1 {
		t.Fatalf("one record after the head: %+v, %v", rep, err)
	}
	lines := readLines(t, dir)
	writeLines(t, dir, lines[:2])
	if _, err := Verify(dir, ""); err != nil {
		t.Fatalf("a cut chain alone: %v", err)
	}
	if _, err := Verify(dir, head); !errors.Is(err, ErrHeadNotFound) {
		t.Fatalf("cut chain against the head: %v", err)
	}
}

// TestRotationAtMaxFileBytes: the trail rotates at the real MaxFileBytes,
// keeps at most two files, and the chain verifies across them; the oldest
// kept record may follow a dropped one only in audit.1.jsonl, so deleting
// that file is found.
func TestRotationAtMaxFileBytes(t *testing.T) {
	dir := t.TempDir()
	l := Open(dir)
	pad := strings.Repeat("p", 60<<10)
	rotations := 0
	var head string
	for i := 0; rotations < 2; i++ {
		h, err := l.Append(testRecord{Tool: "t", Pad: pad})
		if err != nil {
			t.Fatal(err)
		}
		head = h
		st, err := os.Stat(filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > MaxFileBytes {
			t.Fatalf("audit.jsonl is %d bytes, over its bound", st.Size())
		}
		if st.Size() < 64<<10 && i > 0 {
			rotations++
		}
	}
	rep, err := Verify(dir, head)
	if err != nil || rep.First <= 1 || rep.Head != head {
		t.Fatalf("after two rotations: %+v, %v", rep, err)
	}
	var total int64
	for _, n := range []string{FileName, RotatedName} {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total > 2*MaxFileBytes {
		t.Fatalf("the trail keeps %d bytes, over 2×MaxFileBytes", total)
	}
	if err := os.Remove(filepath.Join(dir, RotatedName)); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(dir, "")
	if be, ok := errors.AsType[*BreakError](err); !ok || be.File != FileName || be.Line != 1 {
		t.Fatalf("without audit.1.jsonl: %v", err)
	}
}

// TestRecordBound: a record whose line fills MaxRecordBytes exactly is
// written; one byte more is refused, never cut.
func TestRecordBound(t *testing.T) {
	dir := t.TempDir()
	l := Open(dir)
	head := chainOf(t, dir, 1)
	probe, _ := seal(bodyOf(link{seq: 1, hash: head}, []byte(`{"tool":"t","pad":""}`)))
	fits := strings.Repeat("p", MaxRecordBytes-1-len(probe))
	if _, err := l.Append(testRecord{Tool: "t", Pad: fits}); err != nil {
		t.Fatalf("a record at the bound: %v", err)
	}
	if _, err := l.Append(testRecord{Tool: "t", Pad: fits + "p"}); !errors.Is(err, ErrRecordTooLong) {
		t.Fatalf("a record past the bound: %v", err)
	}
	if rep, err := Verify(dir, ""); err != nil || rep.Records != 2 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

// TestUnchainedTrailSetAside: a trail written before chaining is kept
// beside a fresh chain, which verifies.
func TestUnchainedTrailSetAside(t *testing.T) {
	dir := t.TempDir()
	old := []byte(`{"tool":"launch","verdict":"allowed"}` + "\n")
	if err := os.WriteFile(filepath.Join(dir, FileName), old, 0o600); err != nil {
		t.Fatal(err)
	}
	chainOf(t, dir, 2)
	if b, err := os.ReadFile(filepath.Join(dir, UnchainedName)); err != nil || !bytes.Equal(b, old) {
		t.Fatalf("the old trail: %q, %v", b, err)
	}
	if rep, err := Verify(dir, ""); err != nil || rep.Records != 2 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

// TestConcurrentWritersKeepOneChain: two Logs on one state root (two
// processes: an embedded MCP Runner and the daemon) append through the lock
// file, and the chain holds.
func TestConcurrentWritersKeepOneChain(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for range 2 {
		l := Open(dir)
		wg.Go(func() {
			for range 100 {
				if _, err := l.Append(testRecord{Tool: "t"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if rep, err := Verify(dir, ""); err != nil || rep.Records != 200 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}
