package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/webcodex/webcodex/platform"
)

// ownedRecord is what the Runner writes for each browser it launches, so the
// next Runner can reap it if this one dies without closing it. It lives in
// the private state root (0600) and is never shown.
type ownedRecord struct {
	PID         int    `json:"pid"`
	StartTime   uint64 `json:"start_time"`
	Exe         string `json:"exe"`
	PGID        int    `json:"pgid"`
	TmpDir      string `json:"tmpdir"`
	UserDataDir string `json:"ephemeral_profile,omitempty"`
	// The Runner that launched it: a record of a live Runner (a daemon and
	// an embedded MCP Runner share the state root) is never reaped.
	RunnerPID   int    `json:"runner_pid,omitempty"`
	RunnerStart uint64 `json:"runner_start,omitempty"`
	// LaunchDir holds everything the launch made in the temporary
	// directory. A record with no PID was written before the browser
	// started: its Runner died mid-launch.
	LaunchDir string `json:"launch_dir,omitempty"`
}

func (r *Runner) recordDir() string { return filepath.Join(r.opts.StateDir, "browser", "owned") }

func (r *Runner) writeRecord(o *ownedBrowser, lopts platform.LaunchOptions) string {
	b := o.b
	dir := r.recordDir()
	if err := platform.EnsurePrivateDir(dir); err != nil {
		r.logf("runner: cannot record browser %s for cleanup: %v", b.id, err)
		return ""
	}
	rec := ownedRecord{LaunchDir: o.launchDir}
	if o.proc != nil {
		fp := o.proc.Fingerprint()
		rec.PID, rec.StartTime, rec.Exe, rec.PGID, rec.TmpDir = fp.PID, fp.StartTime, fp.Exe, o.proc.PGID(), o.proc.TmpDir()
	}
	if self, err := platform.FingerprintOf(os.Getpid()); err == nil {
		rec.RunnerPID, rec.RunnerStart = self.PID, self.StartTime
	}
	if lopts.RemoveUserDataDir {
		rec.UserDataDir = lopts.UserDataDir
	}
	data, _ := json.Marshal(rec)
	path := filepath.Join(dir, b.id+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		r.logf("runner: cannot record browser %s for cleanup", b.id)
		return ""
	}
	return path
}

func (r *Runner) removeRecord(path string) {
	if path != "" {
		os.Remove(path)
	}
}

// reapOrphans ends what an earlier Runner left: a browser group whose leader
// still has the recorded fingerprint (PID, start time, executable) is
// killed; a reused PID is never touched. Temporary directories go too.
func (r *Runner) reapOrphans() {
	entries, err := os.ReadDir(r.recordDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(r.recordDir(), e.Name())
		data, err := os.ReadFile(path)
		var rec ownedRecord
		if err != nil || json.Unmarshal(data, &rec) != nil {
			os.Remove(path)
			continue
		}
		if rec.RunnerPID != 0 && rec.RunnerPID != os.Getpid() {
			if owner, err := platform.FingerprintOf(rec.RunnerPID); err == nil && owner.StartTime == rec.RunnerStart {
				continue // its Runner is alive: not an orphan
			}
		}
		fp := platform.Fingerprint{PID: rec.PID, StartTime: rec.StartTime, Exe: rec.Exe}
		if rec.PID > 0 && fp.Alive() && rec.PGID == rec.PID {
			platform.KillGroup(rec.PGID)
			deadline := time.Now().Add(5 * time.Second)
			for platform.GroupAlive(rec.PGID) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond) // polling the process table: there is no event for it
			}
		}
		if rec.PID <= 0 || !platform.GroupAlive(rec.PGID) || !fp.Alive() {
			for _, dir := range []string{rec.TmpDir, rec.UserDataDir, rec.LaunchDir} {
				if dir != "" {
					os.RemoveAll(dir)
				}
			}
		}
		os.Remove(path)
		r.logf("runner: reaped a browser an earlier Runner left behind")
	}
}
