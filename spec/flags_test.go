package spec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stateLike names a field that answers a lifecycle question ("is it closed,
// what mode, how did it end, why is it lost, was it revoked or handed
// over") which a machine's state answers instead.
var stateLike = regexp.MustCompile(`(?i)^(closed|closing|mode|teardown|lostReason|lost|revoked|handed|handedOver|retired|state|status|done|stopped|ended|watching|watched|running|draining)$`)

// reasonLike names a field that says why a lifetime ended where it did (a
// cause, a failure, why nothing was pressed): beside a struct that owns a
// machine, such a reason rides on the step or in the machine's facts.
var reasonLike = regexp.MustCompile(`(?i)^(cause|failure|reason|why|unpressed|lostReason|lastErr|err)$`)

// flagAllowed are the state-like fields that remain, each with why it is
// not a lifetime beside a machine. Keep it tiny: a new entry needs a
// reason a reviewer accepts.
var flagAllowed = map[string]string{
	// A close-once guard under its owner's mutex, for a channel whose
	// closing is the whole lifetime (sync.Once with an error beside it).
	"cdp/session.go: Session.ended":               "closes the session's done channel once, under Session.mu",
	"cdp/session.go: subscription.closed":         "closes a subscriber's channel once; a subscriber is listed under several methods",
	"cdp/surface/contexts.go: contextWatch.ended": "closes the watch's channel once, under its mutex",
	// Not yet a declared machine (issue 26's HTTP transport): a one-way
	// latch under the handler's mutex; each session's life is mcpsession's.
	"cmd/internal/mcp/http.go: HTTPHandler.closing": "Shutdown's one-way latch under HTTPHandler.mu: no session starts after it",
	// The local API's accepted connections: the brief's judgement call.
	"cmd/internal/localapi/conns.go: heldConn.closed":  "a net.Conn's close-once flag under its mutex, so the connection leaves its set once",
	"cmd/internal/localapi/conns.go: heldConn.running": "whether a call runs on the connection now (not evictable), set around each call",
	// Facts, not lifetimes.
	"cmd/internal/runner/browser.go: Page.handedOver": "whose tab it is (the agent gave it to the person), read at detach; no transition runs on it",
	"internal/persontty/persontty.go: Term.done":      "a test helper's pseudo-terminal: the prompt it drives has ended",
	"fsm/properties.go: tracked.revoked":              "the property checker's own model memory, which checks the machines",
}

// flagPending are shadows other parts of issue 20 remove (deliverable 2:
// the owners of lease/, consent/, reconnect/; deliverable 3: the download
// machine and the bridge's own machines). An entry that is gone is fine; a
// new one is not.
var flagPending = map[string]bool{
	"netguard/jail.go: download.state":         true,
	"netguard/jail.go: Download.State":         true,
	"consent/grant.go: Grant.revoked":          true,
	"lease/offer.go: offer.handed":             true,
	"lease/ledger.go: Entry.closed":            true,
	"reconnect/machine.go: Coordinator.closed": true,
	"extension/bridge/socket.go: route.lost":   true,
	// Reasons beside an owner, found when the scan learned reasonLike:
	// the bridge peer's close reason doubles as its closed flag, and a
	// download's reason is its listing's; each moves into its machine's
	// facts like consent's and reconnect's did.
	"extension/bridge/peer.go: peer.reason": true,
	"netguard/jail.go: download.reason":     true,
}

// TestNoLifecycleFlagBesideAMachine makes spec/README.md's sentence true:
// no struct in the module's code keeps a lifecycle flag of its own. Every
// untagged bool or string field with a state-like name fails unless it is
// allowed above with its reason (wire types, whose fields carry JSON tags,
// report a machine's state and are not scanned).
func TestNoLifecycleFlagBesideAMachine(t *testing.T) {
	found := map[string]bool{}
	files := map[string]*ast.File{} // by path relative to the module
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel("..", path)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = f
		for key := range stateFlags(f) {
			found[filepath.ToSlash(rel)+": "+key] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	owners := ownerTypes(files)
	for rel, f := range files {
		for key := range reasonFlags(f, owners[filepath.ToSlash(filepath.Dir(rel))]) {
			found[rel+": "+key] = true
		}
	}
	for key := range found {
		if flagAllowed[key] == "" && !flagPending[key] {
			t.Errorf("%s: a lifecycle flag beside a machine; ask the machine's state, carry the reason on the step, or allow it in flagAllowed with why", key)
		}
	}
	for key := range flagAllowed {
		if !found[key] {
			t.Errorf("flagAllowed lists %s, which is gone: drop the entry", key)
		}
	}
}

// stateFlags lists "Type.field" for every untagged bool or string field
// with a state-like name in f.
func stateFlags(f *ast.File) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		for _, fl := range st.Fields.List {
			id, ok := fl.Type.(*ast.Ident)
			if fl.Tag != nil || !ok || (id.Name != "bool" && id.Name != "string") {
				continue
			}
			for _, name := range fl.Names {
				if stateLike.MatchString(name.Name) {
					out[ts.Name.Name+"."+name.Name] = true
				}
			}
		}
		return true
	})
	return out
}

// ownerTypes lists, per directory, the names a struct field's type may
// spell a machine's owner with: fsm.Owner itself and the package's aliases
// of it (type attachmentOwner = *fsm.Owner[...]).
func ownerTypes(files map[string]*ast.File) map[string][]string {
	out := map[string][]string{}
	for rel, f := range files {
		dir := filepath.ToSlash(filepath.Dir(rel))
		if out[dir] == nil {
			out[dir] = []string{"fsm.Owner"}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Assign.IsValid() && strings.Contains(types.ExprString(ts.Type), "fsm.Owner") {
				out[dir] = append(out[dir], ts.Name.Name)
			}
			return true
		})
	}
	return out
}

// reasonFlags lists "Type.field" for every untagged error or string field
// with a reason-like name in a struct that owns a machine (a field whose
// type is one of owners).
func reasonFlags(f *ast.File, owners []string) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok || !holdsOwner(st, owners) {
			return true
		}
		for _, fl := range st.Fields.List {
			id, ok := fl.Type.(*ast.Ident)
			if fl.Tag != nil || !ok || (id.Name != "error" && id.Name != "string") {
				continue
			}
			for _, name := range fl.Names {
				if reasonLike.MatchString(name.Name) {
					out[ts.Name.Name+"."+name.Name] = true
				}
			}
		}
		return true
	})
	return out
}

func holdsOwner(st *ast.StructType, owners []string) bool {
	for _, fl := range st.Fields.List {
		typ := types.ExprString(fl.Type)
		for _, o := range owners {
			if strings.TrimPrefix(typ, "*") == o || strings.HasPrefix(strings.TrimPrefix(typ, "*"), o+"[") {
				return true
			}
		}
	}
	return false
}

// TestStateFlagsFindsAShadow: the scanner finds the shapes it is for, and
// leaves wire fields (tagged) and other types alone.
func TestStateFlagsFindsAShadow(t *testing.T) {
	src := `package p
type Browser struct {
	mode string
	lostReason, name string
	closed bool
	Mode string ` + "`json:\"mode\"`" + `
	done chan struct{}
	n int
}
type Wire struct{ State string ` + "`json:\"state\"`" + ` }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := stateFlags(f)
	for _, want := range []string{"Browser.mode", "Browser.lostReason", "Browser.closed"} {
		if !got[want] {
			t.Errorf("%s not found", want)
		}
	}
	if len(got) != 3 {
		t.Errorf("found %v, want exactly the three shadows", got)
	}
}

// TestReasonFlagsFindsAReasonBesideAnOwner: a reason kept in a struct that
// owns a machine is found, through an alias of fsm.Owner too; the same
// field in a struct that owns none, and a machine's own facts, are not.
func TestReasonFlagsFindsAReasonBesideAnOwner(t *testing.T) {
	src := `package p
type attemptOwner = *fsm.Owner[S, T, Facts]
type attempt struct {
	owner     *fsm.Owner[S, T, Facts]
	unpressed string
	failure   error
	sock      Socket
}
type coordinator struct {
	m     attemptOwner
	cause error
}
type Facts struct {
	Exact bool
	Cause error
}
type plain struct{ err error }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	owners := ownerTypes(map[string]*ast.File{"p/p.go": f})["p"]
	got := reasonFlags(f, owners)
	for _, want := range []string{"attempt.unpressed", "attempt.failure", "coordinator.cause"} {
		if !got[want] {
			t.Errorf("%s not found", want)
		}
	}
	if len(got) != 3 {
		t.Errorf("found %v, want exactly the three reasons", got)
	}
}
