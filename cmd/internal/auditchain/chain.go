// Package auditchain keeps the audit trail as a hash chain: every record
// carries the SHA-256 of the one before (prev) and of itself (hash), so an
// edit, a deletion, a reordering or a cut in the middle is found at the
// record where it happened, and a cut at the end is found against a head
// hash printed earlier (detach and stop print it). It knows nothing of what
// a record says; the Runner writes them (cmd/internal/runner/audit.go).
//
// A record is one JSON line: {"seq":N,"prev":"HEX",…the record…,"hash":"HEX"},
// where hash is the SHA-256 of the line without its ,"hash":"…" member.
// The first record ever written has seq 1 and prev "".
package auditchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Files of the chain in the state root.
const (
	FileName    = "audit.jsonl"   // the records being appended to
	RotatedName = "audit.1.jsonl" // the file before it, once it reached MaxFileBytes
	// UnchainedName keeps a trail written before records were chained; a
	// new chain starts beside it.
	UnchainedName = "audit.unchained.jsonl"
	lockName      = "audit.lock"
)

// Bounds of the trail.
const (
	// MaxFileBytes bounds audit.jsonl: the record that would pass it goes
	// to a fresh file, the full one becomes audit.1.jsonl and the one that
	// was there is dropped. The trail keeps at most 2×MaxFileBytes, and the
	// chain runs across the two files (the fresh file's first record names
	// the full one's last).
	MaxFileBytes = 16 << 20
	// MaxRecordBytes bounds one record's line; a longer record is refused
	// (ErrRecordTooLong), never cut.
	MaxRecordBytes = 64 << 10
)

// ErrRecordTooLong reports a record over MaxRecordBytes.
var ErrRecordTooLong = errors.New("auditchain: record longer than its bound")

// Log appends records to the chain in one state root. Appends from several
// processes sharing the root are serialized by a lock file; within one
// process by the Log's mutex.
type Log struct {
	dir      string
	maxBytes int64
	mu       sync.Mutex
}

// Open returns the chain kept in dir.
func Open(dir string) *Log { return &Log{dir: dir, maxBytes: MaxFileBytes} }

// link is where a chain stands: the last record's sequence number and hash.
type link struct {
	seq  uint64
	hash string
}

// Append writes rec, a value marshalling to a JSON object, as the chain's
// next record and returns the new head hash.
func (l *Log) Append(rec any) (string, error) {
	obj, err := json.Marshal(rec)
	if err != nil || len(obj) < 2 || obj[0] != '{' {
		return "", fmt.Errorf("auditchain: a record is a JSON object: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lf, err := os.OpenFile(filepath.Join(l.dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", fmt.Errorf("auditchain: lock: %w", err)
	}
	defer lf.Close()
	if err := lockFile(lf); err != nil {
		return "", err
	}
	cur := filepath.Join(l.dir, FileName)
	at, size, err := l.head(cur)
	if err != nil {
		return "", err
	}
	line, hash := seal(bodyOf(at, obj))
	if len(line)+1 > MaxRecordBytes {
		return "", ErrRecordTooLong
	}
	if size > 0 && size+int64(len(line))+1 > l.maxBytes {
		if err := os.Rename(cur, filepath.Join(l.dir, RotatedName)); err != nil {
			return "", fmt.Errorf("auditchain: rotate: %w", err)
		}
	}
	f, err := os.OpenFile(cur, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", fmt.Errorf("auditchain: open: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return "", fmt.Errorf("auditchain: write: %w", err)
	}
	return hash, nil
}

// head finds where the chain stands and the current file's size: its last
// record, else the rotated file's, else the start. A current file that
// was never chained (written before chaining) is moved aside to
// UnchainedName and the chain starts fresh.
func (l *Log) head(cur string) (link, int64, error) {
	last, size, err := lastLine(cur)
	if err != nil {
		return link{}, 0, err
	}
	if size == 0 {
		last, _, err = lastLine(filepath.Join(l.dir, RotatedName))
		if err != nil || last == nil {
			return link{}, 0, err
		}
	}
	at, ok := parseLink(last)
	if ok {
		return at, size, nil
	}
	if first, _ := firstLine(cur); first != nil {
		if _, chained := parseLink(first); !chained {
			if err := os.Rename(cur, filepath.Join(l.dir, UnchainedName)); err != nil {
				return link{}, 0, fmt.Errorf("auditchain: set aside an unchained trail: %w", err)
			}
			return link{}, 0, nil
		}
	}
	// A chained file whose last line is broken: chain onto that line as it
	// is, so the break stays where Verify reports it.
	sum := sha256.Sum256(last)
	return link{seq: 0, hash: hex.EncodeToString(sum[:])}, size, nil
}

// bodyOf is the record obj following at, without its hash.
func bodyOf(at link, obj []byte) []byte {
	body := fmt.Appendf(nil, `{"seq":%d,"prev":%q`, at.seq+1, at.hash)
	if len(obj) > 2 {
		body = append(body, ',')
	}
	return append(body, obj[1:]...)
}

// seal is the line of a record's body and its hash.
func seal(body []byte) ([]byte, string) {
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	line := append(body[:len(body)-1:len(body)-1], fmt.Sprintf(`,"hash":%q}`, hash)...)
	return line, hash
}

// hashSuffixLen is the length of `,"hash":"<64 hex>"}`.
const hashSuffixLen = len(`,"hash":""}`) + 64

// unseal splits a line into its body (as hashed) and its stated hash.
func unseal(line []byte) (body []byte, hash string, ok bool) {
	if len(line) < hashSuffixLen+2 {
		return nil, "", false
	}
	suf := line[len(line)-hashSuffixLen:]
	if !bytes.HasPrefix(suf, []byte(`,"hash":"`)) || !bytes.HasSuffix(suf, []byte(`"}`)) {
		return nil, "", false
	}
	hash = string(suf[len(`,"hash":"`) : len(suf)-2])
	body = append(append([]byte(nil), line[:len(line)-hashSuffixLen]...), '}')
	return body, hash, true
}

// parseLink reads a line's seq and hash when it is a chained record.
func parseLink(line []byte) (link, bool) {
	body, hash, ok := unseal(line)
	if !ok {
		return link{}, false
	}
	var h struct {
		Seq *uint64 `json:"seq"`
	}
	if json.Unmarshal(body, &h) != nil || h.Seq == nil {
		return link{}, false
	}
	return link{seq: *h.Seq, hash: hash}, true
}

// lastLine returns the last complete line of path (nil when there is none)
// and the file's size; a missing file is empty.
func lastLine(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("auditchain: read: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("auditchain: read: %w", err)
	}
	size := st.Size()
	n := min(size, MaxRecordBytes+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("auditchain: read: %w", err)
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	if len(buf) == 0 {
		return nil, size, nil
	}
	return buf, size, nil
}

// firstLine returns the first line of path, up to MaxRecordBytes.
func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, MaxRecordBytes)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return buf, nil
}

// fmtSeq names a record's sequence number for a message.
func fmtSeq(n uint64) string { return strconv.FormatUint(n, 10) }
