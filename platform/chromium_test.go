package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// TestBrowserInstallsFake lays out each system's install locations below
// a fake root and checks which browser FindChromium's search picks.
func TestBrowserInstallsFake(t *testing.T) {
	type file struct {
		path string
		exec bool
	}
	mac := func(dir, app string) string { return filepath.Join(dir, app+".app", "Contents", "MacOS", app) }
	cases := []struct {
		name  string
		goos  string
		files func(root, home string) []file
		want  func(root, home string) string // "" : a refusal
	}{
		{"darwin: Chrome in /Applications", "darwin",
			func(r, h string) []file { return []file{{mac(r+"/Applications", "Google Chrome"), true}} },
			func(r, h string) string { return mac(r+"/Applications", "Google Chrome") }},
		{"darwin: Chromium before Chrome", "darwin",
			func(r, h string) []file {
				return []file{{mac(r+"/Applications", "Google Chrome"), true}, {mac(r+"/Applications", "Chromium"), true}}
			},
			func(r, h string) string { return mac(r+"/Applications", "Chromium") }},
		{"darwin: /Applications before ~/Applications", "darwin",
			func(r, h string) []file {
				return []file{{mac(h+"/Applications", "Chromium"), true}, {mac(r+"/Applications", "Microsoft Edge"), true}}
			},
			func(r, h string) string { return mac(r+"/Applications", "Microsoft Edge") }},
		{"darwin: Chrome for Testing in ~/Applications", "darwin",
			func(r, h string) []file { return []file{{mac(h+"/Applications", "Google Chrome for Testing"), true}} },
			func(r, h string) string { return mac(h+"/Applications", "Google Chrome for Testing") }},
		{"darwin: a bundle without an executable binary", "darwin",
			func(r, h string) []file { return []file{{mac(r+"/Applications", "Google Chrome"), false}} },
			func(r, h string) string { return "" }},
		{"windows: per-machine Chrome", "windows",
			func(r, h string) []file { return []file{{r + "/pf/Google/Chrome/Application/chrome.exe", true}} },
			func(r, h string) string { return r + "/pf/Google/Chrome/Application/chrome.exe" }},
		{"windows: Edge in Program Files (x86)", "windows",
			func(r, h string) []file { return []file{{r + "/pf86/Microsoft/Edge/Application/msedge.exe", true}} },
			func(r, h string) string { return r + "/pf86/Microsoft/Edge/Application/msedge.exe" }},
		{"windows: Program Files before a per-user install", "windows",
			func(r, h string) []file {
				return []file{{r + "/local/Google/Chrome/Application/chrome.exe", true}, {r + "/pf86/Microsoft/Edge/Application/msedge.exe", true}}
			},
			func(r, h string) string { return r + "/pf86/Microsoft/Edge/Application/msedge.exe" }},
		{"windows: per-user Chromium", "windows",
			func(r, h string) []file { return []file{{r + "/local/Chromium/Application/chrome.exe", true}} },
			func(r, h string) string { return r + "/local/Chromium/Application/chrome.exe" }},
		{"windows: nothing installed", "windows",
			func(r, h string) []file { return nil },
			func(r, h string) string { return "" }},
		{"linux: /usr/bin/chromium", "linux",
			func(r, h string) []file { return []file{{r + "/usr/bin/chromium", true}} },
			func(r, h string) string { return r + "/usr/bin/chromium" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "Users", "me")
			for _, f := range c.files(root, home) {
				if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
					t.Fatal(err)
				}
				mode := os.FileMode(0o644)
				if f.exec {
					mode = 0o755
				}
				if err := os.WriteFile(f.path, nil, mode); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"ProgramFiles": root + "/pf", "ProgramFiles(x86)": root + "/pf86", "LocalAppData": root + "/local"}
			got, err := findChromium("", browserInstalls(c.goos, root, func(k string) string { return env[k] }, home), nil, installHint(c.goos))
			want := c.want(root, home)
			if want != "" {
				if err != nil || got != want {
					t.Fatalf("found %q, %v; want %q", got, err, want)
				}
				if Product(got) == "" {
					t.Errorf("Product(%q) names no browser", got)
				}
				return
			}
			r, ok := fsm.AsRefusal(err)
			if !ok || r.Code != fsm.RequiresSetup || r.Detail != installHint(c.goos) || strings.Contains(r.Error(), root) {
				t.Fatalf("found %q, %v; want the install hint %q", got, err, installHint(c.goos))
			}
		})
	}
}
