package linear

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// hardHistory has one register with n concurrent writes of distinct values
// and a concurrent read of a value none wrote: illegal, but porcupine must
// try every subset of the writes to know it.
func hardHistory(key string, n int) *analysistest.History {
	h := new(analysistest.History)
	for p := range n {
		h.Add(0, p, history.Invoke, registerop.FWrite, analysistest.Reg(key, strconv.Itoa(p+1)))
	}
	h.Add(0, n, history.Invoke, registerop.FRead, analysistest.Reg(key, ""))
	for p := range n {
		h.Add(1, p, history.Ok, registerop.FWrite, analysistest.Reg(key, strconv.Itoa(p+1)))
	}
	return h.Add(1, n, history.Ok, registerop.FRead, analysistest.Reg(key, "-1"))
}

func TestTimeLimitGivesUnknown(t *testing.T) {
	c := Checker{Model: registerModel(true), TimeLimit: 100 * time.Millisecond}
	start := time.Now()
	r := c.Check(context.Background(), analysis.Input{History: hardHistory("x", 40).Ops})
	if r.Verdict != analysis.Unknown || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "time limit") {
		t.Fatalf("got %s %q, expected unknown with a time-limit note", r.Verdict, r.Notes)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a 100ms limit took %s", d)
	}
}

func TestCancelGivesUnknown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel) // mid-check: porcupine itself has no context
	start := time.Now()
	c, _ := analysis.Checkers.Lookup("cas-register")
	r := c.Check(ctx, analysis.Input{History: hardHistory("x", 40).Ops})
	if r.Verdict != analysis.Unknown || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "cancelled") {
		t.Fatalf("got %s %q, expected unknown with a cancellation note", r.Verdict, r.Notes)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancelled after 100ms, returned after %s", d)
	}
}

// Once one key is illegal, an intractable other key gets only a grace of
// limit/30, not the whole limit.
func TestIllegalKeyCutsHardKeyShort(t *testing.T) {
	h := hardHistory("hard", 40)
	h.Write(50, 2, 3, history.Ok, "bad", "1").Read(51, 4, 5, "bad", "2")
	c := Checker{Model: registerModel(true), TimeLimit: 30 * time.Second}
	start := time.Now()
	r := c.Check(context.Background(), analysis.Input{History: h.Ops})
	d := time.Since(start)
	analysistest.WantResult(t, r, analysis.Invalid)
	if d > 10*time.Second || r.Stats["keys_undecided"] != 1 || !strings.Contains(strings.Join(r.Notes, " "), "found invalid") {
		t.Fatalf("took %s, stats %v, notes %q: expected ~1s, one undecided register, and a note why", d, r.Stats, r.Notes)
	}
}

// A history with no operation of the model is valid, as in Knossos (one
// of its "good" histories holds nemesis entries only), with a note.
func TestEmptyHistoryIsValid(t *testing.T) {
	r := analysistest.RunChecker(t, "cas-register", analysis.Input{History: new(analysistest.History).Add(0, history.Nemesis, history.Invoke, "pause-start", nil).Ops})
	if r.Verdict != analysis.Valid || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no operation took effect: the history has no cas/read/write operation") {
		t.Fatalf("got %s %q, expected valid with a note", r.Verdict, r.Notes)
	}
}

// A history whose every operation failed is valid, as in Knossos: nothing
// happened, which is linearizable.
func TestAllFailedIsValid(t *testing.T) {
	for _, c := range []struct {
		model string
		h     *analysistest.History
	}{
		{"register", new(analysistest.History).Write(0, 0, 1, history.Fail, "x", "1").Add(2, 1, history.Invoke, registerop.FRead, analysistest.Reg("x", "")).
			Add(3, 1, history.Fail, registerop.FRead, analysistest.Reg("x", ""))},
		{"cas-register", new(analysistest.History).Cas(0, 0, 1, history.Fail, "x", "4", "4").Write(1, 0, 2, history.Fail, "x", "0")},
		{"multi-register", new(analysistest.History).Add(0, 0, history.Invoke, txnop.FTxn, []txnop.Step{{F: "w", Key: "x", Value: json.RawMessage("1")}}).
			Add(1, 0, history.Fail, txnop.FTxn, nil)},
		{"mutex", new(analysistest.History).Add(0, 0, history.Invoke, lockop.FAcquire, nil).Add(1, 0, history.Fail, lockop.FAcquire, nil)},
		{"kv", new(analysistest.History).Add(0, 0, history.Invoke, fPut, analysistest.Reg("k", `"a"`)).Add(1, 0, history.Fail, fPut, analysistest.Reg("k", `"a"`))},
	} {
		r := analysistest.RunChecker(t, c.model, analysis.Input{History: c.h.Ops})
		if r.Verdict != analysis.Valid || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no operation took effect") {
			t.Errorf("%s: %s %q, expected valid with a note that no operation took effect", c.model, r.Verdict, r.Notes)
		}
	}
}

func TestVisualization(t *testing.T) {
	h := new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").
		Add(1.5, history.Nemesis, history.Invoke, "pause-start", nil).
		Add(1.6, history.Nemesis, history.Info, "pause-start", []string{"n1"}).
		Write(0, 2, 3, history.Ok, "x", "2").Read(1, 4, 5, "x", "1").
		Add(5.5, history.Nemesis, history.Invoke, "pause-end", []string{"n1"}).
		Add(5.6, history.Nemesis, history.Info, "pause-end", []string{"n1"}).
		Add(6, history.Nemesis, history.Invoke, "partition-start", nil).
		Add(6.1, history.Nemesis, history.Info, "partition-start", []string{"n2", "n3"}).
		Write(0, 7, 8, history.Ok, "a/b", "1").Read(1, 9, 10, "a/b", "2")
	dir := t.TempDir()
	r := analysistest.RunChecker(t, "cas-register", analysis.Input{History: h.Ops, Dir: dir})
	analysistest.WantResult(t, r, analysis.Invalid)
	b, err := os.ReadFile(filepath.Join(dir, "linearizability-x.html"))
	if err != nil {
		t.Fatalf("%v; notes %q", err, r.Notes)
	}
	for _, want := range []string{`"Description":"pause n1"`, `"Description":"partition n2 n3"`, "never healed", `"Tag":"nemesis pause"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("visualization lacks the annotation %s", want)
		}
	}
	if len(r.Findings) != 2 || !strings.Contains(r.Findings[1].Explanation, "linearizability-x.html") {
		t.Fatalf("findings %+v: expected two, the second naming linearizability-x.html", r.Findings)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "linearizability-_a_b_*.html"))
	if len(m) != 1 || !strings.Contains(r.Findings[0].Explanation, filepath.Base(m[0])) {
		t.Fatalf("key a/b: files %v, explanation %q: expected one file with a safe name, named in the finding", m, r.Findings[0].Explanation)
	}
}

func TestCanonicalJSON(t *testing.T) {
	same := [][]string{
		{"1", "1.0", "1e0", " 1 ", "10e-1"},
		{"-0", "0", "0.0"},
		{`{"a":1,"b":[true,null]}`, `{ "b": [true, null], "a": 1.0 }`},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{`"<&>"`, `"\u003c\u0026\u003e"`},
		{"1e22", "10000000000000000000000", "1E+22", "1.0e22", "0.00001e27"},
		{"9007199254740992", "9007199254740992.0", "9.007199254740992e15"},
		{"1.5", "1.50", "15e-1", "0.15E1"},
		{"-0.001", "-1e-3", "-0.0010"},
		{"1e1000000000", "10e999999999", "0.1e1000000001"}, // without a gigabyte of zeros
		{"1e-1000", "0.1e-999"},
	}
	for _, group := range same {
		vt := newValueTable()
		want, err := vt.id(json.RawMessage(group[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range group[1:] {
			if id, err := vt.id(json.RawMessage(s)); err != nil || id != want {
				t.Errorf("%s and %s: ids %d and %d (%v), expected equal", group[0], s, want, id, err)
			}
		}
	}
	vt := newValueTable()
	a, _ := vt.id(json.RawMessage("123456789012345678901234567890"))
	b, _ := vt.id(json.RawMessage("123456789012345678901234567891"))
	if a == b {
		t.Error("big integers that differ compared equal")
	}
	if _, err := vt.id(json.RawMessage("1 2")); err == nil {
		t.Error("two values accepted as one")
	}
	for _, pair := range [][2]string{
		{"0.1", "0.10000000000000001"}, // one float64, two numbers
		{"9007199254740993", "9007199254740992"},
		{"1e1000000000", "1e1000000001"},
		{"1", `"~d1.0"`}, // EDN's 1 and 1.0 (foreign/jepsen/tagged.go)
		{`"x"`, `"~:x"`},
		{`"~d##NaN"`, `"~d##NaN"`}, // NaN equals nothing, itself included
		{`["~d##NaN"]`, `["~d##NaN"]`},
	} {
		a, errA := vt.id(json.RawMessage(pair[0]))
		b, errB := vt.id(json.RawMessage(pair[1]))
		if errA != nil || errB != nil || a == b {
			t.Errorf("%s and %s: ids %d and %d (%v, %v), expected different", pair[0], pair[1], a, b, errA, errB)
		}
	}
	if _, err := vt.id(json.RawMessage("1e99999999999999999999")); err == nil {
		t.Error("an exponent beyond range accepted")
	}
}

func TestProgressCountsKeys(t *testing.T) {
	h := new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Write(1, 0, 1, history.Ok, "y", "2").Write(2, 0, 1, history.Ok, "z", "3")
	var mu sync.Mutex
	var calls []string
	in := analysis.Input{History: h.Ops, Progress: func(checker string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, fmt.Sprintf("%s %d/%d", checker, done, total))
	}}
	analysis.Run(context.Background(), []analysis.Checker{Register}, in)
	// The checker is named as it starts, then each of its three keys counts.
	if got := strings.Join(calls, ", "); got != "register 0/0, register 1/3, register 2/3, register 3/3" {
		t.Errorf("progress calls: %s", got)
	}
}

// A failure that was not one: the witness names the failed operation whose
// taking effect would explain an illegal key, and only when it does.
func TestFailedThatTookEffect(t *testing.T) {
	refused := func(h *analysistest.History) *analysistest.History {
		h.Ops[len(h.Ops)-1].Error = "wrong last sequence"
		return h
	}
	tests := []struct {
		name string
		h    *analysistest.History
		want string // in the explanation; "" for no failed operation named
	}{
		{"refused cas read after", refused(new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(1, 2, 3, history.Fail, "x", "1", "2")).Read(2, 4, 5, "x", "2"),
			"it is linearizable if #2 p1 cas(1, 2), answered with a failure (wrong last sequence), took effect"},
		{"failed write read after", refused(new(analysistest.History).Write(0, 0, 1, history.Fail, "x", "1")).Read(1, 2, 3, "x", "1"),
			"it is linearizable if #0 p0 write(1), answered with a failure (wrong last sequence), took effect"},
		{"failure without a message", new(analysistest.History).Write(0, 0, 1, history.Fail, "x", "1").Read(1, 2, 3, "x", "1"),
			"it is linearizable if #0 p0 write(1), answered with a failure, took effect"},
		{"the nearest of two failures that explain it", refused(new(analysistest.History).Write(0, 0, 1, history.Fail, "x", "1")).Write(1, 0.5, 1.5, history.Fail, "x", "1").Read(2, 2, 3, "x", "1"),
			"it is linearizable if #2 p1 write(1), answered with a failure, took effect"},
		{"stale read beside an unrelated failure", refused(new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Write(0, 2, 3, history.Ok, "x", "2").
			Cas(1, 3.5, 3.6, history.Fail, "x", "5", "6")).Read(2, 4, 5, "x", "1"), ""},
		{"failed cas that cannot explain the read", refused(new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(1, 2, 3, history.Fail, "x", "1", "2")).Read(2, 4, 5, "x", "3"), ""},
		{"failure on another key", refused(new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Write(1, 2, 3, history.Fail, "y", "2")).Read(2, 4, 5, "x", "2"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFailureNamed(t, "cas-register", tt.h.Ops, tt.want) })
	}
	t.Run("a failed acquire, then a release", func(t *testing.T) {
		lock := lockop.Value{Lock: "m"}
		h := new(analysistest.History).Add(0, 0, history.Invoke, lockop.FAcquire, lock).Add(1, 0, history.Fail, lockop.FAcquire, lock).
			Add(2, 0, history.Invoke, lockop.FRelease, lock).Add(3, 0, history.Ok, lockop.FRelease, lock)
		wantFailureNamed(t, "mutex", h.Ops, "it is linearizable if #0 p0 acquire")
	})
}

// wantFailureNamed checks that checker finds h invalid and that its first
// finding says want of a failure that took effect, listing that failure's
// entries, and that h is valid with that failure made info; or, want "",
// that it names no failure.
func wantFailureNamed(t *testing.T, checker string, h []history.Op, want string) {
	t.Helper()
	r := analysistest.RunChecker(t, checker, analysis.Input{History: h})
	analysistest.WantResult(t, r, analysis.Invalid)
	f := r.Findings[0]
	if want == "" {
		if strings.Contains(f.Explanation, "answered with a failure") {
			t.Fatalf("explanation %q names a failed operation, though none explains the key", f.Explanation)
		}
		for _, op := range f.Ops {
			if op.Type == history.Fail {
				t.Fatalf("finding lists the failure %v, which explains nothing", op)
			}
		}
		return
	}
	if !strings.Contains(f.Explanation, want) {
		t.Fatalf("explanation %q, expected it to say %q", f.Explanation, want)
	}
	inv, ok := namedFailure(f.Explanation)
	if !ok {
		t.Fatalf("explanation %q: no operation named", f.Explanation)
	}
	// Cross-check through the checker itself: with that failure made an
	// unknown outcome, the history is linearizable.
	unknown := append([]history.Op(nil), h...)
	if err := completeUnknown(unknown, inv); err != nil {
		t.Fatal(err)
	}
	listed := map[int]bool{}
	for _, op := range f.Ops {
		listed[op.Index] = true
	}
	for i := range h {
		if unknown[i].Type != h[i].Type && (!listed[inv] || !listed[i]) { // i: the completion made unknown
			t.Fatalf("finding ops %v: expected the failure named, #%d, and its completion #%d", f.Ops, inv, i)
		}
	}
	analysistest.WantResult(t, analysistest.RunChecker(t, checker, analysis.Input{History: unknown}), analysis.Valid)
}
