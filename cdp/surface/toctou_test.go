package surface

// Time-of-check/time-of-use: an allowed page navigates itself to a denied
// origin (same-site B, or cross-site C, which also swaps the renderer
// process and with it the numbering of execution contexts) at varying small
// delays while a verb runs. Whatever the timing, the verb returns the
// allowed document's data or refuses; the denied page's secret never
// appears in a result, its colour never in a capture, and its own event log
// stays empty.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/webcodex/webcodex/fsm"
)

// raceDelays are the delays, in milliseconds after the verb is about to
// start, at which the page navigates away.
var raceDelays = []int{0, 2, 5, 10, 20, 40, 80, 300}

// maxRaceDelay bounds the later navigations a loaded machine may need
// before a verb wins one race.
const maxRaceDelay = 20000

// raceVerb runs one verb on the allowed /race page (prepared by setup, when
// set, before the navigation is armed) and returns what the agent would
// see.
type raceVerb struct {
	name  string
	setup func(t *testing.T, p *Page) any
	run   func(ctx context.Context, p *Page, prep any) (shown string, shot []byte, err error)
	input bool // the verb dispatches input: the denied page's log must stay empty
}

func raceVerbs() []raceVerb {
	text := func(v any, err error) (string, []byte, error) {
		if err != nil {
			return "", nil, err
		}
		b, _ := jsonv2.Marshal(v)
		return string(b), nil, nil
	}
	return []raceVerb{
		{name: "read", run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Read(ctx, 0))
		}},
		{name: "evaluate", run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Evaluate(ctx, "document.title + ' ' + document.body.innerText"))
		}},
		{name: "evaluate-await", run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Evaluate(ctx, "new Promise(r => setTimeout(() => r(document.title + ' ' + document.body.innerText), 15))"))
		}},
		{name: "snapshot", run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Snapshot(ctx, SnapshotOptions{}))
		}},
		{name: "snapshot-next", setup: func(t *testing.T, p *Page) any {
			s := must(p.Snapshot(tctx(t), SnapshotOptions{MaxChars: 1000, Full: true}))(t)
			if s.Cursor == "" {
				t.Fatal("no cursor: the page is too small")
			}
			return s.Cursor
		}, run: func(ctx context.Context, p *Page, prep any) (string, []byte, error) {
			return text(p.SnapshotNext(ctx, prep.(string), 4000))
		}},
		{name: "screenshot", run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			b, err := p.Screenshot(ctx, ScreenshotOptions{})
			return "", b, err
		}},
		{name: "click", input: true, run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Click(ctx, Target{Role: "button", Name: "Allowed button"}))
		}},
		{name: "type", input: true, run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Type(ctx, Target{Label: "Allowed field"}, "typed"))
		}},
		{name: "press", input: true, setup: func(t *testing.T, p *Page) any {
			must(p.Click(tctx(t), Target{Label: "Allowed field"}))(t) // the focus is in the allowed page
			return nil
		}, run: func(ctx context.Context, p *Page, _ any) (string, []byte, error) {
			return text(p.Press(ctx, nil, "k Enter"))
		}},
	}
}

// TestVerbsRaceNavigationToDeniedOrigin runs every verb against a page that
// leaves for a denied origin at varying moments.
func TestVerbsRaceNavigationToDeniedOrigin(t *testing.T) {
	s := newAttackSites(t)
	p, _ := testPage(t, "", Options{Judge: s.gate.Check})
	for _, v := range raceVerbs() {
		t.Run(v.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ok, refused := 0, 0
			race := func(to string, delay int) {
				name := fmt.Sprintf("%s to %s after %dms", v.name, to, delay)
				if _, err := p.Navigate(ctx, s.a+"/race"); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var prep any
				if v.setup != nil {
					prep = v.setup(t, p)
				}
				loads, stop := p.sess.Subscribe("Page.loadEventFired")
				// Armed by the test in the page's own world (not through
				// the verbs under test).
				rawEval(t, p, fmt.Sprintf("setTimeout(() => { location.href = %q }, %d), ''", to+"/secret", delay))
				shown, shot, err := v.run(ctx, p, prep)
				if strings.Contains(shown, s.secret) || strings.Contains(shown, "SECRET") {
					t.Fatalf("%s: the result shows the denied page: %.300s", name, shown)
				}
				if err != nil {
					if strings.Contains(err.Error(), s.secret) {
						t.Fatalf("%s: the error shows the denied page: %v", name, err)
					}
					if _, isRefusal := fsm.AsRefusal(err); !isRefusal {
						t.Fatalf("%s: %v", name, err)
					}
					refused++
				} else {
					ok++
					if shot != nil {
						if n, _ := countRGB(t, shot, secretRGB, 40); n != 0 {
							t.Fatalf("%s: %d pixels of the denied page", name, n)
						}
					} else if v.name != "snapshot-next" && !v.input && !strings.Contains(shown, "ALLOWED-PAGE") {
						t.Fatalf("%s: neither the allowed page nor a refusal: %.300s", name, shown)
					}
				}
				// The denied page, once loaded, says what reached it.
				select {
				case <-loads:
				case <-ctx.Done():
					t.Fatalf("%s: the page never reached the denied origin", name)
				}
				stop()
				if got := rawEval(t, p, "location.origin"); got != to {
					t.Fatalf("%s: the page is at %q", name, got)
				}
				if v.input {
					if ev := rawEval(t, p, "events.filter(e => !/^mouse(move|over)/.test(e)).join(',')"); ev != "" {
						t.Fatalf("%s: the denied page received %q", name, ev)
					}
				}
			}
			for _, to := range []string{s.b, s.c} {
				for _, delay := range raceDelays {
					race(to, delay)
				}
			}
			// A loaded machine can make every verb slower than the longest
			// delay: the navigation then always wins. Later and later
			// navigations (each run still checked) until one lets the verb
			// through, so a verb that always refuses still fails here.
			for delay := 2 * raceDelays[len(raceDelays)-1]; ok == 0 && delay <= maxRaceDelay; delay *= 2 {
				race(s.c, delay)
			}
			t.Logf("%d answered from the allowed page, %d refused", ok, refused)
			if ok == 0 {
				t.Fatalf("no run answered, with navigations up to %dms later: the race never let the verb through", maxRaceDelay)
			}
		})
	}
}

// TestStaleWorldNeverRunsInNextProcess: after a cross-process navigation
// the next document's contexts reuse the last one's ids. The denied page
// answers every unknown global with a trap that records what it is called
// with; calls into the old document's world fail instead of reaching it.
func TestStaleWorldNeverRunsInNextProcess(t *testing.T) {
	s := newAttackSites(t)
	p, _ := testPage(t, "", Options{Judge: s.gate.Check})
	ctx := tctx(t)
	must(p.Navigate(ctx, s.a+"/race"))(t)
	w := must(p.mainWorld(ctx))(t)
	must(p.Navigate(ctx, s.c+"/secret"))(t)
	rawEval(t, p, `(() => { window.caught = [];
 Object.setPrototypeOf(EventTarget.prototype, new Proxy(Object.create(null), {
  has: (o, k) => typeof k === 'string' && k.startsWith('__wc_'),
  get: (o, k) => new Proxy(function () {}, { get: (f, m) => (...a) => { caught.push(String(k) + '.' + String(m) + JSON.stringify(a)); return {url: 'http://127.0.0.1/', title: 'fake', text: 'ALLOWED-PAGE', ok: true}; } }),
 })); return ''; })()`)
	r, err := invoke(ctx, p, w, jsIdentity, none{})
	if !errors.Is(err, errWorldGone) {
		t.Fatalf("a call into the replaced document's world = %v, %+v; want errWorldGone", err, r)
	}
	if got := rawEval(t, p, "caught.join('|')"); got != "" {
		t.Fatalf("the next document's trap was called: %s", got)
	}
	_, err = p.Read(ctx, 0)
	wantCode(t, err, fsm.OriginDenied)
	if !errors.Is(err, ErrDocumentRefused) {
		t.Fatalf("the refusal of the page's own document is not marked: %v", err)
	}
	if got := rawEval(t, p, "caught.join('|')"); got != "" {
		t.Fatalf("the next document's trap was called: %s", got)
	}
}
