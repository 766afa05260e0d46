//go:build linux

package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// Xvfb helpers for tests that need a person's screen: a private X server,
// a live view of its framebuffer, and xdotool clicks. There is no window
// manager, so windows are placed by flags and clicked by coordinates.

// xScreen is a private Xvfb server started by the test.
type xScreen struct {
	display       string // ":N"
	width, height int
	fbFile        string // the framebuffer, an XWD image Xvfb keeps current (-fbdir)
}

// needXTools fails the test with the install hint when Xvfb or xdotool is
// missing; under -short it skips the test instead.
func needXTools(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if testing.Short() {
		t.Skipf("%s missing (-short)", strings.Join(missing, ", "))
	}
	t.Fatalf("%s required: apt-get install -y xvfb xdotool", strings.Join(missing, " and "))
}

// startXvfb starts Xvfb on a display number it picks itself (-displayfd),
// in its own process group, and waits until its socket exists. Cleanup ends
// the group.
func startXvfb(t *testing.T, width, height int) *xScreen {
	t.Helper()
	fbdir := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", width, height),
		"-nolisten", "tcp", "-fbdir", fbdir)
	cmd.ExtraFiles = []*os.File{pw} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	pw.Close()
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { stopGroup(t, cmd.Process.Pid, exited) })

	// Xvfb writes the display number once it accepts connections, in two
	// writes, then closes the descriptor. Read to the close: a reader that
	// hangs up after the number makes the newline's write fail, and Xvfb
	// exits on that.
	num := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, 64)) // ends when Xvfb closes fd 3 or exits
		num <- strings.TrimSpace(string(b))
	}()
	var n string
	select {
	case n = <-num:
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not report its display within 20s")
	}
	if _, err := strconv.Atoi(n); err != nil {
		<-exited
		t.Fatalf("Xvfb reported no display (%q): %s", n, out.String())
	}
	x := &xScreen{display: ":" + n, width: width, height: height, fbFile: filepath.Join(fbdir, "Xvfb_screen0")}
	waitfor.Until(t, 10*time.Second, "the X socket and framebuffer exist", func() bool {
		_, err1 := os.Stat("/tmp/.X11-unix/X" + n)
		_, err2 := os.Stat(x.fbFile)
		return err1 == nil && err2 == nil
	})
	return x
}

// stopGroup ends a process group the test started: SIGTERM to the leader,
// then SIGKILL to the group.
func stopGroup(t *testing.T, pid int, exited <-chan struct{}) {
	syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
	if err := platform.KillGroup(pid); err != nil {
		t.Errorf("kill group: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Errorf("process %d did not exit after SIGKILL", pid)
	}
}

// xdotool runs xdotool on the screen.
func (x *xScreen) xdotool(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+x.display)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xdotool %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// clickAndPark moves the pointer to p and clicks the left button, as a
// person would (there is no window manager to focus or raise anything),
// then parks the pointer in the screen's corner so the software cursor is
// not part of the next frame.
func (x *xScreen) clickAndPark(t *testing.T, p image.Point) {
	t.Helper()
	x.xdotool(t, "mousemove", strconv.Itoa(p.X), strconv.Itoa(p.Y), "click", "1",
		"mousemove", strconv.Itoa(x.width-1), strconv.Itoa(x.height-1))
}

// shot is one frame of the screen.
type shot struct {
	w, h, bpl, bpp int
	little         bool
	pix            []byte
}

// shot reads the current framebuffer: Xvfb keeps it in an XWD file.
func (x *xScreen) shot(t *testing.T) *shot {
	t.Helper()
	b, err := os.ReadFile(x.fbFile)
	if err != nil {
		t.Fatalf("read the framebuffer: %v", err)
	}
	s, err := parseXWD(b)
	if err != nil {
		t.Fatalf("framebuffer: %v", err)
	}
	return s
}

// parseXWD decodes the ZPixmap, 32-bit TrueColor XWD Xvfb writes.
func parseXWD(b []byte) (*shot, error) {
	if len(b) < 100 {
		return nil, errors.New("XWD file too short")
	}
	u := func(i int) int { return int(binary.BigEndian.Uint32(b[i*4:])) }
	headerSize, version, format := u(0), u(1), u(2)
	s := &shot{w: u(4), h: u(5), little: u(7) == 0, bpp: u(11), bpl: u(12)}
	ncolors := u(19)
	if version != 7 || format != 2 || s.bpp != 32 {
		return nil, fmt.Errorf("unsupported XWD (version %d, format %d, %d bits per pixel)", version, format, s.bpp)
	}
	off := headerSize + ncolors*12
	if off+s.h*s.bpl > len(b) {
		return nil, errors.New("XWD file truncated")
	}
	s.pix = b[off : off+s.h*s.bpl]
	return s, nil
}

func (s *shot) rgb(x, y int) (r, g, b uint8) {
	p := s.pix[y*s.bpl+x*4:]
	var v uint32
	if s.little {
		v = binary.LittleEndian.Uint32(p)
	} else {
		v = binary.BigEndian.Uint32(p)
	}
	return uint8(v >> 16), uint8(v >> 8), uint8(v)
}

func (s *shot) white(x, y int) bool {
	r, g, b := s.rgb(x, y)
	return r == 255 && g == 255 && b == 255
}

// save writes the frame as a PNG, for a failing test's artifacts.
func (s *shot) save(path string) error {
	img := image.NewRGBA(image.Rect(0, 0, s.w, s.h))
	for y := 0; y < s.h; y++ {
		for x := 0; x < s.w; x++ {
			r, g, b := s.rgb(x, y)
			img.SetRGBA(x, y, color.RGBA{r, g, b, 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// saveShot keeps the current frame next to the test's output when it fails,
// so whoever reads the failure can look at the screen.
func (x *xScreen) saveShot(t *testing.T, name string) string {
	dir := os.Getenv("WEBCODEX_TEST_ARTIFACTS")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.png", strings.ReplaceAll(t.Name(), "/", "_"), name))
	b, err := os.ReadFile(x.fbFile)
	if err == nil {
		var s *shot
		if s, err = parseXWD(b); err == nil {
			err = s.save(path)
		}
	}
	if err != nil {
		return fmt.Sprintf("(screenshot failed: %v)", err)
	}
	return path
}

// startDesktopBus starts a private D-Bus session bus, as every desktop
// session has, with its own XDG_RUNTIME_DIR (the accessibility bus it
// activates on demand puts its socket there), and returns its address.
// Cleanup stops the bus by its PID, then what it activated (at-spi's
// launcher, bus and registry), found by that XDG_RUNTIME_DIR.
func startDesktopBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if testing.Short() {
			t.Skip("dbus-daemon missing (-short)")
		}
		t.Fatalf("dbus-daemon required: apt-get install -y dbus at-spi2-core (%v)", err)
	}
	runtime := t.TempDir()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		reapByEnv(t, "XDG_RUNTIME_DIR="+runtime)
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// reapByEnv ends the processes whose environment holds exactly entry (a
// value only this test used), after giving them a moment to leave on
// their own.
func reapByEnv(t *testing.T, entry string) {
	tagged := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err == nil && slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return string(kv) == entry }) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	for end := time.Now().Add(2 * time.Second); len(tagged()) > 0 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond) // polling /proc
	}
	for _, pid := range tagged() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitfor.Until(t, 5*time.Second, "the session bus's services are gone", func() bool { return len(tagged()) == 0 })
}
