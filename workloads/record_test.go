package workloads

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// TestRecord: every operation is an invocation then a completion of the
// same process, stamped in that order, whose type follows Jepsen's client
// contract: ok, fail only when certainly not applied, info otherwise.
func TestRecord(t *testing.T) {
	errLost := errors.New("connection reset after the request left")
	for _, c := range []struct {
		name     string
		readOnly bool
		call     func(ctx context.Context) (int, error)
		want     history.Type
		value    string // the completion's value
	}{
		{"ok", false, func(context.Context) (int, error) { return 7, nil }, history.Ok, `{"got":7}`},
		{"refused", false, func(context.Context) (int, error) { return 0, fmt.Errorf("%w: cas mismatch", ErrNotApplied) }, history.Fail, `{"got":0}`},
		{"lost", false, func(context.Context) (int, error) { return 0, errLost }, history.Info, `{"got":0}`},
		{"timed out", false, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, history.Info, `{"got":0}`},
		{"a read that failed", true, func(context.Context) (int, error) { return 0, errLost }, history.Fail, `{"got":0}`},
		// A library that ignores its context is given up on, its outcome
		// unknown; the call runs on and its late answer is dropped.
		{"a call that never returns", false, func(context.Context) (int, error) { select {} }, history.Info, `{"got":0}`},
		{"a read that never returns", true, func(context.Context) (int, error) { select {} }, history.Fail, `{"got":0}`},
		{"a late answer", false, func(context.Context) (int, error) { time.Sleep(3 * time.Second); return 7, nil }, history.Info, `{"got":0}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h.jsonl")
			h, err := history.OpenAppender(path, history.NewClock(), 3)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Record(context.Background(), h, Op[int]{F: registerop.FRead, Value: map[string]int{"asked": 1}, Timeout: 50 * time.Millisecond,
				ReadOnly: c.readOnly, Call: c.call, Completion: func(v int, _ error) any { return map[string]int{"got": v} }})
			if err != nil {
				t.Fatal(err)
			}
			h.Close()
			if d.Type != c.want {
				t.Errorf("outcome %s, want %s", d.Type, c.want)
			}
			ops, _, err := history.Read(path)
			if err != nil || len(ops) != 2 {
				t.Fatalf("history %+v (%v), want an invocation and a completion", ops, err)
			}
			inv, done := ops[0], ops[1]
			if inv.Type != history.Invoke || string(inv.Value) != `{"asked":1}` || inv.Process != 3 {
				t.Errorf("invocation %+v", inv)
			}
			if done.Type != c.want || string(done.Value) != c.value || done.Process != 3 || done.Time < inv.Time {
				t.Errorf("completion %+v after %+v, want %s with %s", done, inv, c.want, c.value)
			}
			if (done.Error != "") != (c.want != history.Ok) {
				t.Errorf("completion error %q for outcome %s", done.Error, c.want)
			}
		})
	}
}
