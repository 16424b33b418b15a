package txn

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// checkWith judges h with checker c.
func checkWith(t *testing.T, c analysis.Checker, h *hist) analysis.Result {
	t.Helper()
	r := c.Check(context.Background(), analysis.Input{History: h.ops})
	for _, f := range r.Findings {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	for _, n := range r.Notes {
		t.Logf("note: %s", n)
	}
	return r
}

// Elle's anomalies-prohibited-by and all-anomalies-implying, through the
// names users give: aliases, and anomaly names that stand for others.
func TestProhibited(t *testing.T) {
	for _, c := range []struct {
		o        Options
		has, not []string
	}{
		{Options{}, []string{"G1a", "G0", "G-single-item-realtime", "lost-update", "future-read"}, nil},
		{Options{ConsistencyModels: []string{"serializable"}}, []string{"G1a", "G2-item", "internal"}, []string{"G2-item-realtime", "G0-process", "G-single-item-process"}},
		{Options{ConsistencyModels: []string{"conflict-serializable"}}, []string{"G2-item"}, []string{"G2-item-process"}},
		{Options{ConsistencyModels: []string{"read-committed"}}, []string{"G1a", "G1b", "G1c", "G0"}, []string{"G-single-item", "G2-item", "lost-update"}},
		{Options{ConsistencyModels: []string{"strong-session-serializable"}}, []string{"G2-item-process", "G1c-process"}, []string{"G2-item-realtime"}},
		{Options{ConsistencyModels: []string{}, Anomalies: []string{"G1"}}, []string{"G1a", "G1b", "G1c", "G0"}, []string{"G-single-item", "G1c-process", "internal"}},
		{Options{ConsistencyModels: []string{}, Anomalies: []string{"G2"}}, []string{"G-single-item", "G2-item", "G-nonadjacent-item", "lost-update"}, []string{"G1a", "G2-item-process"}},
	} {
		p := c.o.prohibited()
		for _, a := range c.has {
			if !p[a] {
				t.Errorf("%+v: %s not prohibited", c.o, a)
			}
		}
		for _, a := range c.not {
			if p[a] {
				t.Errorf("%+v: %s prohibited", c.o, a)
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{}, {ConsistencyModels: []string{"PL-SI", "strong-session-snapshot-isolation", "strict-serializable"}}, {Anomalies: []string{"G1", "G-single", "G2-item-realtime"}}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	err := Options{ConsistencyModels: []string{"serialisable"}}.Validate()
	if err == nil || !strings.Contains(err.Error(), `unknown consistency model "serialisable"`) || !strings.Contains(err.Error(), "snapshot-isolation, ") {
		t.Errorf("bad model: %v", err)
	}
	if err := (Options{Anomalies: []string{"G3"}}).Validate(); err == nil || !strings.Contains(err.Error(), `unknown anomaly "G3"`) {
		t.Errorf("bad anomaly: %v", err)
	}
}

// Under serializable a stale read (a cycle only real time closes) is no
// anomaly: Elle does not even build the real-time graph. Under the default,
// strict serializable, it is G-single-item-realtime. Either way the output
// names the strongest models the history does not rule out.
func TestConsistencyModelChoice(t *testing.T) {
	var h hist
	h.tx(0, 0, 1, history.Ok, appendTo("x", 1))
	h.tx(1, 2, 3, history.Ok, readList("x"))
	r := checkWith(t, ListAppend{}, &h)
	expectKinds(t, r, "G-single-item-realtime")
	if s := r.Stats["strongest"]; !slices.Equal(s.([]string), []string{"linearizable", "session-serializable", "strong-read-committed", "strong-session-serializable"}) {
		t.Errorf("strongest models not ruled out: %v", s)
	}
	r = checkWith(t, WithOptions("list-append", Options{ConsistencyModels: []string{"serializable"}}), &h)
	if r.Verdict != analysis.Valid || len(r.Findings) != 0 {
		t.Fatalf("serializable: %s, %v", r.Verdict, kinds(r))
	}
	if s := r.Stats["strongest"]; !slices.Equal(s.([]string), []string{"strict-serializable"}) {
		t.Errorf("strongest models not ruled out: %v", s)
	}
	// Anomalies alone, with no model (Elle's :consistency-models nil).
	r = checkWith(t, WithOptions("list-append", Options{ConsistencyModels: []string{}, Anomalies: []string{"G1"}}), &h)
	if r.Verdict != analysis.Valid {
		t.Fatalf("G1 only: %s", r.Verdict)
	}
}

// garbage-read is chaos's own: by default it rules a history out; under a
// choice of models the verdict is Elle's, with the garbage read beside it.
func TestGarbageReadUnderChoice(t *testing.T) {
	var h hist
	h.tx(0, 0, 1, history.Ok, write("x", 1))
	h.tx(1, 2, 3, history.Ok, readReg("x", 2))
	expectKinds(t, checkWith(t, RWRegister{}, &h), "garbage-read")
	r := checkWith(t, WithOptions("rw-register", Options{ConsistencyModels: []string{"strict-serializable"}}), &h)
	if r.Verdict != analysis.Valid || kinds(r)[0] != "garbage-read" || len(r.Findings) != 1 {
		t.Fatalf("verdict %s, findings %v; want valid, with the garbage read", r.Verdict, kinds(r))
	}
}

// rw-register infers versions as Elle's options say (issue 35, item 17).
// Writes follow reads: each transaction read what the other then
// overwrote, so 1 < 2 < 1; without that assumption, only the G1c is left.
func TestRWRegisterWithoutWFR(t *testing.T) {
	var h hist
	h.tx(0, 0, 1, history.Ok, readReg("x", 1), write("x", 2))
	h.tx(1, 0, 1, history.Ok, readReg("x", 2), write("x", 1))
	expectKinds(t, checkWith(t, RWRegister{}, &h), "cyclic-versions", "G1c")
	expectKinds(t, checkWith(t, WithOptions("rw-register", Options{WithoutWFR: true}), &h), "G1c")
}

// Sequential keys: a process wrote x = 1 and then read x's initial nil, so
// 1 precedes nil, which precedes every version: a cycle. Linearizable keys
// find it by real time, in a process's order or not. Under serializability
// and no such assumption, nothing is wrong.
func TestRWRegisterSequentialKeys(t *testing.T) {
	serializable := []string{"serializable"}
	for _, p := range []int{0, 1} {
		var h hist
		h.tx(0, 0, 1, history.Ok, write("x", 1))
		h.tx(p, 2, 3, history.Ok, readNil("x"))
		expectKinds(t, checkWith(t, WithOptions("rw-register", Options{ConsistencyModels: serializable}), &h))
		seq := checkWith(t, WithOptions("rw-register", Options{ConsistencyModels: serializable, SequentialKeys: true}), &h)
		if p == 0 {
			expectKinds(t, seq, "cyclic-versions")
		} else {
			expectKinds(t, seq)
		}
		expectKinds(t, checkWith(t, WithOptions("rw-register", Options{ConsistencyModels: serializable, LinearizableKeys: true}), &h), "cyclic-versions")
	}
	// A version order the process order proves: p0 wrote x = 1 and then
	// x = 2 with y = 2, and p1 read y = 2 but x = 1, a version older
	// than the one written with it: a cycle only sequential keys see.
	var h hist
	h.tx(0, 0, 1, history.Ok, write("x", 1))
	h.tx(0, 2, 3, history.Ok, write("x", 2), write("y", 2))
	h.tx(1, 0, 4, history.Ok, readReg("y", 2), readReg("x", 1))
	expectKinds(t, checkWith(t, WithOptions("rw-register", Options{ConsistencyModels: serializable}), &h))
	expectKinds(t, checkWith(t, WithOptions("rw-register", Options{ConsistencyModels: serializable, SequentialKeys: true}), &h), "G-single-item")
}

// Checker values stay comparable, told options or not: the workloads
// compare their models, which hold them (comparing values that hold
// slices would panic).
func TestCheckersComparable(t *testing.T) {
	var c analysis.Checker = WithOptions("rw-register", Options{Anomalies: []string{"G1"}})
	if c == analysis.Checker(RWRegister{}) || c != c || (ListAppend{}) != (ListAppend{}) {
		t.Error("checker comparisons are wrong")
	}
}
