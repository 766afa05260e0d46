package chromiumtest

import (
	"context"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/platform"
)

// Users is "the user's Chrome" of attach tests: a Chromium the test starts
// itself, through platform.Launch, on a disposable profile with its
// debugging endpoint on, so nothing personal is touched.
type Users struct {
	Proc    *platform.Process
	Profile string
	Port    int
}

// StartUsers launches it on profile (created private if missing) and closes
// it in tb.Cleanup.
func StartUsers(tb testing.TB, profile string) *Users {
	tb.Helper()
	SkipShort(tb)
	exe, err := ChromePath()
	if err != nil {
		tb.Fatal(InstallHint)
	}
	if err := platform.EnsurePrivateDir(profile); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), launchBound())
	defer cancel()
	proc, err := platform.Launch(ctx, platform.LaunchOptions{Exec: exe, UserDataDir: profile, Headless: true, RemoveUserDataDir: true, DebuggingPort: true, StartTimeout: launchBound()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		proc.Close(ctx, nil)
	})
	port, _, err := platform.ReadDevToolsActivePort(profile)
	if err != nil {
		tb.Fatal(err)
	}
	return &Users{Proc: proc, Profile: profile, Port: port}
}

// browser runs fn on a separate connection, as the person's own use of
// their browser would.
func (u *Users) browser(tb testing.TB, fn func(ctx context.Context, s *cdp.Session)) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, err := cdp.DialWebSocket(ctx, u.Proc.WebSocketURL(), cdp.DialOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	c := cdp.NewConn(sock, cdp.ConnOptions{})
	defer c.Close()
	fn(ctx, c.Browser())
}

// OpenTab opens a tab at url and returns its target id.
func (u *Users) OpenTab(tb testing.TB, url string) target.ID {
	tb.Helper()
	var id target.ID
	u.browser(tb, func(ctx context.Context, s *cdp.Session) {
		res, err := cdproto.Call(ctx, s, target.CreateTarget, target.CreateTargetParams{URL: url})
		if err != nil {
			tb.Fatal(err)
		}
		id = res.TargetID
	})
	return id
}

// PageTargets lists the page targets as "id url".
func (u *Users) PageTargets(tb testing.TB) []string {
	tb.Helper()
	var out []string
	u.browser(tb, func(ctx context.Context, s *cdp.Session) {
		res, err := cdproto.Call(ctx, s, target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			tb.Fatal(err)
		}
		for _, ti := range res.TargetInfos {
			if ti.Type == "page" {
				out = append(out, string(ti.TargetID)+" "+ti.URL)
			}
		}
	})
	return out
}
