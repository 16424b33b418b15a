package register

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/targets/nats"
	"github.com/chaos-testing/chaos/workloads"
)

// fakeStore answers every read with one value or error.
type fakeStore struct {
	v   *int64
	err error
}

func (f fakeStore) Read(context.Context, string) (*int64, error) { return f.v, f.err }
func (f fakeStore) Write(context.Context, string, int64) error   { return nil }
func (f fakeStore) Cas(context.Context, string, int64, int64) error {
	return nil
}
func (f fakeStore) Close() error { return nil }

// A read that sees garbage succeeded: the history must say what it saw,
// for the checker to judge; a read that got no answer changed nothing and
// is a failure.
func TestReadOutcomes(t *testing.T) {
	three := int64(3)
	for _, c := range []struct {
		name      string
		store     fakeStore
		typ       history.Type
		wantValue string
	}{
		{"number", fakeStore{v: &three}, history.Ok, "3"},
		{"absent", fakeStore{}, history.Ok, "null"},
		{"garbage", fakeStore{err: BadValue{Raw: "3\x00"}}, history.Ok, `"3\u0000"`},
		{"no answer", fakeStore{err: errors.New("connection lost")}, history.Fail, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			h, err := history.OpenAppender(path, history.NewClock(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := read(c.store, h, "r1"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			ops, _, err := history.Read(path)
			if err != nil || len(ops) != 2 {
				t.Fatalf("history: %v, %d entries", err, len(ops))
			}
			done := ops[1]
			var v registerop.Value
			if len(done.Value) > 0 {
				if err := done.Decode(&v); err != nil {
					t.Fatal(err)
				}
			}
			if done.Type != c.typ || string(v.Value) != c.wantValue {
				t.Errorf("read completed %s with %s, want %s with %s", done.Type, v.Value, c.typ, c.wantValue)
			}
		})
	}
}

// TestNATSCheckedReadsSince: a NATS checked read is refused on servers
// before v2.11.0, which ignore the header naming the subject checked; the
// other read modes run on any version.
func TestNATSCheckedReadsSince(t *testing.T) {
	w, ok := workloads.Workloads.Lookup("nats-register")
	if !ok {
		t.Fatal("nats-register is not registered")
	}
	for _, c := range []struct {
		mode, version string
		refused       bool
	}{
		{"checked", "", false}, {"checked", "v2.11.0", false}, {"checked", "v2.15.3", false},
		{"checked", "v2.10.23", true}, {"checked", "2.10.22", true},
		{"leader", "v2.10.22", false}, {"direct", "v2.10.22", false},
	} {
		target, err := nats.Kind{}.Bind(&targets.Spec[struct{}]{Nodes: 3, Version: c.version})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Bind(3, &Params{ReadMode: c.mode}, workloads.Setting{Workload: "nats-register", Clients: 3, Target: target, TargetKind: "nats", Nodes: 3})
		fe, _ := errors.AsType[*plans.FieldError](err)
		refused := fe != nil && fe.InPlan && fe.Field == "target.version" && strings.Contains(fe.Msg, "checked reads") &&
			strings.Contains(fe.Msg, "nats-register needs") && strings.Contains(fe.Msg, "which nats has from v2.11.0 on")
		if c.refused != refused || !c.refused && err != nil {
			t.Errorf("%s reads on %q: %v; want refused %v", c.mode, c.version, err, c.refused)
		}
	}
}
