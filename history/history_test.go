package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

func TestAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	a, err := history.OpenAppender(path, history.NewClock(), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []history.Op{
		{Type: history.Invoke, F: lockop.FAcquire, Value: history.MustValue(lockop.Value{Lock: "l"})},
		{Type: history.Ok, F: lockop.FAcquire, Value: history.MustValue(lockop.Value{Lock: "l", Session: 1})},
		{Type: history.Invoke, F: lockop.FRelease},
		{Type: history.Info, F: lockop.FRelease, Error: "timeout"},
	}
	for _, op := range want {
		if _, err := a.Append(op); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got, trunc, err := history.Read(path)
	if err != nil || trunc != nil {
		t.Fatalf("Read: %v, %v", trunc, err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d ops, want %d", len(got), len(want))
	}
	for i, op := range got {
		w := want[i]
		if op.Index != i || op.Process != 3 || op.Type != w.Type || op.F != w.F || string(op.Value) != string(w.Value) || op.Error != w.Error {
			t.Errorf("op %d = %s, want index %d, p3, %+v", i, op, i, w)
		}
		if i > 0 && op.Time < got[i-1].Time {
			t.Errorf("op %d time %v before op %d's %v", i, op.Time, i-1, got[i-1].Time)
		}
	}
}

// Two appenders, as two processes would have, each used by several
// goroutines, write large entries to one file at once: every line must come
// back whole, and each appender's entries in its own order.
func TestConcurrentAppenders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	clock := history.NewClock()
	const perGoroutine, goroutines = 200, 4
	pad := strings.Repeat("x", 8<<10) // far above a pipe's atomic write size
	var wg sync.WaitGroup
	for proc := range 2 {
		a, err := history.OpenAppender(path, clock, proc)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		for g := range goroutines {
			wg.Go(func() {
				for i := range perGoroutine {
					v := lockop.WriteValue{Key: fmt.Sprint(g), Value: fmt.Sprintf("%d-%s", i, pad)}
					if _, err := a.Invoke(lockop.FWrite, v); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	ops, trunc, err := history.Read(path)
	if err != nil || trunc != nil {
		t.Fatalf("Read: %v, %v", trunc, err)
	}
	if len(ops) != 2*goroutines*perGoroutine {
		t.Fatalf("read %d ops, want %d", len(ops), 2*goroutines*perGoroutine)
	}
	next := map[string]int{} // per process and goroutine, the next sequence number
	for _, op := range ops {
		var v lockop.WriteValue
		if err := op.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var i int
		fmt.Sscanf(v.Value, "%d-", &i)
		k := fmt.Sprint(op.Process, "/", v.Key)
		if i != next[k] || !strings.HasSuffix(v.Value, pad) {
			t.Fatalf("op #%d from %s is entry %d, want %d, or its value was cut", op.Index, k, i, next[k])
		}
		next[k]++
	}
}

func TestReadErrors(t *testing.T) {
	const good = `{"time":1,"type":"invoke","process":0,"f":"acquire"}` + "\n"
	for _, tc := range []struct {
		name      string
		content   string
		wantOps   int
		wantTrunc int    // line of the cut-off entry, 0 if none
		wantErr   string // substring of the error; "FILE" stands for the path
	}{
		{"cut last line", good + good + `{"time":2,"type":"o`, 2, 3, ""},
		{"last line without newline", good + strings.TrimSuffix(good, "\n"), 2, 0, ""},
		{"malformed middle line", good + "{oops\n" + good, 0, 0, "FILE:2:"},
		{"bad type", good + `{"time":1,"type":"done","process":0,"f":"acquire"}` + "\n", 0, 0, "expected one of invoke, ok, fail, info"},
		{"unknown field", `{"time":1,"type":"ok","process":0,"f":"x","extra":1}` + "\n", 0, 0, "FILE:1:"},
		{"empty middle line", good + "\n" + good, 0, 0, "FILE:2: empty line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			ops, trunc, err := history.Read(path)
			if tc.wantErr != "" {
				want := strings.ReplaceAll(tc.wantErr, "FILE", path)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != tc.wantOps {
				t.Errorf("read %d ops, want %d", len(ops), tc.wantOps)
			}
			switch {
			case tc.wantTrunc == 0 && trunc != nil:
				t.Errorf("unexpected %v", trunc)
			case tc.wantTrunc != 0 && (trunc == nil || trunc.Line != tc.wantTrunc || trunc.File != path):
				t.Errorf("truncation %+v, want line %d of %s", trunc, tc.wantTrunc, path)
			}
		})
	}
}

func TestMonotonicNeverGoesBack(t *testing.T) {
	prev := history.Monotonic()
	for i := range 200_000 {
		now := history.Monotonic()
		if now < prev {
			t.Fatalf("call %d: %v after %v", i, now, prev)
		}
		prev = now
	}
	if c := history.NewClock(); c.Now() < 0 {
		t.Error("a new clock reads negative")
	}
}

func BenchmarkAppend(b *testing.B) {
	a, err := history.OpenAppender(filepath.Join(b.TempDir(), "history.jsonl"), history.NewClock(), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	op := history.Op{Type: history.Invoke, F: lockop.FWrite, Value: history.MustValue(lockop.WriteValue{Key: "k", Value: "p0-123456", Session: 42})}
	n := 0
	for b.Loop() {
		if _, err := a.Append(op); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "ops/s")
}

// FuzzRead: any file gives entries or an error naming the file and a
// line, never a panic.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"time":1,"type":"invoke","process":0,"f":"read","value":{"key":"k"}}` + "\n" +
		`{"time":2,"type":"ok","process":0,"f":"read","value":{"key":"k","value":1}}` + "\n"))
	f.Add([]byte(`{"time":1,"type":"info","process":-1,"f":"pause-start","value":["n1"]}` + "\n" + `{"time":2,"ty`))
	f.Add([]byte(`{"time":1,"type":"ok","process":-2,"f":"role","value":{"node":"n1","role":"master","accepts":true}} x` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "history.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ops, trunc, err := history.Read(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+":") {
				t.Fatalf("error without file and line: %v", err)
			}
			return
		}
		for i, op := range ops {
			if op.Index != i || !op.Type.Valid() || op.F == "" || op.Process < history.Observer {
				t.Fatalf("entry %d accepted: %+v", i, op)
			}
		}
		if trunc != nil && trunc.Line != len(ops)+1 {
			t.Fatalf("truncated at line %d after %d entries", trunc.Line, len(ops))
		}
	})
}

func TestReadProgressCountsBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"time":%d,"type":"invoke","process":0,"f":"read"}`+"\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var last int64
	ops, _, err := history.ReadProgress(path, func(n int64) { last = n })
	if err != nil || len(ops) != 1000 {
		t.Fatalf("ReadProgress: %d ops, %v", len(ops), err)
	}
	if last != int64(b.Len()) {
		t.Errorf("progress ended at %d bytes, want the file's %d", last, b.Len())
	}
}
