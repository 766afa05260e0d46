package auditchain

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// BreakError names the first record where the chain does not hold: the
// file and line it is on, the sequence number it states (0 when it states
// none) and what is wrong with it.
type BreakError struct {
	File   string // FileName or RotatedName
	Line   int    // 1-based, within File
	Seq    uint64
	Reason string
}

func (e *BreakError) Error() string {
	seq := ""
	if e.Seq > 0 {
		seq = " (seq " + fmtSeq(e.Seq) + ")"
	}
	return fmt.Sprintf("audit chain broken at %s line %d%s: %s", e.File, e.Line, seq, e.Reason)
}

// ErrHeadNotFound reports that a head hash printed earlier is not in the
// chain: records were cut from its end (or it was never this chain's).
var ErrHeadNotFound = errors.New("auditchain: that head hash is not in the chain: records after it are missing")

// Report is what Verify found of a whole chain.
type Report struct {
	Records int    `json:"records"`
	First   uint64 `json:"first"` // the oldest kept record's seq (0: none)
	Head    string `json:"head"`  // the last record's hash ("" for an empty trail)
	// AfterHead counts the records after the head asked about, when one was.
	AfterHead int `json:"afterHead,omitempty"`
}

// Verify checks the chain kept in dir from its oldest kept record to its
// head: each record's hash matches its content, its prev is the hash of
// the record before it, and its seq follows that record's. The oldest
// record kept may follow a dropped file's only when audit.1.jsonl holds it;
// otherwise it must be the first ever (seq 1, prev ""). When head is not
// "", it must be the hash of some record (ErrHeadNotFound otherwise).
func Verify(dir, head string) (Report, error) {
	var rep Report
	v := verifier{at: nil, head: head, headSeen: head == ""}
	for _, name := range []string{RotatedName, FileName} {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("auditchain: verify: %w", err)
		}
		err = v.file(f, name)
		f.Close()
		if err != nil {
			return v.report(), err
		}
	}
	if !v.headSeen {
		return v.report(), ErrHeadNotFound
	}
	return v.report(), nil
}

type verifier struct {
	at       *link // the last record checked; nil before the first
	first    uint64
	records  int
	head     string
	headSeen bool
	after    int
}

func (v *verifier) report() Report {
	r := Report{Records: v.records, First: v.first}
	if v.at != nil {
		r.Head = v.at.hash
	}
	if v.head != "" && v.headSeen {
		r.AfterHead = v.after
	}
	return r
}

// file checks the records of one file in order.
func (v *verifier) file(f io.Reader, name string) error {
	rd := bufio.NewReaderSize(f, MaxRecordBytes+1)
	for n := 1; ; n++ {
		line, err := rd.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil
		}
		brk := func(seq uint64, why string) error {
			return &BreakError{File: name, Line: n, Seq: seq, Reason: why}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return brk(0, "the record is longer than its bound")
		case errors.Is(err, io.EOF):
			return brk(0, "the record is incomplete (no end of line)")
		case err != nil:
			return fmt.Errorf("auditchain: verify: %w", err)
		}
		if err := v.record(bytes.TrimSuffix(line, []byte("\n")), name, brk); err != nil {
			return err
		}
	}
}

// record checks one line against the record before it.
func (v *verifier) record(line []byte, name string, brk func(uint64, string) error) error {
	body, hash, ok := unseal(line)
	if !ok {
		return brk(0, "the record carries no hash")
	}
	var h struct {
		Seq  *uint64 `json:"seq"`
		Prev *string `json:"prev"`
	}
	if json.Unmarshal(body, &h) != nil || h.Seq == nil || h.Prev == nil {
		return brk(0, "the record is not a chained JSON record")
	}
	seq, prev := *h.Seq, *h.Prev
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != hash {
		return brk(seq, "its content does not match its hash: the record was edited")
	}
	switch {
	case v.at == nil && name == RotatedName:
		// The oldest kept record: what came before it was dropped at rotation.
	case v.at == nil && (seq != 1 || prev != ""):
		return brk(seq, "the chain does not start here: records before it are missing")
	case v.at != nil && prev != v.at.hash:
		return brk(seq, fmt.Sprintf("it does not follow the record before it (seq %d): records were deleted, reordered or cut here", v.at.seq))
	case v.at != nil && seq != v.at.seq+1:
		return brk(seq, fmt.Sprintf("its sequence number does not follow %d", v.at.seq))
	}
	if v.at == nil {
		v.first = seq
	}
	v.at = &link{seq: seq, hash: hash}
	v.records++
	if v.headSeen && v.head != "" {
		v.after++
	}
	if hash == v.head {
		v.headSeen = true
	}
	return nil
}
