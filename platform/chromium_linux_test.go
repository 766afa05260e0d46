package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

func TestFindChromium(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExe := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	t.Setenv("PATH", dir)

	tests := []struct {
		name     string
		override string
		fixed    []string
		names    []string
		want     string
		detail   string // non-empty: want a RequiresSetup refusal with it
	}{
		{"override wins", exe, []string{missing}, nil, exe, ""},
		{"override not executable", notExe, []string{exe}, nil, "", chromiumEnv + " does not name an executable browser"},
		{"override missing", missing, []string{exe}, nil, "", chromiumEnv + " does not name an executable browser"},
		{"fixed path", "", []string{missing, exe}, nil, exe, ""},
		{"fixed path not executable, then PATH", "", []string{notExe}, []string{"chromium-browser", "chromium"}, exe, ""},
		{"nothing", "", []string{missing, notExe}, []string{"chromium-browser", "google-chrome"}, "", "install Chromium: apt-get install -y chromium"},
	}
	for _, tt := range tests {
		got, err := findChromium(tt.override, tt.fixed, tt.names, installHint("linux"))
		if tt.detail == "" {
			if err != nil || got != tt.want {
				t.Errorf("%s: findChromium = %q, %v; want %q", tt.name, got, err, tt.want)
			}
			continue
		}
		r, ok := fsm.AsRefusal(err)
		if !ok || r.Code != fsm.RequiresSetup || r.Detail != tt.detail || got != "" {
			t.Errorf("%s: findChromium = %q, %v; want refusal %s %q", tt.name, got, err, fsm.RequiresSetup, tt.detail)
		}
		if ok && strings.Contains(r.Error(), dir) {
			t.Errorf("%s: refusal names a path: %q", tt.name, r.Error())
		}
	}
}

func TestFindChromiumEnv(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "my-browser")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(chromiumEnv, exe)
	if got, err := FindChromium(); err != nil || got != exe {
		t.Errorf("FindChromium with %s set = %q, %v; want %q", chromiumEnv, got, err, exe)
	}
}
