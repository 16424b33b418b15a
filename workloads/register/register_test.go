package register

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/chaos-testing/chaos/history"
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
			var v history.RegisterValue
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
