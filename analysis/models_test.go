package analysis

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

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// lh builds a history for the linearizability checkers, entry by entry in
// file order; times are in seconds.
type lh struct{ ops []history.Op }

func (h *lh) add(sec float64, proc int, typ history.Type, f string, v any) *lh {
	op := history.Op{Index: len(h.ops), Time: time.Duration(sec * float64(time.Second)), Type: typ, Process: proc, F: f}
	if v != nil {
		op.Value = history.MustValue(v)
	}
	h.ops = append(h.ops, op)
	return h
}

// reg is a register value; v, from and to are JSON texts ("" = absent).
func reg(key, v string) registerop.Value {
	rv := registerop.Value{Key: key}
	if v != "" {
		rv.Value = json.RawMessage(v)
	}
	return rv
}

func casv(key, from, to string) registerop.Value {
	return registerop.Value{Key: key, From: json.RawMessage(from), To: json.RawMessage(to)}
}

// write adds a write of v to key by proc over [t1, t2] ending in typ.
func (h *lh) write(proc int, t1, t2 float64, typ history.Type, key, v string) *lh {
	return h.add(t1, proc, history.Invoke, registerop.FWrite, reg(key, v)).add(t2, proc, typ, registerop.FWrite, reg(key, v))
}

// read adds an ok read of key returning got over [t1, t2].
func (h *lh) read(proc int, t1, t2 float64, key, got string) *lh {
	return h.add(t1, proc, history.Invoke, registerop.FRead, reg(key, "")).add(t2, proc, history.Ok, registerop.FRead, reg(key, got))
}

func (h *lh) cas(proc int, t1, t2 float64, typ history.Type, key, from, to string) *lh {
	return h.add(t1, proc, history.Invoke, registerop.FCas, casv(key, from, to)).add(t2, proc, typ, registerop.FCas, casv(key, from, to))
}

// mismatch adds a cas that completed without applying: the value was not from.
func (h *lh) mismatch(proc int, t1, t2 float64, key, from, to string) *lh {
	done := casv(key, from, to)
	done.Mismatch = true
	return h.add(t1, proc, history.Invoke, registerop.FCas, casv(key, from, to)).add(t2, proc, history.Ok, registerop.FCas, done)
}

func runChecker(t *testing.T, name string, in Input) Result {
	t.Helper()
	c, ok := Checkers.Lookup(name)
	if !ok {
		t.Fatalf("no checker %q", name)
	}
	return c.Check(context.Background(), in)
}

func wantResult(t *testing.T, r Result, v Verdict) {
	t.Helper()
	if r.Verdict != v {
		t.Fatalf("verdict %s, expected %s; notes %q; findings %+v", r.Verdict, v, r.Notes, r.Findings)
	}
	if v == Invalid {
		if len(r.Findings) == 0 || r.Findings[0].Kind != "nonlinearizable" || len(r.Findings[0].Ops) == 0 {
			t.Fatalf("invalid without a nonlinearizable finding and its ops: %+v", r.Findings)
		}
	}
}

func TestRegister(t *testing.T) {
	tests := []struct {
		name string
		h    *lh
		in   Input
		want Verdict
	}{
		{"sequential", new(lh).write(0, 0, 1, history.Ok, "x", "1").read(1, 2, 3, "x", "1"), Input{}, Valid},
		{"read concurrent with write sees either", new(lh).write(0, 0, 1, history.Ok, "x", "1").
			add(2, 0, history.Invoke, registerop.FWrite, reg("x", "2")).read(1, 2.1, 2.2, "x", "1").read(2, 2.3, 2.4, "x", "2").
			add(3, 0, history.Ok, registerop.FWrite, reg("x", "2")), Input{}, Valid},
		{"stale read", new(lh).write(0, 0, 1, history.Ok, "x", "1").write(0, 2, 3, history.Ok, "x", "2").read(1, 4, 5, "x", "1"), Input{}, Invalid},
		{"read goes back", new(lh).write(0, 0, 1, history.Ok, "x", "1").add(2, 0, history.Invoke, registerop.FWrite, reg("x", "2")).
			read(1, 2.1, 2.2, "x", "2").read(2, 2.3, 2.4, "x", "1").add(3, 0, history.Ok, registerop.FWrite, reg("x", "2")), Input{}, Invalid},
		{"info write may have happened", new(lh).write(0, 0, 1, history.Info, "x", "1").read(1, 2, 3, "x", "1"), Input{}, Valid},
		{"info write may not have happened", new(lh).write(0, 0, 1, history.Info, "x", "1").read(1, 2, 3, "x", "null"), Input{}, Valid},
		{"info write happens late", new(lh).write(0, 0, 1, history.Info, "x", "1").read(1, 2, 3, "x", "null").read(1, 4, 5, "x", "1"), Input{}, Valid},
		{"info write cannot unhappen", new(lh).write(0, 0, 1, history.Info, "x", "1").read(1, 2, 3, "x", "1").read(1, 4, 5, "x", "null"), Input{}, Invalid},
		{"never completed write may have happened", new(lh).add(0, 0, history.Invoke, registerop.FWrite, reg("x", "1")).read(1, 2, 3, "x", "1"), Input{}, Valid},
		{"fail write never happened", new(lh).write(0, 0, 1, history.Fail, "x", "1").read(1, 2, 3, "x", "1"), Input{}, Invalid},
		{"fail write ignored", new(lh).write(0, 0, 1, history.Fail, "x", "1").read(1, 2, 3, "x", "null"), Input{}, Valid},
		{"nil read is absent", new(lh).write(0, 0, 1, history.Ok, "x", "1").read(1, 2, 3, "x", "null"), Input{}, Invalid},
		{"nil read unknown (Knossos)", new(lh).write(0, 0, 1, history.Ok, "x", "1").read(1, 2, 3, "x", "null"), Input{NilReadsUnknown: true}, Valid},
		{"initial absent", new(lh).read(1, 0, 1, "x", "0"), Input{}, Invalid},
		{"initial 0", new(lh).read(1, 0, 1, "x", "0"), Input{Initial: json.RawMessage("0")}, Valid},
		{"initial 0 is not absent", new(lh).read(1, 0, 1, "x", "null"), Input{Initial: json.RawMessage("0")}, Invalid},
		{"values compared canonically", new(lh).write(0, 0, 1, history.Ok, "x", `1.0`).read(1, 2, 3, "x", "1").
			write(0, 4, 5, history.Ok, "y", `{"b": [1, 2], "a": "s"}`).read(1, 6, 7, "y", `{"a":"s","b":[1,2.0]}`), Input{}, Valid},
		// Numbers are mathematical values, compared exactly.
		{"1e22 is 10^22", new(lh).write(0, 0, 1, history.Ok, "x", `1e22`).read(1, 2, 3, "x", "10000000000000000000000"), Input{}, Valid},
		{"2^53 written two ways", new(lh).write(0, 0, 1, history.Ok, "x", `9007199254740992`).read(1, 2, 3, "x", "9007199254740992.0"), Input{}, Valid},
		{"no rounding to float64", new(lh).write(0, 0, 1, history.Ok, "x", `0.1`).read(1, 2, 3, "x", "0.10000000000000001"), Input{}, Invalid},
		{"no rounding of big integers", new(lh).write(0, 0, 1, history.Ok, "x", `9007199254740993`).read(1, 2, 3, "x", "9007199254740992"), Input{}, Invalid},
		{"keys are independent", new(lh).write(0, 0, 1, history.Ok, "x", "1").read(1, 2, 3, "y", "null"), Input{}, Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.History = tt.h.ops
			for _, name := range []string{"register", "cas-register"} {
				wantResult(t, runChecker(t, name, tt.in), tt.want)
			}
		})
	}
}

func TestCasRegister(t *testing.T) {
	tests := []struct {
		name string
		h    *lh
		want Verdict
	}{
		{"cas applies when equal", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Ok, "x", "1", "2").read(1, 4, 5, "x", "2"), Valid},
		{"cas ok but value differed", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Ok, "x", "3", "4"), Invalid},
		{"cas ok on absent", new(lh).cas(0, 0, 1, history.Ok, "x", "0", "1"), Invalid},
		{"failed cas ignored", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Fail, "x", "1", "2").read(1, 4, 5, "x", "1"), Valid},
		{"info cas may apply", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Info, "x", "1", "2").read(1, 4, 5, "x", "2"), Valid},
		{"info cas may not apply", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Info, "x", "1", "2").read(1, 4, 5, "x", "1"), Valid},
		{"info cas that cannot apply changes nothing", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Info, "x", "5", "2").read(1, 4, 5, "x", "2"), Invalid},
		{"two cas from the same value", new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(0, 2, 3, history.Ok, "x", "1", "2").cas(1, 2, 3, history.Ok, "x", "1", "3"), Invalid},
		// A cas that ran and did not match (porcupine's etcd logs) is evidence.
		{"mismatch while the value matched", new(lh).write(0, 0, 1, history.Ok, "x", "1").mismatch(0, 2, 3, "x", "1", "2"), Invalid},
		{"mismatch while the value differed", new(lh).write(0, 0, 1, history.Ok, "x", "3").mismatch(0, 2, 3, "x", "1", "2").read(1, 4, 5, "x", "3"), Valid},
		{"mismatch changes nothing", new(lh).write(0, 0, 1, history.Ok, "x", "3").mismatch(0, 2, 3, "x", "1", "2").read(1, 4, 5, "x", "2"), Invalid},
		{"mismatch ordered before a concurrent write", new(lh).write(0, 0, 1, history.Ok, "x", "3").add(2, 1, history.Invoke, registerop.FWrite, reg("x", "1")).
			mismatch(0, 2.1, 2.2, "x", "1", "2").add(3, 1, history.Ok, registerop.FWrite, reg("x", "1")), Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, runChecker(t, "cas-register", Input{History: tt.h.ops}), tt.want)
		})
	}
	t.Run("plain register refuses cas", func(t *testing.T) {
		r := runChecker(t, "register", Input{History: new(lh).cas(0, 0, 1, history.Ok, "x", "1", "2").ops})
		if r.Verdict != Unknown || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "cas-register") {
			t.Fatalf("got %s %q, expected unknown with a note pointing to cas-register", r.Verdict, r.Notes)
		}
	})
}

func TestRegisterFinding(t *testing.T) {
	h := new(lh).write(0, 0, 1, history.Ok, "a", "1").read(1, 2, 3, "a", "1").
		write(0, 4, 5, history.Ok, "b", "1").write(0, 6, 7, history.Ok, "b", "2").read(1, 8, 9, "b", "1")
	r := runChecker(t, "cas-register", Input{History: h.ops})
	wantResult(t, r, Invalid)
	f := r.Findings[0]
	if r.FindingsTotal != 1 || !strings.HasPrefix(f.Explanation, `Register "b"`) || !strings.Contains(f.Explanation, "read() → 1") {
		t.Fatalf("finding %q (of %d): expected one, naming register b and its stale read", f.Explanation, r.FindingsTotal)
	}
	has := map[int]bool{}
	for _, op := range f.Ops {
		has[op.Index] = true
	}
	if !has[8] || !has[9] || !has[6] { // the stale read and the write it missed
		t.Fatalf("finding ops %v: expected the read #8-#9 and the write #6", f.Ops)
	}
	if r.Stats["keys"] != 2 || r.Stats["keys_illegal"] != 1 || r.Stats["operations"] != 5 {
		t.Fatalf("stats %v", r.Stats)
	}
}

func TestFindingOpsBounded(t *testing.T) {
	h := new(lh).write(0, 0, 1, history.Ok, "x", "1")
	for p := 1; p <= 30; p++ { // 30 concurrent reads of a value never written
		h.add(2, p, history.Invoke, registerop.FRead, reg("x", ""))
	}
	for p := 1; p <= 30; p++ {
		h.add(3, p, history.Ok, registerop.FRead, reg("x", "7"))
	}
	r := runChecker(t, "cas-register", Input{History: h.ops})
	wantResult(t, r, Invalid)
	if n := len(r.Findings[0].Ops); n > MaxFindings {
		t.Fatalf("finding lists %d ops, expected at most %d", n, MaxFindings)
	}
}

func TestKV(t *testing.T) {
	kv := func(key, v string) registerop.Value { return reg(key, v) }
	op := func(h *lh, proc int, t1, t2 float64, typ history.Type, f, key, arg, got string) *lh {
		inv := kv(key, arg)
		if f == "get" {
			inv = kv(key, "")
		}
		return h.add(t1, proc, history.Invoke, f, inv).add(t2, proc, typ, f, kv(key, CmpOr(got, arg)))
	}
	ok := history.Ok
	h := new(lh)
	op(h, 0, 0, 1, ok, "get", "k", "", `""`)
	op(h, 0, 2, 3, ok, "put", "k", `"a"`, "")
	op(h, 1, 4, 5, ok, "append", "k", `"b"`, "")
	op(h, 2, 6, 7, ok, "get", "k", "", `"ab"`)
	op(h, 1, 8, 9, history.Info, "append", "k", `"c"`, "")
	op(h, 2, 10, 11, ok, "get", "k", "", `"abc"`)
	wantResult(t, runChecker(t, "kv", Input{History: h.ops}), Valid)

	op(h, 2, 12, 13, ok, "get", "k", "", `"ab"`) // the append cannot be undone
	wantResult(t, runChecker(t, "kv", Input{History: h.ops}), Invalid)

	h = new(lh)
	op(h, 0, 0, 1, ok, "get", "k", "", `"x"`)
	wantResult(t, runChecker(t, "kv", Input{History: h.ops}), Invalid)
	wantResult(t, runChecker(t, "kv", Input{History: h.ops, Initial: json.RawMessage(`"x"`)}), Valid)
}

func TestMultiRegister(t *testing.T) {
	step := func(f, key, v string) txnop.Step {
		s := txnop.Step{F: f, Key: key}
		if v != "" {
			s.Value = json.RawMessage(v)
		}
		return s
	}
	txn := func(h *lh, proc int, t1, t2 float64, typ history.Type, inv, done []txnop.Step) *lh {
		return h.add(t1, proc, history.Invoke, txnop.FTxn, inv).add(t2, proc, typ, txnop.FTxn, done)
	}
	writeXY := []txnop.Step{step("w", "x", "1"), step("w", "y", "1")}
	readXY := []txnop.Step{step("r", "x", ""), step("r", "y", "")}
	init := Input{Initial: json.RawMessage(`{"x": 0, "y": 0}`)}
	tests := []struct {
		name string
		h    *lh
		in   Input
		want Verdict
	}{
		{"reads see a whole txn", txn(txn(new(lh), 0, 0, 1, history.Ok, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "1")}), init, Valid},
		{"torn read", txn(txn(new(lh), 0, 0, 1, history.Ok, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "0")}), init, Invalid},
		{"nil read is unknown", txn(txn(new(lh), 0, 0, 1, history.Ok, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "null")}), init, Valid},
		{"initial values", txn(new(lh), 1, 0, 1, history.Ok, readXY, []txnop.Step{step("r", "x", "0"), step("r", "y", "0")}), init, Valid},
		{"one initial value for all", txn(new(lh), 1, 0, 1, history.Ok, readXY, []txnop.Step{step("r", "x", "0"), step("r", "y", "0")}),
			Input{Initial: json.RawMessage("0")}, Valid},
		{"reads own writes", txn(new(lh), 0, 0, 1, history.Ok, []txnop.Step{step("w", "x", "5"), step("r", "x", "")},
			[]txnop.Step{step("w", "x", "5"), step("r", "x", "5")}), init, Valid},
		{"misses own write", txn(new(lh), 0, 0, 1, history.Ok, []txnop.Step{step("w", "x", "5"), step("r", "x", "")},
			[]txnop.Step{step("w", "x", "5"), step("r", "x", "0")}), init, Invalid},
		{"info txn may have happened", txn(txn(new(lh), 0, 0, 1, history.Info, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "1")}), init, Valid},
		{"fail txn did not happen", txn(txn(new(lh), 0, 0, 1, history.Fail, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "1")}), init, Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.History = tt.h.ops
			wantResult(t, runChecker(t, "multi-register", tt.in), tt.want)
		})
	}
}

func TestMutex(t *testing.T) {
	acq := func(h *lh, proc int, t1, t2 float64, typ history.Type) *lh {
		return h.add(t1, proc, history.Invoke, lockop.FAcquire, nil).add(t2, proc, typ, lockop.FAcquire, nil)
	}
	rel := func(h *lh, proc int, t1, t2 float64, typ history.Type) *lh {
		return h.add(t1, proc, history.Invoke, lockop.FRelease, nil).add(t2, proc, typ, lockop.FRelease, nil)
	}
	tests := []struct {
		name string
		h    *lh
		want Verdict
	}{
		{"take turns", rel(acq(rel(acq(new(lh), 0, 0, 1, history.Ok), 0, 2, 3, history.Ok), 1, 4, 5, history.Ok), 1, 6, 7, history.Ok), Valid},
		{"two holders", acq(acq(new(lh), 0, 0, 1, history.Ok), 1, 2, 3, history.Ok), Invalid},
		{"release when free", rel(new(lh), 0, 0, 1, history.Ok), Invalid},
		{"info acquire may not have happened", acq(acq(new(lh), 0, 0, 1, history.Info), 1, 2, 3, history.Ok), Valid},
		{"failed acquire ignored", acq(acq(new(lh), 0, 0, 1, history.Ok), 1, 2, 3, history.Fail), Valid},
		{"concurrent release lets the next in", acq(rel(acq(new(lh), 0, 0, 1, history.Ok), 0, 2, 5, history.Ok), 1, 3, 4, history.Ok), Valid},
		{"other ops ignored", acq(new(lh), 0, 0, 1, history.Ok).add(2, 0, history.Invoke, lockop.FWrite, lockop.WriteValue{Key: "k"}).
			add(3, 0, history.Ok, lockop.FWrite, lockop.WriteValue{Key: "k"}), Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, runChecker(t, "mutex", Input{History: tt.h.ops}), tt.want)
		})
	}
	t.Run("locks by name", func(t *testing.T) {
		h := new(lh).add(0, 0, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "a"}).add(1, 0, history.Ok, lockop.FAcquire, lockop.Value{Lock: "a"}).
			add(2, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "b"}).add(3, 1, history.Ok, lockop.FAcquire, lockop.Value{Lock: "b"})
		wantResult(t, runChecker(t, "mutex", Input{History: h.ops}), Valid)
	})
}

// hardHistory has one register with n concurrent writes of distinct values
// and a concurrent read of a value none wrote: illegal, but porcupine must
// try every subset of the writes to know it.
func hardHistory(key string, n int) *lh {
	h := new(lh)
	for p := range n {
		h.add(0, p, history.Invoke, registerop.FWrite, reg(key, strconv.Itoa(p+1)))
	}
	h.add(0, n, history.Invoke, registerop.FRead, reg(key, ""))
	for p := range n {
		h.add(1, p, history.Ok, registerop.FWrite, reg(key, strconv.Itoa(p+1)))
	}
	return h.add(1, n, history.Ok, registerop.FRead, reg(key, "-1"))
}

func TestTimeLimitGivesUnknown(t *testing.T) {
	c := LinearChecker{model: registerModel(true), TimeLimit: 100 * time.Millisecond}
	start := time.Now()
	r := c.Check(context.Background(), Input{History: hardHistory("x", 40).ops})
	if r.Verdict != Unknown || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "time limit") {
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
	c, _ := Checkers.Lookup("cas-register")
	r := c.Check(ctx, Input{History: hardHistory("x", 40).ops})
	if r.Verdict != Unknown || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "cancelled") {
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
	h.write(50, 2, 3, history.Ok, "bad", "1").read(51, 4, 5, "bad", "2")
	c := LinearChecker{model: registerModel(true), TimeLimit: 30 * time.Second}
	start := time.Now()
	r := c.Check(context.Background(), Input{History: h.ops})
	d := time.Since(start)
	wantResult(t, r, Invalid)
	if d > 10*time.Second || r.Stats["keys_undecided"] != 1 || !strings.Contains(strings.Join(r.Notes, " "), "found invalid") {
		t.Fatalf("took %s, stats %v, notes %q: expected ~1s, one undecided register, and a note why", d, r.Stats, r.Notes)
	}
}

// A history with no operation of the model is valid, as in Knossos (one
// of its "good" histories holds nemesis entries only), with a note.
func TestEmptyHistoryIsValid(t *testing.T) {
	r := runChecker(t, "cas-register", Input{History: new(lh).add(0, history.Nemesis, history.Invoke, "pause-start", nil).ops})
	if r.Verdict != Valid || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no operation took effect: the history has no cas/read/write operation") {
		t.Fatalf("got %s %q, expected valid with a note", r.Verdict, r.Notes)
	}
}

// A history whose every operation failed is valid, as in Knossos: nothing
// happened, which is linearizable.
func TestAllFailedIsValid(t *testing.T) {
	for _, c := range []struct {
		model string
		h     *lh
	}{
		{"register", new(lh).write(0, 0, 1, history.Fail, "x", "1").add(2, 1, history.Invoke, registerop.FRead, reg("x", "")).
			add(3, 1, history.Fail, registerop.FRead, reg("x", ""))},
		{"cas-register", new(lh).cas(0, 0, 1, history.Fail, "x", "4", "4").write(1, 0, 2, history.Fail, "x", "0")},
		{"multi-register", new(lh).add(0, 0, history.Invoke, txnop.FTxn, []txnop.Step{{F: "w", Key: "x", Value: json.RawMessage("1")}}).
			add(1, 0, history.Fail, txnop.FTxn, nil)},
		{"mutex", new(lh).add(0, 0, history.Invoke, lockop.FAcquire, nil).add(1, 0, history.Fail, lockop.FAcquire, nil)},
		{"kv", new(lh).add(0, 0, history.Invoke, fPut, reg("k", `"a"`)).add(1, 0, history.Fail, fPut, reg("k", `"a"`))},
	} {
		r := runChecker(t, c.model, Input{History: c.h.ops})
		if r.Verdict != Valid || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no operation took effect") {
			t.Errorf("%s: %s %q, expected valid with a note that no operation took effect", c.model, r.Verdict, r.Notes)
		}
	}
}

func TestVisualization(t *testing.T) {
	h := new(lh).write(0, 0, 1, history.Ok, "x", "1").
		add(1.5, history.Nemesis, history.Invoke, "pause-start", nil).
		add(1.6, history.Nemesis, history.Info, "pause-start", []string{"n1"}).
		write(0, 2, 3, history.Ok, "x", "2").read(1, 4, 5, "x", "1").
		add(5.5, history.Nemesis, history.Invoke, "pause-end", []string{"n1"}).
		add(5.6, history.Nemesis, history.Info, "pause-end", []string{"n1"}).
		add(6, history.Nemesis, history.Invoke, "partition-start", nil).
		add(6.1, history.Nemesis, history.Info, "partition-start", []string{"n2", "n3"}).
		write(0, 7, 8, history.Ok, "a/b", "1").read(1, 9, 10, "a/b", "2")
	dir := t.TempDir()
	r := runChecker(t, "cas-register", Input{History: h.ops, Dir: dir})
	wantResult(t, r, Invalid)
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
	h := new(lh).write(0, 0, 1, history.Ok, "x", "1").write(1, 0, 1, history.Ok, "y", "2").write(2, 0, 1, history.Ok, "z", "3")
	var mu sync.Mutex
	var calls []string
	in := Input{History: h.ops, Progress: func(checker string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, fmt.Sprintf("%s %d/%d", checker, done, total))
	}}
	Run(context.Background(), []string{"register"}, in)
	// The checker is named as it starts, then each of its three keys counts.
	if got := strings.Join(calls, ", "); got != "register 0/0, register 1/3, register 2/3, register 3/3" {
		t.Errorf("progress calls: %s", got)
	}
}

// A failure that was not one: the witness names the failed operation whose
// taking effect would explain an illegal key, and only when it does.
func TestFailedThatTookEffect(t *testing.T) {
	refused := func(h *lh) *lh {
		h.ops[len(h.ops)-1].Error = "wrong last sequence"
		return h
	}
	tests := []struct {
		name string
		h    *lh
		want string // in the explanation; "" for no failed operation named
	}{
		{"refused cas read after", refused(new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(1, 2, 3, history.Fail, "x", "1", "2")).read(2, 4, 5, "x", "2"),
			"it is linearizable if #2 p1 cas(1, 2), answered with a failure (wrong last sequence), took effect"},
		{"failed write read after", refused(new(lh).write(0, 0, 1, history.Fail, "x", "1")).read(1, 2, 3, "x", "1"),
			"it is linearizable if #0 p0 write(1), answered with a failure (wrong last sequence), took effect"},
		{"failure without a message", new(lh).write(0, 0, 1, history.Fail, "x", "1").read(1, 2, 3, "x", "1"),
			"it is linearizable if #0 p0 write(1), answered with a failure, took effect"},
		{"the nearest of two failures that explain it", refused(new(lh).write(0, 0, 1, history.Fail, "x", "1")).write(1, 0.5, 1.5, history.Fail, "x", "1").read(2, 2, 3, "x", "1"),
			"it is linearizable if #2 p1 write(1), answered with a failure, took effect"},
		{"stale read beside an unrelated failure", refused(new(lh).write(0, 0, 1, history.Ok, "x", "1").write(0, 2, 3, history.Ok, "x", "2").
			cas(1, 3.5, 3.6, history.Fail, "x", "5", "6")).read(2, 4, 5, "x", "1"), ""},
		{"failed cas that cannot explain the read", refused(new(lh).write(0, 0, 1, history.Ok, "x", "1").cas(1, 2, 3, history.Fail, "x", "1", "2")).read(2, 4, 5, "x", "3"), ""},
		{"failure on another key", refused(new(lh).write(0, 0, 1, history.Ok, "x", "1").write(1, 2, 3, history.Fail, "y", "2")).read(2, 4, 5, "x", "2"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFailureNamed(t, "cas-register", tt.h.ops, tt.want) })
	}
	t.Run("a failed acquire, then a release", func(t *testing.T) {
		lock := lockop.Value{Lock: "m"}
		h := new(lh).add(0, 0, history.Invoke, lockop.FAcquire, lock).add(1, 0, history.Fail, lockop.FAcquire, lock).
			add(2, 0, history.Invoke, lockop.FRelease, lock).add(3, 0, history.Ok, lockop.FRelease, lock)
		wantFailureNamed(t, "mutex", h.ops, "it is linearizable if #0 p0 acquire")
	})
}

// wantFailureNamed checks that checker finds h invalid and that its first
// finding says want of a failure that took effect, listing that failure's
// entries, and that h is valid with that failure made info; or, want "",
// that it names no failure.
func wantFailureNamed(t *testing.T, checker string, h []history.Op, want string) {
	t.Helper()
	r := runChecker(t, checker, Input{History: h})
	wantResult(t, r, Invalid)
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
	wantResult(t, runChecker(t, checker, Input{History: unknown}), Valid)
}
