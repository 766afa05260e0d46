package spec

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
)

// recording is the edge coverage the real-browser test packages wrote
// (internal/tracecheck, one JSON file per package), refreshed by
// `make edge-coverage` and committed, so `webcodex spec` renders the same
// table on every machine.
//
//go:embed coverage
var recording embed.FS

// CoverageTargets are the machines whose every edge a real test must take
// or the table below must explain.
var CoverageTargets = []string{"consent", "reconnect", "attachment_owned", "attachment_external", "attachment_shared_tab", "process_lease", "mutation_gate", "mcp_session", "bridge_listener", "bridge_socket", "download", "runner", "raw_cdp_session"}

// Unreached explains, per machine and edge ("from --on--> to"), why no
// real-browser test takes it. An explanation for an edge a real test does
// take, or for an edge that is not declared, fails the spec test, so the
// table cannot go stale.
var Unreached = map[string]map[string]string{
	"consent": interrupted(map[string]string{
		"approval_required --approve--> refused":                     "an approval that expires between the person's answer and the attach needs a moved clock; real-browser tests use the real clock and never wait out an approval's " + fsm.HumanDuration(consent.RequestTTL) + " (the expiry instant is tested on the approval broker)",
		"approval_required --deny--> refused":                        "a denied approval refuses before any browser is touched; denial is tested on the approval broker, not yet with a browser",
		"grant_active --revoke--> grant_revoked":                     "a revocation landing between the grant and the connect is a race a real run cannot hit on cue without timing",
		"endpoint_preflight --owner_proven--> refused":               "needs another process listening on the approved endpoint between approval and dial; not staged by a real-browser test yet",
		"endpoint_preflight --deadline--> refused":                   deadline,
		"consent_prompt_observed --dismissed--> consent_dismissed":   "the person dismissing Chrome's prompt after webcodex saw it: the Xvfb dismissal tests dismiss before it is observed",
		"consent_prompt_observed --deadline--> timeout_or_ambiguity": deadline,
		"consent_pressed --dismissed--> consent_dismissed":           "a dismissal after the press: Chrome takes the press; a real run cannot dismiss after it",
		"socket_ready --reprove--> refused":                          ownerChanged,
	}, "session_ended", "cancelled", sessionEnded, "approval_required", "grant_active", "endpoint_preflight", "consent_prompt_observed", "consent_pressed"),
	"reconnect": interrupted(interrupted(map[string]string{
		"connecting_pending_consent --prompt_observed--> consent_ambiguous":             "an ambiguous prompt on a reconnect: the fake ConsentUI stages ambiguity on the first attach only; not staged on a reconnect yet",
		"consent_prompt_observed --prompt_unclear--> consent_ambiguous":                 "a prompt that changes under the press on a reconnect: not staged by a real-browser test yet",
		"consent_pressed --prompt_unclear--> consent_ambiguous":                         "a prompt that changes after the press on a reconnect: not staged by a real-browser test yet",
		"connecting_pending_consent --connected--> lost":                                ownerChanged,
		"consent_prompt_observed --connected--> lost":                                   ownerChanged,
		"consent_pressed --connected--> lost":                                           ownerChanged,
		"connecting_pending_consent --dismissed--> consent_dismissed":                   dismissedOnReconnect,
		"consent_prompt_observed --dismissed--> consent_dismissed":                      dismissedOnReconnect,
		"consent_pressed --dismissed--> consent_dismissed":                              dismissedOnReconnect,
		"consent_dismissed --revoke--> grant_revoked":                                   dismissedOnReconnect,
		"consent_prompt_observed --connected--> endpoint_generation_incremented":        "the handshake completing after the prompt was seen but before the press: a timing a real run cannot stage",
		"consent_prompt_observed --dial_failed--> process_profile_endpoint_revalidated": "a reconnect dial failing after the prompt appeared: not staged by a real-browser test yet",
		"consent_pressed --dial_failed--> process_profile_endpoint_revalidated":         "a reconnect dial failing after the press: not staged by a real-browser test yet",
		"ready --session_ended--> cancelled":                                            recordedBefore,
		"ready_for_rebind --session_ended--> cancelled":                                 recordedBefore,
	}, "session_ended", "cancelled", sessionEnded, "reconnect_singleflight", "process_profile_endpoint_revalidated", "connecting_pending_consent", "consent_prompt_observed", "consent_pressed"),
		"deadline", "exhausted", deadline, "reconnect_singleflight", "mutation_gates_closed", "process_profile_endpoint_revalidated", "connecting_pending_consent", "consent_prompt_observed", "consent_pressed"),
	"attachment_shared_tab": {
		"attaching --failed--> detached": "a registration failing after the offer was consumed needs the Runner to shut down between the extension's attach and the registration: a race a real run cannot land on cue without timing",
	},
	"download": {
		"in_progress --finished--> canceled": "a download that finishes past its bound between two of the browser's reports: the jail's disk poll (every " +
			"2 ms) or a report cancels it first in a real run, so the race is not staged",
		"cancelling --finished--> canceled": "the browser completing a download between webcodex's cancel and the browser accepting it: a race a " +
			"real run cannot land on cue without timing assertions",
	},
	"raw_cdp_session": {
		"attaching --attach_failed--> detached": "the browser refusing Target.attachToTarget for a live, authorized page target: not staged by a real-browser test yet",
		"attached --dropped--> detached":        "Chrome ending the raw session by itself (its target crashed) between two raw commands while the page stays listed: not staged by a real-browser test yet",
		"watching --close--> closed":            "the browser torn down between the commit watcher's subscription and the attach, inside one raw command: a race a real run cannot land on cue without timing assertions",
	},
	"process_lease": {
		"free --acquire--> taking_over":    "needs a stale SingletonLock left by a dead process on this host: not staged by a real-browser test yet",
		"taking_over --taken_over--> held": "follows a stale SingletonLock, which no real-browser test stages yet",
		"free --acquire--> refused":        "needs another live Runner holding the same profile: not staged by a real-browser test yet",
	},
}

// Reasons shared by several edges.
const (
	deadline             = "the deadline passing inside this state is a timing a real run cannot stage without timing assertions"
	ownerChanged         = "the endpoint's owner changing between the dial and the handshake (a PID or port reused) cannot be staged with a real browser"
	dismissedOnReconnect = "the person dismissing Chrome's prompt on a reconnect: the Xvfb dismissal tests cover the first attach only"
	sessionEnded         = "the session ending while the machine is in this state is a race a real run cannot land on cue without timing assertions"
	recordedBefore       = "declared by issue 20 (the machine, not a flag, refuses a reconnect after the session ended); every attached browser's session end takes it, but the committed recording in spec/coverage predates it: make edge-coverage re-records it, and this reason must then go"
)

// interrupted adds the reason why no real test takes trigger on from each
// of states to m.
func interrupted(m map[string]string, on, to, reason string, states ...string) map[string]string {
	for _, st := range states {
		m[fsm.EdgeKey(st, on, to)] = reason
	}
	return m
}

// Coverage is the merged recording: machine → edge → the tests that took it.
func Coverage() (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	entries, err := fs.ReadDir(recording, "coverage")
	if err != nil {
		return nil, fmt.Errorf("spec: edge coverage: %w", err)
	}
	for _, e := range entries {
		if path.Ext(e.Name()) != ".json" {
			continue
		}
		data, err := recording.ReadFile("coverage/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("spec: edge coverage: %w", err)
		}
		var part map[string]map[string][]string
		if err := json.Unmarshal(data, &part); err != nil {
			return nil, fmt.Errorf("spec: edge coverage %s: %w", e.Name(), err)
		}
		pkg := strings.TrimSuffix(e.Name(), ".json")
		for m, edges := range part {
			if out[m] == nil {
				out[m] = map[string][]string{}
			}
			for edge, tests := range edges {
				for _, t := range tests {
					who := pkg + ": " + t
					if !slices.Contains(out[m][edge], who) {
						out[m][edge] = append(out[m][edge], who)
					}
				}
				slices.Sort(out[m][edge])
			}
		}
	}
	return out, nil
}

// CoverageProblems lists target edges neither taken by a real test nor
// explained, explanations for edges that are taken or not declared, and
// machines named in the tables that are not declared.
func CoverageProblems() []string {
	cov, err := Coverage()
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	declared := map[string][]string{}
	for _, d := range Machines() {
		t := d.Table()
		for _, e := range t.Edges {
			declared[t.Name] = append(declared[t.Name], fsm.EdgeKey(e.From, e.On, e.To))
		}
	}
	for _, m := range CoverageTargets {
		if declared[m] == nil {
			problems = append(problems, fmt.Sprintf("coverage target %s is not a declared machine", m))
		}
		for _, edge := range declared[m] {
			if len(cov[m][edge]) == 0 && Unreached[m][edge] == "" {
				problems = append(problems, fmt.Sprintf("%s: %s is taken by no real test and not explained in spec.Unreached", m, edge))
			}
		}
	}
	for _, m := range sortedKeys(Unreached) {
		for _, edge := range sortedKeys(Unreached[m]) {
			switch {
			case !slices.Contains(declared[m], edge):
				problems = append(problems, fmt.Sprintf("%s: spec.Unreached explains %s, which is not declared", m, edge))
			case len(cov[m][edge]) > 0:
				problems = append(problems, fmt.Sprintf("%s: spec.Unreached explains %s, but %s takes it", m, edge, cov[m][edge][0]))
			}
		}
	}
	for _, m := range sortedKeys(cov) {
		if declared[m] == nil {
			problems = append(problems, fmt.Sprintf("the recording has machine %s, which is not declared", m))
			continue
		}
		for _, edge := range sortedKeys(cov[m]) {
			if !slices.Contains(declared[m], edge) {
				problems = append(problems, fmt.Sprintf("%s: the recording has %s, which is not declared (re-record with make edge-coverage)", m, edge))
			}
		}
	}
	return problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxTakersShown bounds the tests listed per edge in the table.
const maxTakersShown = 3

// edgeCoverage renders spec/edge-coverage.md from the recording.
func edgeCoverage() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("# Edge coverage by real tests\n\n")
	b.WriteString("Every transition a machine takes in the real-browser test packages is recorded (`internal/tracecheck`), replayed " +
		"against its declaration (trace conformance: a recorded run that is not a path of the declaration fails the package) and " +
		"attributed to the test that ran it. This page is rendered from that recording (`spec/coverage/*.json`, refreshed by " +
		"`make edge-coverage`). An edge no real test reaches says why; `go test ./spec` fails when an edge of " +
		codeList(CoverageTargets) + " is neither taken nor explained.\n\n")
	cov, err := Coverage()
	if err != nil {
		fmt.Fprintf(&b, "The recording could not be read: %v.\n", err)
		return b.Bytes()
	}
	b.WriteString("| machine | edges | taken by a real test | explained |\n|---|---|---|---|\n")
	for _, d := range Machines() {
		t := d.Table()
		taken, explained := 0, 0
		for _, e := range t.Edges {
			k := fsm.EdgeKey(e.From, e.On, e.To)
			if len(cov[t.Name][k]) > 0 {
				taken++
			} else if Unreached[t.Name][k] != "" {
				explained++
			}
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %d | %d | %d |\n", t.Name, t.Name, len(t.Edges), taken, explained)
	}
	for _, d := range Machines() {
		t := d.Table()
		fmt.Fprintf(&b, "\n## %s\n\n| edge | taken by |\n|---|---|\n", t.Name)
		for _, e := range t.Edges {
			k := fsm.EdgeKey(e.From, e.On, e.To)
			who := cov[t.Name][k]
			var cell string
			switch {
			case len(who) > 0:
				shown := who[:min(len(who), maxTakersShown)]
				cell = "`" + strings.Join(shown, "`, `") + "`"
				if len(who) > len(shown) {
					cell += fmt.Sprintf(" and %d more", len(who)-len(shown))
				}
			case Unreached[t.Name][k] != "":
				cell = "not reached by a real test: " + Unreached[t.Name][k]
			default:
				cell = "not reached by a real test"
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", strings.ReplaceAll(k, "|", "\\|"), strings.ReplaceAll(cell, "|", "\\|"))
		}
	}
	return b.Bytes()
}

func codeList(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}
