package fsm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// runToy is the toy's owner whose lead rests in dialing and whose dial takes
// a string input (what to dial), recording what each effect got.
func runToy() (*Owner[toyState, toyTrigger, toyFacts], *[]string) {
	var ran []string
	rec := func(ctx context.Context, s Step[toyState, toyTrigger]) (toyTrigger, error) {
		ran = append(ran, string(s.Effect))
		return "", nil
	}
	o := NewOwner(goodToy(), Effects[toyState, toyTrigger]{
		"lead": rec,
		"dial": Takes(func(_ context.Context, s Step[toyState, toyTrigger], addr string) (toyTrigger, error) {
			ran = append(ran, "dial "+addr)
			return "", nil
		}),
		"invalidate": rec,
	})
	return o, &ran
}

func TestOwnerInputs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		fire    func(o *Owner[toyState, toyTrigger, toyFacts]) error
		wantErr string
		wantRan string
	}{
		{"FireWith hands the input to the effect that takes one",
			func(o *Owner[toyState, toyTrigger, toyFacts]) error {
				_, err := FireWith(ctx, o, "retry", "127.0.0.1")
				return err
			}, "", "lead,dial 127.0.0.1"},
		{"plain Fire gives a taking effect no input",
			func(o *Owner[toyState, toyTrigger, toyFacts]) error { _, err := o.Fire(ctx, "retry"); return err },
			"takes a string input", "lead"},
		{"an input of another type is none",
			func(o *Owner[toyState, toyTrigger, toyFacts]) error {
				_, err := FireWith(ctx, o, "retry", 7)
				return err
			},
			"takes a string input", "lead"},
		{"Fire never hands on its caller's input",
			func(o *Owner[toyState, toyTrigger, toyFacts]) error {
				_, err := o.Fire(context.WithValue(ctx, inputKey{}, "inherited"), "retry")
				return err
			}, "takes a string input", "lead"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ran := runToy()
			if _, err := o.Fire(ctx, "lost"); err != nil {
				t.Fatal(err)
			}
			err := tc.fire(o)
			if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if got := strings.Join(*ran, ","); got != tc.wantRan {
				t.Fatalf("ran %s, want %s", got, tc.wantRan)
			}
		})
	}
}

func TestOwnerSetFacts(t *testing.T) {
	for _, ok := range []bool{true, false} {
		o, _ := runToy()
		o.SetFacts(func(f *toyFacts) { f.OK = ok })
		if got := o.Facts().OK; got != ok {
			t.Fatalf("Facts().OK = %v after setting %v", got, ok)
		}
		step, err := o.Fire(context.Background(), "lost")
		if err == nil {
			step, err = o.Fire(context.Background(), "dialed")
		}
		want := toyState("failed")
		if ok {
			want = "invalidating"
		}
		if err != nil || step.To != want {
			t.Fatalf("with OK=%v: dialed went to %s (%v), want %s: the guard did not read the facts set", ok, step.To, err, want)
		}
	}
}

var errGone = errors.New("the caller went away")

func TestOwnerRun(t *testing.T) {
	retry := map[toyState]toyTrigger{"dialing": "retry"}
	tests := []struct {
		name      string
		next      map[toyState]toyTrigger
		interrupt toyTrigger // fired for errGone
		cancel    bool       // ctx ended with errGone before Run
		want      toyState
		wantLast  Step[toyState, toyTrigger]
		wantCode  Code
		wantCause bool
	}{
		{name: "fires each resting state's next trigger until a state it does not name",
			next: retry, interrupt: "revoke", want: "failed",
			wantLast: Step[toyState, toyTrigger]{From: "dialing", On: "retry", To: "failed"}},
		{name: "an ended context fires the interrupt instead",
			next: retry, interrupt: "revoke", cancel: true, want: "revoked", wantCause: true,
			wantLast: Step[toyState, toyTrigger]{From: "dialing", On: "revoke", To: "revoked"}},
		{name: "an interrupt the state does not take leaves the next trigger",
			next: retry, interrupt: "done", cancel: true, want: "failed", wantCause: true,
			wantLast: Step[toyState, toyTrigger]{From: "dialing", On: "retry", To: "failed"}},
		{name: "a next trigger the state does not take is refused, not skipped",
			next: map[toyState]toyTrigger{"dialing": "done"}, interrupt: "revoke", want: "dialing", wantCode: TransitionRefused},
		{name: "a state next does not name is a rest",
			next: map[toyState]toyTrigger{"ready": "lost"}, interrupt: "revoke", want: "dialing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := toyOwner(nil)
			ctx := context.Background()
			if _, err := o.Fire(ctx, "lost"); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			if tc.cancel {
				cancel(errGone)
			}
			var causes []error
			last, err := o.Run(ctx, tc.next, func(cause error) toyTrigger {
				causes = append(causes, cause)
				return tc.interrupt
			})
			if tc.wantCode != "" {
				if !IsCode(err, tc.wantCode) {
					t.Fatalf("Run = %v, want %s", err, tc.wantCode)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if o.State() != tc.want {
				t.Fatalf("Run rested in %s, want %s", o.State(), tc.want)
			}
			if last.From != tc.wantLast.From || last.On != tc.wantLast.On || last.To != tc.wantLast.To {
				t.Fatalf("Run's last step %+v, want %+v", last, tc.wantLast)
			}
			if tc.wantCause != (len(causes) > 0) || len(causes) > 0 && !errors.Is(causes[0], errGone) {
				t.Fatalf("interrupt was asked with causes %v", causes)
			}
		})
	}
}

// TestOwnerRunBound: rests that never end stop after every edge once plus
// one, with an error naming the machine, not a hang.
func TestOwnerRunBound(t *testing.T) {
	type st = toyState
	s := &Spec[st, toyTrigger, toyFacts]{
		Name: "pacer", Title: "Pacer", Guards: "nothing", Initial: "a",
		States:   []StateDoc[st]{{"a", "A."}, {"b", "B."}},
		Triggers: []toyTrigger{"go"},
		Edges: []Edge[st, toyTrigger, toyFacts]{
			{From: "a", On: "go", To: "b"},
			{From: "b", On: "go", To: "a"},
		},
		Stable: []st{"a", "b"}, MaxTransient: 1,
	}
	o := NewOwner(s, Effects[st, toyTrigger]{})
	_, err := o.Run(context.Background(), map[st]toyTrigger{"a": "go", "b": "go"}, func(error) toyTrigger { return "go" })
	if err == nil || !strings.Contains(err.Error(), "pacer: run from") {
		t.Fatalf("Run = %v, want the run bound's error", err)
	}
	if got := len(o.Trace()); got != len(s.Edges)+1 {
		t.Fatalf("Run fired %d times before stopping, want %d", got, len(s.Edges)+1)
	}
}
