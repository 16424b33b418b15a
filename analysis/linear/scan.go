// The scan of a history for the linearizability checkers: invocations paired
// with their completions, converted by the model into porcupine operations,
// and partitioned by key.

package linear

import (
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// OpRef ties a porcupine operation to its entries (positions in the
// history): Done is its completion, or -1 if it never completed.
type OpRef struct{ Inv, Done int }

// Part is the operations of one key, in porcupine's form.
type Part struct {
	key  string
	Ops  []porcupine.Operation
	Refs []OpRef
}

// Scan is what one pass over the history gives the check.
type Scan struct {
	Parts  []*Part
	counts map[string]int
	other  map[string]int    // entries of operations the model ignores, by f
	Bad    analysis.ErrCount // operations the model could not read
	// failed are the operations that completed with a failure, left out
	// of the check; an illegal key's witness asks whether one of them took
	// effect after all.
	failed []OpRef
}

// merge adds the counts of o, a scan of another batch of the history.
func (sc *Scan) merge(o *Scan) {
	for k, n := range o.counts {
		sc.counts[k] += n
	}
	for k, n := range o.other {
		sc.other[k] += n
	}
	if o.Bad.N > 0 {
		if sc.Bad.N == 0 {
			sc.Bad.First = o.Bad.First
		}
		sc.Bad.N += o.Bad.N
	}
}

// ScanHistory pairs each process's invocations with their completions in file
// order, which is the process's own order. A fail never happened and is
// dropped (kept aside in failed, for a witness to ask about); an info, or
// an invocation never completed, may or may not have happened: it gets an
// unknown output and Return = MaxInt64 (or the latest time evidence of its
// effect allows: unknownReturn), so porcupine may order it anywhere after
// its call, last included (as good as never).
func ScanHistory(ops []history.Op, m *Model, spec *Spec) *Scan {
	sc := &Scan{counts: map[string]int{}, other: map[string]int{}}
	byKey := map[string]*Part{}
	maxClient := 0
	for i := range ops {
		maxClient = max(maxClient, ops[i].Process)
	}
	add := func(inv, done int, open bool) {
		op := &ops[inv]
		if !m.Fs[op.F] {
			sc.other[op.F]++
			return
		}
		var d *history.Op
		if !open {
			d = &ops[done]
		}
		lop, err := spec.Convert(op, d)
		switch {
		case err != nil:
			sc.Bad.Add(err)
			return
		case lop.Unseen:
			sc.counts["dropped_unseen_writes"]++
			return
		case lop.Drop:
			sc.counts["dropped_unknown_reads"]++
			return
		}
		if !m.keyed {
			lop.key = ""
		}
		p := byKey[lop.key]
		if p == nil {
			p = &Part{key: lop.key}
			byKey[lop.key] = p
		}
		ret := unknownReturn(op, lop)
		switch {
		case !open:
			ret = int64(max(d.Time, op.Time)) // a clock never runs backwards within one op
		case lop.Returned > 0:
			sc.counts["patched"]++
		default:
			sc.counts["open"]++
		}
		// The server's own operations get a visualization row of their own.
		client := op.Process
		if client == history.Server {
			client = maxClient + 1
		}
		p.Ops = append(p.Ops, porcupine.Operation{ClientId: client, Input: lop.Input, Output: lop.Output, Call: int64(op.Time), Return: ret})
		p.Refs = append(p.Refs, OpRef{inv, done})
	}

	pending := map[int]int{} // process -> position of its invocation in flight
	for i := range ops {
		op := &ops[i]
		if op.Process == history.Server { // never completes
			add(i, -1, true)
			continue
		}
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
			if m.Fs[op.F] {
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
		case !m.Fs[op.F]:
			sc.other[op.F]++
		default: // fail: it never happened
			sc.counts["dropped_fail"]++
			sc.failed = append(sc.failed, OpRef{p, i})
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
		for j := range p.Ops {
			p.Ops[j].Metadata = &p.Refs[j] // a pointer: no allocation per op
		}
		sc.Parts = append(sc.Parts, p)
	}
	slices.SortFunc(sc.Parts, func(a, b *Part) int { return strings.Compare(a.key, b.key) })
	return sc
}

// unknownReturn is when an operation of unknown outcome, invoked at inv and
// converted as lop, returns for porcupine: at the latest time evidence
// elsewhere in the history allows, if it shows the effect, else never
// (MaxInt64), so that it may take effect anywhere after its call.
func unknownReturn(inv *history.Op, lop Op) int64 {
	if lop.Returned > 0 {
		return int64(max(lop.Returned, inv.Time))
	}
	return math.MaxInt64
}
