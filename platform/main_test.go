package platform

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// helperEnv selects a helper role when the test binary is re-executed:
// as a fake browser for Launch's failure paths, or as a parent that
// launches a real browser and is then killed (Pdeathsig).
const helperEnv = "WEBCODEX_PLATFORM_TEST_HELPER"

// readyEnv asks a helper to print one line once it runs; startHelper waits
// for it.
const readyEnv = "WEBCODEX_PLATFORM_TEST_READY"

// helperMaxLife bounds every helper, so none can outlive a broken test.
const helperMaxLife = 60 * time.Second

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	os.Exit(m.Run())
}

func runHelper(role string) int {
	if f := os.Getenv("WEBCODEX_PLATFORM_TEST_PIDFILE"); f != "" {
		rec := fmt.Sprintf("%d %s\n", os.Getpid(), os.Getenv("TMPDIR"))
		if err := os.WriteFile(f, []byte(rec), 0o600); err != nil {
			return 99
		}
	}
	if os.Getenv(readyEnv) != "" {
		// The exec is complete once main runs: /proc shows argv from here on,
		// not before (the kernel wakes the parent before it sets argv up).
		fmt.Println("ready")
	}
	switch role {
	case "hang":
		time.Sleep(helperMaxLife)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "fake browser: boom")
		fmt.Fprintln(os.Stderr, "DevTools listening on ws://127.0.0.1:9/devtools/browser/secret-id")
		code, _ := strconv.Atoi(os.Getenv("WEBCODEX_PLATFORM_TEST_CODE"))
		return code
	case "launch":
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := Launch(ctx, LaunchOptions{UserDataDir: os.Getenv("WEBCODEX_PLATFORM_TEST_UDD"), Headless: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper launch:", err)
			return 2
		}
		fmt.Printf("%d %s\n", p.PID(), p.TmpDir())
		time.Sleep(helperMaxLife) // the parent test kills us long before
		return 0
	}
	if code, ok := platformHelper(role); ok {
		return code
	}
	return 98
}

// needChromium returns the browser to test with. A missing browser fails
// the test with the install hint, except under -short, which skips every
// real-browser test.
func needChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real Chromium test skipped under -short")
	}
	exe, err := FindChromium()
	if err != nil {
		t.Fatalf("FindChromium: %v", err)
	}
	return exe
}
