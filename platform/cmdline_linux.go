package platform

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// UserDataDirOf returns the profile directory the browser process pid runs
// with: its --user-data-dir flag, else the product's default profile under
// the user's config directory (Chromium 156 on Linux). The path is for
// comparisons inside the Runner only; it is never shown.
func UserDataDirOf(pid int) (string, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "", fmt.Errorf("platform: read command line: %w", ErrNoProcess)
	}
	args := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
	exe := ""
	for i, a := range args {
		s := string(a)
		if i == 0 {
			exe = s
		}
		if v, ok := strings.CutPrefix(s, "--user-data-dir="); ok {
			return filepath.Abs(v)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	config := os.Getenv("XDG_CONFIG_HOME")
	if config == "" {
		config = filepath.Join(home, ".config")
	}
	switch Product(exe) {
	case "chrome":
		return filepath.Join(config, "google-chrome"), nil
	case "edge":
		return filepath.Join(config, "microsoft-edge"), nil
	}
	return filepath.Join(config, "chromium"), nil
}
