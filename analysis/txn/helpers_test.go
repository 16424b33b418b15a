package txn

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// step is a micro-op as a test writes it: value is what a write writes, or
// what a read returns on an ok completion (a list read's []int, a register
// read's int, nil for nothing).
type step struct {
	f     string
	key   any
	value any
}

func appendTo(k any, v int) step     { return step{"append", k, v} }
func readList(k any, vs ...int) step { return step{"r", k, append([]int{}, vs...)} }
func write(k any, v int) step        { return step{"w", k, v} }
func readReg(k any, v int) step      { return step{"r", k, v} }
func readNil(k any) step             { return step{"r", k, nil} }

// hist builds a history; entries' Index is their position.
type hist struct{ ops []history.Op }

// tx adds a transaction by process p, invoked at inv and completed at done
// (seconds) with typ ("" for never). It returns the invocation's and the
// completion's indices (-1 for none).
func (h *hist) tx(p int, inv, done float64, typ history.Type, steps ...step) [2]int {
	i := h.add(p, inv, history.Invoke, encodeSteps(steps, false))
	if typ == "" {
		return [2]int{i, -1}
	}
	return [2]int{i, h.add(p, done, typ, encodeSteps(steps, typ == history.Ok))}
}

func (h *hist) add(p int, at float64, typ history.Type, value json.RawMessage) int {
	i := len(h.ops)
	h.ops = append(h.ops, history.Op{Index: i, Time: time.Duration(at * float64(time.Second)), Type: typ, Process: p, F: txnop.FTxn, Value: value})
	return i
}

// encodeSteps writes steps as [f, key, value] arrays, reads' values only
// when done.
func encodeSteps(steps []step, done bool) json.RawMessage {
	out := make([][3]any, len(steps))
	for i, s := range steps {
		out[i] = [3]any{s.f, s.key, s.value}
		if s.f == "r" && !done {
			out[i][2] = nil
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}

// run checks h with the named checker, logging the findings.
func run(t *testing.T, checker string, h *hist) analysis.Result {
	t.Helper()
	c, ok := analysis.Checkers.Lookup(checker)
	if !ok {
		t.Fatalf("no checker %q", checker)
	}
	r := c.Check(context.Background(), analysis.Input{History: h.ops})
	for _, f := range r.Findings {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	for _, n := range r.Notes {
		t.Logf("note: %s", n)
	}
	return r
}

// kinds are the anomaly kinds a result counts, sorted.
func kinds(r analysis.Result) []string {
	counts, _ := r.Stats["anomalies"].(map[string]int)
	return slices.Sorted(maps.Keys(counts))
}

// count is how many anomalies of kind r counts.
func count(r analysis.Result, kind string) int {
	counts, _ := r.Stats["anomalies"].(map[string]int)
	return counts[kind]
}

// opIndices are the indices of ops, in order.
func opIndices(ops []history.Op) []int {
	out := make([]int, len(ops))
	for i, op := range ops {
		out[i] = op.Index
	}
	return out
}

// finding returns the result's first finding of kind, failing without one.
func finding(t *testing.T, r analysis.Result, kind string) analysis.Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("no %s finding among %v", kind, kinds(r))
	return analysis.Finding{}
}

// expectKinds fails unless r is invalid with exactly the anomaly kinds
// want, or valid when want is empty.
func expectKinds(t *testing.T, r analysis.Result, want ...string) {
	t.Helper()
	slices.Sort(want)
	got := kinds(r)
	if !slices.Equal(got, want) {
		t.Fatalf("anomalies %v, want %v", got, want)
	}
	wantVerdict := analysis.Invalid
	if len(want) == 0 {
		wantVerdict = analysis.Valid
	}
	if r.Verdict != wantVerdict {
		t.Fatalf("verdict %s, want %s", r.Verdict, wantVerdict)
	}
}

// expectOps fails unless the finding's ops are exactly the entries at
// indices want (in any order given).
func expectOps(t *testing.T, f analysis.Finding, want ...int) {
	t.Helper()
	slices.Sort(want)
	if got := opIndices(f.Ops); !slices.Equal(got, want) {
		t.Fatalf("%s finding's ops %v, want %v", f.Kind, got, want)
	}
}

// both are the invocation and completion indices of transactions.
func both(pairs ...[2]int) []int {
	var out []int
	for _, p := range pairs {
		for _, i := range p {
			if i >= 0 {
				out = append(out, i)
			}
		}
	}
	return out
}
