// The scan of a history for the linearizability checkers: invocations paired
// with their completions, converted by the model into porcupine operations,
// and partitioned by key.
package analysis

import (
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/history"
)

// opRef ties a porcupine operation to its entries (positions in the
// history): done is its completion, or -1 if it never completed.
type opRef struct{ inv, done int }

// linPart is the operations of one key, in porcupine's form.
type linPart struct {
	key  string
	ops  []porcupine.Operation
	refs []opRef
}

// linScan is what one pass over the history gives the check.
type linScan struct {
	parts  []*linPart
	counts map[string]int
	other  map[string]int // entries of operations the model ignores, by f
	bad    ErrCount       // operations the model could not read
	// failed are the operations that completed with a failure, left out
	// of the check; an illegal key's witness asks whether one of them took
	// effect after all.
	failed []opRef
}

// merge adds the counts of o, a scan of another batch of the history.
func (sc *linScan) merge(o *linScan) {
	for k, n := range o.counts {
		sc.counts[k] += n
	}
	for k, n := range o.other {
		sc.other[k] += n
	}
	if o.bad.N > 0 {
		if sc.bad.N == 0 {
			sc.bad.First = o.bad.First
		}
		sc.bad.N += o.bad.N
	}
}

// scanLinear pairs each process's invocations with their completions in file
// order, which is the process's own order. A fail never happened and is
// dropped (kept aside in failed, for a witness to ask about); an info, or
// an invocation never completed, may or may not have happened: it gets an
// unknown output and Return = MaxInt64 (or the latest time evidence of its
// effect allows: unknownReturn), so porcupine may order it anywhere after
// its call, last included (as good as never).
func scanLinear(ops []history.Op, m *linModel, spec *linSpec) *linScan {
	sc := &linScan{counts: map[string]int{}, other: map[string]int{}}
	byKey := map[string]*linPart{}
	add := func(inv, done int, open bool) {
		op := &ops[inv]
		if !m.fs[op.F] {
			sc.other[op.F]++
			return
		}
		var d *history.Op
		if !open {
			d = &ops[done]
		}
		lop, err := spec.convert(op, d)
		switch {
		case err != nil:
			sc.bad.Add(err)
			return
		case lop.unseen:
			sc.counts["dropped_unseen_writes"]++
			return
		case lop.drop:
			sc.counts["dropped_unknown_reads"]++
			return
		}
		if !m.keyed {
			lop.key = ""
		}
		p := byKey[lop.key]
		if p == nil {
			p = &linPart{key: lop.key}
			byKey[lop.key] = p
		}
		ret := unknownReturn(op, lop)
		switch {
		case !open:
			ret = int64(max(d.Time, op.Time)) // a clock never runs backwards within one op
		case lop.returned > 0:
			sc.counts["patched"]++
		default:
			sc.counts["open"]++
		}
		p.ops = append(p.ops, porcupine.Operation{ClientId: op.Process, Input: lop.input, Output: lop.output, Call: int64(op.Time), Return: ret})
		p.refs = append(p.refs, opRef{inv, done})
	}

	pending := map[int]int{} // process -> position of its invocation in flight
	for i := range ops {
		op := &ops[i]
		if op.Process < 0 { // the nemesis or the observer
			continue
		}
		p, inFlight := pending[op.Process]
		if op.Type == history.Invoke {
			if inFlight { // a process has one op in flight: the earlier one never completed
				sc.counts["superseded"]++
				add(p, -1, true)
			}
			pending[op.Process] = i
			continue
		}
		if !inFlight {
			if m.fs[op.F] {
				sc.counts["unmatched_completions"]++
			}
			continue
		}
		delete(pending, op.Process)
		switch {
		case ops[p].F != op.F:
			sc.counts["mismatched_completions"]++
			add(p, i, true)
		case op.Type == history.Ok:
			add(p, i, false)
		case op.Type == history.Info:
			add(p, i, true)
		case !m.fs[op.F]:
			sc.other[op.F]++
		default: // fail: it never happened
			sc.counts["dropped_fail"]++
			sc.failed = append(sc.failed, opRef{p, i})
		}
	}
	rest := make([]int, 0, len(pending))
	for _, p := range pending {
		rest = append(rest, p)
	}
	slices.Sort(rest)
	for _, p := range rest {
		add(p, -1, true)
	}

	for _, p := range byKey {
		for j := range p.ops {
			p.ops[j].Metadata = &p.refs[j] // a pointer: no allocation per op
		}
		sc.parts = append(sc.parts, p)
	}
	slices.SortFunc(sc.parts, func(a, b *linPart) int { return strings.Compare(a.key, b.key) })
	return sc
}

// unknownReturn is when an operation of unknown outcome, invoked at inv and
// converted as lop, returns for porcupine: at the latest time evidence
// elsewhere in the history allows, if it shows the effect, else never
// (MaxInt64), so that it may take effect anywhere after its call.
func unknownReturn(inv *history.Op, lop linOp) int64 {
	if lop.returned > 0 {
		return int64(max(lop.returned, inv.Time))
	}
	return math.MaxInt64
}
