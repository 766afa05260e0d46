package cmdutil

import (
	"runtime/debug"
	"strings"
)

// Version is the webcodex version every surface reports (the Runner's
// status, MCP's server info): the module version with the VCS revision.
// A release build may set the module version at link time with
// -ldflags "-X github.com/webcodex/webcodex/cmd/internal/cmdutil.Version=v1.2.3";
// otherwise it comes from the build information Go records.
var Version string

func init() { Version = Build().String() }

// BuildInfo is what `webcodex version` reports.
type BuildInfo struct {
	// Version is the module version: a release tag (go install …@v1.2.3),
	// a pseudo-version a build in a checkout derives from the commit, or
	// "(devel)" when Go recorded none.
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // the VCS commit, when built from a checkout
	Time     string `json:"time,omitempty"`     // the commit's time (RFC 3339)
	Modified bool   `json:"modified"`           // the checkout had uncommitted changes
	Go       string `json:"go"`                 // the Go toolchain
}

// linkedVersion is Version as the linker set it, before init replaced it.
var linkedVersion = Version

// linkedRevision and linkedModified ("true") are the checkout's commit and
// state as make install and make build pass them with -ldflags -X, for a
// build where Go records no VCS information (a linked git worktree,
// GOFLAGS=-buildvcs=false).
var linkedRevision, linkedModified string

// Build reads the version and revision from the build information.
func Build() BuildInfo {
	b := BuildInfo{Version: "(devel)"}
	info, ok := debug.ReadBuildInfo()
	if ok {
		b.Go = info.GoVersion
		if v := info.Main.Version; v != "" {
			b.Version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if linkedVersion != "" {
		b.Version = linkedVersion
	}
	if b.Revision == "" && linkedRevision != "" {
		b.Revision, b.Modified = linkedRevision, linkedModified == "true"
	}
	return b
}

// String is the one-line form: "v1.2.3 (revision 0123abcd, modified)".
func (b BuildInfo) String() string {
	var extra []string
	if b.Revision != "" {
		extra = append(extra, "revision "+shortRevision(b.Revision))
	}
	if b.Modified {
		extra = append(extra, "modified")
	}
	if len(extra) == 0 {
		return b.Version
	}
	return b.Version + " (" + strings.Join(extra, ", ") + ")"
}

func shortRevision(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
