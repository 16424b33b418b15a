package linear

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

func TestRegister(t *testing.T) {
	tests := []struct {
		name string
		h    *analysistest.History
		in   analysis.Input
		want analysis.Verdict
	}{
		{"sequential", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Read(1, 2, 3, "x", "1"), analysis.Input{}, analysis.Valid},
		{"read concurrent with write sees either", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").
			Add(2, 0, history.Invoke, registerop.FWrite, analysistest.Reg("x", "2")).Read(1, 2.1, 2.2, "x", "1").Read(2, 2.3, 2.4, "x", "2").
			Add(3, 0, history.Ok, registerop.FWrite, analysistest.Reg("x", "2")), analysis.Input{}, analysis.Valid},
		{"stale read", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Write(0, 2, 3, history.Ok, "x", "2").Read(1, 4, 5, "x", "1"), analysis.Input{}, analysis.Invalid},
		{"read goes back", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Add(2, 0, history.Invoke, registerop.FWrite, analysistest.Reg("x", "2")).
			Read(1, 2.1, 2.2, "x", "2").Read(2, 2.3, 2.4, "x", "1").Add(3, 0, history.Ok, registerop.FWrite, analysistest.Reg("x", "2")), analysis.Input{}, analysis.Invalid},
		{"info write may have happened", new(analysistest.History).Write(0, 0, 1, history.Info, "x", "1").Read(1, 2, 3, "x", "1"), analysis.Input{}, analysis.Valid},
		{"info write may not have happened", new(analysistest.History).Write(0, 0, 1, history.Info, "x", "1").Read(1, 2, 3, "x", "null"), analysis.Input{}, analysis.Valid},
		{"info write happens late", new(analysistest.History).Write(0, 0, 1, history.Info, "x", "1").Read(1, 2, 3, "x", "null").Read(1, 4, 5, "x", "1"), analysis.Input{}, analysis.Valid},
		{"info write cannot unhappen", new(analysistest.History).Write(0, 0, 1, history.Info, "x", "1").Read(1, 2, 3, "x", "1").Read(1, 4, 5, "x", "null"), analysis.Input{}, analysis.Invalid},
		{"never completed write may have happened", new(analysistest.History).Add(0, 0, history.Invoke, registerop.FWrite, analysistest.Reg("x", "1")).Read(1, 2, 3, "x", "1"), analysis.Input{}, analysis.Valid},
		{"fail write never happened", new(analysistest.History).Write(0, 0, 1, history.Fail, "x", "1").Read(1, 2, 3, "x", "1"), analysis.Input{}, analysis.Invalid},
		{"fail write ignored", new(analysistest.History).Write(0, 0, 1, history.Fail, "x", "1").Read(1, 2, 3, "x", "null"), analysis.Input{}, analysis.Valid},
		{"nil read is absent", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Read(1, 2, 3, "x", "null"), analysis.Input{}, analysis.Invalid},
		{"nil read unknown (Knossos)", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Read(1, 2, 3, "x", "null"), analysis.Input{NilReadsUnknown: true}, analysis.Valid},
		{"initial absent", new(analysistest.History).Read(1, 0, 1, "x", "0"), analysis.Input{}, analysis.Invalid},
		{"initial 0", new(analysistest.History).Read(1, 0, 1, "x", "0"), analysis.Input{Initial: json.RawMessage("0")}, analysis.Valid},
		{"initial 0 is not absent", new(analysistest.History).Read(1, 0, 1, "x", "null"), analysis.Input{Initial: json.RawMessage("0")}, analysis.Invalid},
		{"values compared canonically", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", `1.0`).Read(1, 2, 3, "x", "1").
			Write(0, 4, 5, history.Ok, "y", `{"b": [1, 2], "a": "s"}`).Read(1, 6, 7, "y", `{"a":"s","b":[1,2.0]}`), analysis.Input{}, analysis.Valid},
		// Numbers are mathematical values, compared exactly.
		{"1e22 is 10^22", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", `1e22`).Read(1, 2, 3, "x", "10000000000000000000000"), analysis.Input{}, analysis.Valid},
		{"2^53 written two ways", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", `9007199254740992`).Read(1, 2, 3, "x", "9007199254740992.0"), analysis.Input{}, analysis.Valid},
		{"no rounding to float64", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", `0.1`).Read(1, 2, 3, "x", "0.10000000000000001"), analysis.Input{}, analysis.Invalid},
		{"no rounding of big integers", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", `9007199254740993`).Read(1, 2, 3, "x", "9007199254740992"), analysis.Input{}, analysis.Invalid},
		{"keys are independent", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Read(1, 2, 3, "y", "null"), analysis.Input{}, analysis.Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.History = tt.h.Ops
			for _, name := range []string{"register", "cas-register"} {
				analysistest.WantResult(t, analysistest.RunChecker(t, name, tt.in), tt.want)
			}
		})
	}
}

func TestCasRegister(t *testing.T) {
	tests := []struct {
		name string
		h    *analysistest.History
		want analysis.Verdict
	}{
		{"cas applies when equal", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Ok, "x", "1", "2").Read(1, 4, 5, "x", "2"), analysis.Valid},
		{"cas ok but value differed", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Ok, "x", "3", "4"), analysis.Invalid},
		{"cas ok on absent", new(analysistest.History).Cas(0, 0, 1, history.Ok, "x", "0", "1"), analysis.Invalid},
		{"failed cas ignored", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Fail, "x", "1", "2").Read(1, 4, 5, "x", "1"), analysis.Valid},
		{"info cas may apply", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Info, "x", "1", "2").Read(1, 4, 5, "x", "2"), analysis.Valid},
		{"info cas may not apply", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Info, "x", "1", "2").Read(1, 4, 5, "x", "1"), analysis.Valid},
		{"info cas that cannot apply changes nothing", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Info, "x", "5", "2").Read(1, 4, 5, "x", "2"), analysis.Invalid},
		{"two cas from the same value", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Cas(0, 2, 3, history.Ok, "x", "1", "2").Cas(1, 2, 3, history.Ok, "x", "1", "3"), analysis.Invalid},
		// A cas that ran and did not match (porcupine's etcd logs) is evidence.
		{"mismatch while the value matched", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Mismatch(0, 2, 3, "x", "1", "2"), analysis.Invalid},
		{"mismatch while the value differed", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "3").Mismatch(0, 2, 3, "x", "1", "2").Read(1, 4, 5, "x", "3"), analysis.Valid},
		{"mismatch changes nothing", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "3").Mismatch(0, 2, 3, "x", "1", "2").Read(1, 4, 5, "x", "2"), analysis.Invalid},
		{"mismatch ordered before a concurrent write", new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "3").Add(2, 1, history.Invoke, registerop.FWrite, analysistest.Reg("x", "1")).
			Mismatch(0, 2.1, 2.2, "x", "1", "2").Add(3, 1, history.Ok, registerop.FWrite, analysistest.Reg("x", "1")), analysis.Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			analysistest.WantResult(t, analysistest.RunChecker(t, "cas-register", analysis.Input{History: tt.h.Ops}), tt.want)
		})
	}
	t.Run("plain register refuses cas", func(t *testing.T) {
		r := analysistest.RunChecker(t, "register", analysis.Input{History: new(analysistest.History).Cas(0, 0, 1, history.Ok, "x", "1", "2").Ops})
		if r.Verdict != analysis.Unknown || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "cas-register") {
			t.Fatalf("got %s %q, expected unknown with a note pointing to cas-register", r.Verdict, r.Notes)
		}
	})
}

func TestRegisterFinding(t *testing.T) {
	h := new(analysistest.History).Write(0, 0, 1, history.Ok, "a", "1").Read(1, 2, 3, "a", "1").
		Write(0, 4, 5, history.Ok, "b", "1").Write(0, 6, 7, history.Ok, "b", "2").Read(1, 8, 9, "b", "1")
	r := analysistest.RunChecker(t, "cas-register", analysis.Input{History: h.Ops})
	analysistest.WantResult(t, r, analysis.Invalid)
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
	h := new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1")
	for p := 1; p <= 30; p++ { // 30 concurrent reads of a value never written
		h.Add(2, p, history.Invoke, registerop.FRead, analysistest.Reg("x", ""))
	}
	for p := 1; p <= 30; p++ {
		h.Add(3, p, history.Ok, registerop.FRead, analysistest.Reg("x", "7"))
	}
	r := analysistest.RunChecker(t, "cas-register", analysis.Input{History: h.Ops})
	analysistest.WantResult(t, r, analysis.Invalid)
	if n := len(r.Findings[0].Ops); n > analysis.MaxOps {
		t.Fatalf("finding lists %d ops, expected at most %d", n, analysis.MaxOps)
	}
}

func TestKV(t *testing.T) {
	kv := func(key, v string) registerop.Value { return analysistest.Reg(key, v) }
	op := func(h *analysistest.History, proc int, t1, t2 float64, typ history.Type, f, key, arg, got string) *analysistest.History {
		inv := kv(key, arg)
		if f == "get" {
			inv = kv(key, "")
		}
		return h.Add(t1, proc, history.Invoke, f, inv).Add(t2, proc, typ, f, kv(key, analysis.CmpOr(got, arg)))
	}
	ok := history.Ok
	h := new(analysistest.History)
	op(h, 0, 0, 1, ok, "get", "k", "", `""`)
	op(h, 0, 2, 3, ok, "put", "k", `"a"`, "")
	op(h, 1, 4, 5, ok, "append", "k", `"b"`, "")
	op(h, 2, 6, 7, ok, "get", "k", "", `"ab"`)
	op(h, 1, 8, 9, history.Info, "append", "k", `"c"`, "")
	op(h, 2, 10, 11, ok, "get", "k", "", `"abc"`)
	analysistest.WantResult(t, analysistest.RunChecker(t, "kv", analysis.Input{History: h.Ops}), analysis.Valid)

	op(h, 2, 12, 13, ok, "get", "k", "", `"ab"`) // the append cannot be undone
	analysistest.WantResult(t, analysistest.RunChecker(t, "kv", analysis.Input{History: h.Ops}), analysis.Invalid)

	h = new(analysistest.History)
	op(h, 0, 0, 1, ok, "get", "k", "", `"x"`)
	analysistest.WantResult(t, analysistest.RunChecker(t, "kv", analysis.Input{History: h.Ops}), analysis.Invalid)
	analysistest.WantResult(t, analysistest.RunChecker(t, "kv", analysis.Input{History: h.Ops, Initial: json.RawMessage(`"x"`)}), analysis.Valid)
}

func TestMultiRegister(t *testing.T) {
	step := func(f, key, v string) txnop.Step {
		s := txnop.Step{F: f, Key: key}
		if v != "" {
			s.Value = json.RawMessage(v)
		}
		return s
	}
	txn := func(h *analysistest.History, proc int, t1, t2 float64, typ history.Type, inv, done []txnop.Step) *analysistest.History {
		return h.Add(t1, proc, history.Invoke, txnop.FTxn, inv).Add(t2, proc, typ, txnop.FTxn, done)
	}
	writeXY := []txnop.Step{step("w", "x", "1"), step("w", "y", "1")}
	readXY := []txnop.Step{step("r", "x", ""), step("r", "y", "")}
	init := analysis.Input{Initial: json.RawMessage(`{"x": 0, "y": 0}`)}
	tests := []struct {
		name string
		h    *analysistest.History
		in   analysis.Input
		want analysis.Verdict
	}{
		{"reads see a whole txn", txn(txn(new(analysistest.History), 0, 0, 1, history.Ok, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "1")}), init, analysis.Valid},
		{"torn read", txn(txn(new(analysistest.History), 0, 0, 1, history.Ok, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "0")}), init, analysis.Invalid},
		{"nil read is unknown", txn(txn(new(analysistest.History), 0, 0, 1, history.Ok, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "null")}), init, analysis.Valid},
		{"initial values", txn(new(analysistest.History), 1, 0, 1, history.Ok, readXY, []txnop.Step{step("r", "x", "0"), step("r", "y", "0")}), init, analysis.Valid},
		{"one initial value for all", txn(new(analysistest.History), 1, 0, 1, history.Ok, readXY, []txnop.Step{step("r", "x", "0"), step("r", "y", "0")}),
			analysis.Input{Initial: json.RawMessage("0")}, analysis.Valid},
		{"reads own writes", txn(new(analysistest.History), 0, 0, 1, history.Ok, []txnop.Step{step("w", "x", "5"), step("r", "x", "")},
			[]txnop.Step{step("w", "x", "5"), step("r", "x", "5")}), init, analysis.Valid},
		{"misses own write", txn(new(analysistest.History), 0, 0, 1, history.Ok, []txnop.Step{step("w", "x", "5"), step("r", "x", "")},
			[]txnop.Step{step("w", "x", "5"), step("r", "x", "0")}), init, analysis.Invalid},
		{"info txn may have happened", txn(txn(new(analysistest.History), 0, 0, 1, history.Info, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "1")}), init, analysis.Valid},
		{"fail txn did not happen", txn(txn(new(analysistest.History), 0, 0, 1, history.Fail, writeXY, writeXY), 1, 2, 3, history.Ok, readXY,
			[]txnop.Step{step("r", "x", "1"), step("r", "y", "1")}), init, analysis.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.History = tt.h.Ops
			analysistest.WantResult(t, analysistest.RunChecker(t, "multi-register", tt.in), tt.want)
		})
	}
}

func TestMutex(t *testing.T) {
	acq := func(h *analysistest.History, proc int, t1, t2 float64, typ history.Type) *analysistest.History {
		return h.Add(t1, proc, history.Invoke, lockop.FAcquire, nil).Add(t2, proc, typ, lockop.FAcquire, nil)
	}
	rel := func(h *analysistest.History, proc int, t1, t2 float64, typ history.Type) *analysistest.History {
		return h.Add(t1, proc, history.Invoke, lockop.FRelease, nil).Add(t2, proc, typ, lockop.FRelease, nil)
	}
	tests := []struct {
		name string
		h    *analysistest.History
		want analysis.Verdict
	}{
		{"take turns", rel(acq(rel(acq(new(analysistest.History), 0, 0, 1, history.Ok), 0, 2, 3, history.Ok), 1, 4, 5, history.Ok), 1, 6, 7, history.Ok), analysis.Valid},
		{"two holders", acq(acq(new(analysistest.History), 0, 0, 1, history.Ok), 1, 2, 3, history.Ok), analysis.Invalid},
		{"release when free", rel(new(analysistest.History), 0, 0, 1, history.Ok), analysis.Invalid},
		{"info acquire may not have happened", acq(acq(new(analysistest.History), 0, 0, 1, history.Info), 1, 2, 3, history.Ok), analysis.Valid},
		{"failed acquire ignored", acq(acq(new(analysistest.History), 0, 0, 1, history.Ok), 1, 2, 3, history.Fail), analysis.Valid},
		{"concurrent release lets the next in", acq(rel(acq(new(analysistest.History), 0, 0, 1, history.Ok), 0, 2, 5, history.Ok), 1, 3, 4, history.Ok), analysis.Valid},
		{"other ops ignored", acq(new(analysistest.History), 0, 0, 1, history.Ok).Add(2, 0, history.Invoke, lockop.FWrite, lockop.WriteValue{Key: "k"}).
			Add(3, 0, history.Ok, lockop.FWrite, lockop.WriteValue{Key: "k"}), analysis.Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			analysistest.WantResult(t, analysistest.RunChecker(t, "mutex", analysis.Input{History: tt.h.Ops}), tt.want)
		})
	}
	t.Run("locks by name", func(t *testing.T) {
		h := new(analysistest.History).Add(0, 0, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "a"}).Add(1, 0, history.Ok, lockop.FAcquire, lockop.Value{Lock: "a"}).
			Add(2, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "b"}).Add(3, 1, history.Ok, lockop.FAcquire, lockop.Value{Lock: "b"})
		analysistest.WantResult(t, analysistest.RunChecker(t, "mutex", analysis.Input{History: h.Ops}), analysis.Valid)
	})
}
