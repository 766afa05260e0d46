package platform

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// startHelper re-executes the test binary in role, in its own process
// group, waits until it runs, and reaps it at cleanup.
func startHelper(t *testing.T, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	return startHelperCmd(t, cmd, role, env...)
}

// startHelperCmd starts cmd (whose Args the caller may have set) as a helper
// in role and returns once the helper's main runs, so /proc shows its argv.
func startHelperCmd(t *testing.T, cmd *exec.Cmd, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd.Env = append(append(os.Environ(), helperEnv+"="+role, readyEnv+"=1"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// Bounded: a helper that never starts fails the test, not the run.
	r.SetReadDeadline(time.Now().Add(helperMaxLife))
	if line, err := bufio.NewReader(r).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper %s did not report running: %q, %v", role, line, err)
	}
	return cmd
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "4242 (we ird) (name)) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615"
	st, err := parseStat([]byte(line))
	if err != nil || st.comm != "we ird) (name)" || st.state != 'S' || st.pgrp != 4240 || st.startTime != 987654 {
		t.Errorf("parseStat = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "4242 no parens", "4242 (x) S 1", "4242 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded, want an error", bad)
		}
	}
}

func TestFingerprintOfSelf(t *testing.T) {
	t.Parallel()
	fp, err := FingerprintOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if fp.PID != os.Getpid() || fp.StartTime == 0 || fp.Exe != exe {
		t.Errorf("FingerprintOf(self) = %+v, want PID %d, exe %s, a start time", fp, os.Getpid(), exe)
	}
	if !fp.Alive() {
		t.Error("own fingerprint is not Alive")
	}
	// The same PID with another start time or executable is another process.
	for _, other := range []Fingerprint{
		{PID: fp.PID, StartTime: fp.StartTime + 1, Exe: fp.Exe},
		{PID: fp.PID, StartTime: fp.StartTime, Exe: "/usr/lib/chromium/chromium"},
		{PID: 0, StartTime: fp.StartTime, Exe: fp.Exe},
		{},
	} {
		if other.Alive() {
			t.Errorf("%+v is Alive, want false (a reused PID is not an identity)", other)
		}
	}
	if _, err := FingerprintOf(-1); !errors.Is(err, ErrNoProcess) {
		t.Errorf("FingerprintOf(-1) = %v, want ErrNoProcess", err)
	}
}

func TestFingerprintDeadAndZombie(t *testing.T) {
	t.Parallel()
	cmd := startHelper(t, "hang")
	pid := cmd.Process.Pid
	fp, err := FingerprintOf(pid)
	if err != nil || !fp.Alive() {
		t.Fatalf("live helper: %+v, %v, Alive %v", fp, err, fp.Alive())
	}
	if got := GroupMembers(pid); !slices.Equal(got, []int{pid}) {
		t.Errorf("GroupMembers(helper) = %v, want [%d]", got, pid)
	}
	if err := KillGroup(pid); err != nil {
		t.Fatal(err)
	}
	// Not yet reaped: a zombie, which is no live process.
	if !poll(5*time.Second, func() bool { st, err := readStat(pid); return err == nil && st.dead() }) {
		t.Fatal("helper did not become a zombie within 5 s")
	}
	if fp.Alive() {
		t.Error("zombie's fingerprint is Alive")
	}
	if _, err := FingerprintOf(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("FingerprintOf(zombie) = %v, want ErrNoProcess", err)
	}
	if GroupAlive(pid) {
		t.Errorf("GroupAlive with only a zombie = true; members %v", GroupMembers(pid))
	}
	cmd.Wait()
	if fp.Alive() {
		t.Error("dead process's fingerprint is Alive")
	}
	if _, err := FingerprintOf(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("FingerprintOf(dead) = %v, want ErrNoProcess", err)
	}
	if err := KillGroup(pid); err != nil {
		t.Errorf("KillGroup(empty group) = %v, want nil", err)
	}
}

func TestKillGroupRefusesDangerousGroups(t *testing.T) {
	t.Parallel()
	for _, pgid := range []int{-5, 0, 1, syscall.Getpgrp()} {
		if err := KillGroup(pgid); !fsm.IsCode(err, fsm.InvalidArgument) {
			t.Errorf("KillGroup(%d) = %v, want %s", pgid, err, fsm.InvalidArgument)
		}
	}
	if GroupMembers(0) != nil || GroupMembers(-1) != nil {
		t.Error("GroupMembers of a non-positive group is not empty")
	}
	if !slices.Contains(GroupMembers(syscall.Getpgrp()), os.Getpid()) {
		t.Error("GroupMembers of our own group misses this process")
	}
}

func TestOwnerUID(t *testing.T) {
	if uid, err := OwnerUID(os.Getpid()); err != nil || uid != os.Getuid() {
		t.Fatalf("OwnerUID(self) = %d, %v; want %d", uid, err, os.Getuid())
	}
	if _, err := OwnerUID(1 << 30); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("OwnerUID(no such pid) = %v, want ErrNoProcess", err)
	}
}
