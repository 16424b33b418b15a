package linear

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/linear/oracle"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// regOracleModel is one register model as the comparison sees it: the
// production checker's name, how its histories are drawn, and its oracle.
type regOracleModel struct {
	checker string
	draw    func(r randhistory.Rand) oracle.RegisterCase
	judge   func(c oracle.RegisterCase) (bool, error)
}

var (
	regOracleRegister = regOracleModel{"register",
		func(r randhistory.Rand) oracle.RegisterCase { return oracle.RandomRegister(r, false) },
		func(c oracle.RegisterCase) (bool, error) {
			return oracle.Register(c.History, oracle.RegisterOptions{Initial: c.Initial, NilReadsUnknown: c.NilReadsUnknown})
		}}
	regOracleCasRegister = regOracleModel{"cas-register",
		func(r randhistory.Rand) oracle.RegisterCase { return oracle.RandomRegister(r, true) },
		func(c oracle.RegisterCase) (bool, error) {
			return oracle.Register(c.History, oracle.RegisterOptions{Initial: c.Initial, NilReadsUnknown: c.NilReadsUnknown, Cas: true})
		}}
	regOracleMultiRegister = regOracleModel{"multi-register", oracle.RandomMultiRegister,
		func(c oracle.RegisterCase) (bool, error) { return oracle.MultiRegister(c.History, c.Initial) }}
	regOracleKV = regOracleModel{"kv", oracle.RandomKV,
		func(c oracle.RegisterCase) (bool, error) { return oracle.KV(c.History, c.Initial) }}
)

// regOracleOf is the model of a checker.
func regOracleOf(t *testing.T, checker string) regOracleModel {
	for _, m := range []regOracleModel{regOracleRegister, regOracleCasRegister, regOracleMultiRegister, regOracleKV} {
		if m.checker == checker {
			return m
		}
	}
	t.Fatalf("no oracle for %s", checker)
	return regOracleModel{}
}

func TestOracleRegister(t *testing.T)      { regOracleRegister.test(t, 1) }
func TestOracleCasRegister(t *testing.T)   { regOracleCasRegister.test(t, 2) }
func TestOracleMultiRegister(t *testing.T) { regOracleMultiRegister.test(t, 3) }
func TestOracleKV(t *testing.T)            { regOracleKV.test(t, 4) }

// test compares the checker with the oracle on random histories, 10,000 by
// default (a few seconds here), history i drawn from rand.NewPCG(stream, i).
func (m regOracleModel) test(t *testing.T, stream uint64) {
	t.Helper()
	m.comparison().Test(t, 10000, func(i uint64) (uint64, uint64) { return stream, i })
}

// comparison is how m's histories are drawn, checked both ways and shown.
func (m regOracleModel) comparison() analysistest.Comparison[oracle.RegisterCase] {
	return analysistest.Comparison[oracle.RegisterCase]{Draw: m.draw, Diff: m.diff, Show: describeRegCase}
}

// diff checks one history both ways. It returns what both said, or why
// they disagree.
func (m regOracleModel) diff(c oracle.RegisterCase) ([]string, error) {
	want, err := m.judge(c)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	checker, _ := analysis.Checkers.Lookup(m.checker)
	res := checker.Check(context.Background(), analysis.Input{History: c.History, Initial: c.Initial, NilReadsUnknown: c.NilReadsUnknown})
	wantVerdict := analysis.Invalid
	if want {
		wantVerdict = analysis.Valid
	}
	if res.Verdict != wantVerdict {
		return nil, fmt.Errorf("%s says %s (notes %q), the oracle %s", m.checker, res.Verdict, res.Notes, wantVerdict)
	}
	return claimHolds(res, c.History, func(h []history.Op) (bool, error) {
		c.History = h
		return m.judge(c)
	})
}

// claimHolds checks what the one finding of res says of a failure that
// took effect, if it names one: with that operation's outcome unknown, the
// oracle (judge) must find h linearizable. It gives the labels to tally.
func claimHolds(res analysis.Result, h []history.Op, judge func([]history.Op) (bool, error)) ([]string, error) {
	said := []string{string(res.Verdict)}
	inv, named := failureNamed(res)
	if !named {
		return said, nil
	}
	h = append([]history.Op(nil), h...)
	if err := completeUnknown(h, inv); err != nil {
		return nil, fmt.Errorf("%q: %w", res.Findings[0].Explanation, err)
	}
	if ok, err := judge(h); !ok || err != nil {
		return nil, fmt.Errorf("%q, but with #%d's outcome unknown the oracle says linearizable %v (%v)", res.Findings[0].Explanation, inv, ok, err)
	}
	return append(said, "a failure that took effect"), nil
}

// failureNamed is the position of the operation that the one finding of
// res says took effect, though answered with a failure, if it names one.
func failureNamed(res analysis.Result) (int, bool) {
	if res.FindingsTotal != 1 {
		return 0, false
	}
	return namedFailure(res.Findings[0].Explanation)
}

var namedFailureRE = regexp.MustCompile(`it is linearizable if #(\d+) `)

// namedFailure reads the failed operation an explanation names: the index
// of its invocation, which in the tests' histories is its position.
func namedFailure(explanation string) (int, bool) {
	m := namedFailureRE.FindStringSubmatch(explanation)
	if m == nil {
		return 0, false
	}
	i, err := strconv.Atoi(m[1])
	return i, err == nil
}

// describeRegCase is a history as JSON lines, and its options.
func describeRegCase(c oracle.RegisterCase) string {
	return fmt.Sprintf("initial %s, nil reads unknown %v:\n%s", analysis.CmpOr(string(c.Initial), "absent"), c.NilReadsUnknown, analysistest.JSONLines(c.History))
}

func FuzzOracleRegister(f *testing.F)      { regOracleRegister.fuzz(f) }
func FuzzOracleCasRegister(f *testing.F)   { regOracleCasRegister.fuzz(f) }
func FuzzOracleMultiRegister(f *testing.F) { regOracleMultiRegister.fuzz(f) }
func FuzzOracleKV(f *testing.F)            { regOracleKV.fuzz(f) }

// fuzz compares the checker with the oracle on histories drawn from the
// fuzzer's bytes.
func (m regOracleModel) fuzz(f *testing.F) {
	m.comparison().Fuzz(f, []byte{},
		[]byte{1, 0, 8, 2, 0, 1, 1, 2, 3, 0, 1, 2, 2, 1, 0, 5, 3, 7, 1, 1, 0, 2, 9, 4, 4, 1},
		[]byte("a longer seed: four processes, nine operations, every kind of outcome"))
}

// A history in which operations were invoked but none constrains anything
// (reads of unknown outcome, reads of null that say nothing) is
// linearizable, as for Knossos: the checker must say valid, not unknown.
func TestNothingToCheckIsValid(t *testing.T) {
	readX, txnX := analysistest.Reg("x", ""), []txnop.Step{{F: "r", Key: "x"}}
	tests := []struct {
		name, checker string
		h             *analysistest.History
		in            analysis.Input
	}{
		{"info read", "register", new(analysistest.History).Add(0, 0, history.Invoke, registerop.FRead, readX).Add(1, 0, history.Info, registerop.FRead, readX), analysis.Input{}},
		{"read never completed", "cas-register", new(analysistest.History).Add(0, 0, history.Invoke, registerop.FRead, readX), analysis.Input{}},
		{"read of null, unknown", "register", new(analysistest.History).Read(0, 0, 1, "x", "null"), analysis.Input{NilReadsUnknown: true}},
		{"info get", "kv", new(analysistest.History).Add(0, 0, history.Invoke, "get", readX).Add(1, 0, history.Info, "get", readX), analysis.Input{}},
		{"read-only txn of null", "multi-register", new(analysistest.History).Add(0, 0, history.Invoke, txnop.FTxn, txnX).
			Add(1, 0, history.Ok, txnop.FTxn, []txnop.Step{{F: "r", Key: "x", Value: json.RawMessage("null")}}), analysis.Input{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.History = tt.h.Ops
			if ok, err := regOracleOf(t, tt.checker).judge(oracle.RegisterCase{History: tt.in.History, NilReadsUnknown: tt.in.NilReadsUnknown}); !ok || err != nil {
				t.Fatalf("the oracle says linearizable %v (%v)", ok, err)
			}
			analysistest.WantResult(t, analysistest.RunChecker(t, tt.checker, tt.in), analysis.Valid)
		})
	}
}

// completeUnknown makes the failure that completes the invocation at
// position inv of h an unknown outcome (info): the first entry of the same
// process after it, which must be that failure.
func completeUnknown(h []history.Op, inv int) error {
	for i := inv + 1; i < len(h); i++ {
		if h[i].Process != h[inv].Process {
			continue
		}
		if h[i].Type != history.Fail || h[i].F != h[inv].F {
			return fmt.Errorf("#%d, named as failed, completes as %s %s", inv, h[i].Type, h[i].F)
		}
		h[i].Type = history.Info
		return nil
	}
	return fmt.Errorf("#%d, named as failed, never completes", inv)
}
