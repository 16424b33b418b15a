package oracle

import (
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/setop"
)

// SetResult is the reference judgement of a set history: the verdict
// ("valid", "invalid" or "unknown"), the elements of each kind, sorted,
// and counts of the operations.
type SetResult struct {
	Verdict                              string
	Lost, Unexpected, Future, Recovered  []int64
	Adds, Acknowledged, Refused, Unknown int
	// Elements counts the distinct elements added; Reads the ok reads.
	Elements, Reads int
}

// setOp is one add or read of a client: its invocation, its completion
// (nil if none), the element added, and the elements an ok read returned.
type setOp struct {
	inv, done *history.Op
	element   int64
	read      []int64
}

func (o setOp) is(t history.Type) bool { return o.done != nil && o.done.Type == t }

// mayHaveTakenEffect says whether an add may have added its element: any
// add but a failed one.
func (o setOp) mayHaveTakenEffect() bool { return !o.is(history.Fail) }

// CheckSet judges a set history straight from the definitions of
// set.Checker, element by element and read by read, with nothing
// but lists and loops. "Before" is strictly earlier in recorded time. An
// element is lost if an ok read misses it and an add of it was ok before
// the read was invoked; unexpected if an ok read holds it and every add of
// it failed (or there is none); from the future if an ok read holds it and
// completed before the invocation of every add of it that did not fail;
// recovered if an ok read holds it, none of its adds is ok and one did not
// fail. The history must be well formed: it is an error if a value does
// not decode.
func CheckSet(ops []history.Op) (SetResult, error) {
	adds, reads, err := setOps(ops)
	if err != nil {
		return SetResult{}, err
	}
	var res SetResult
	var added, universe []int64
	for _, a := range adds {
		res.Adds++
		switch {
		case a.is(history.Ok):
			res.Acknowledged++
		case a.is(history.Fail):
			res.Refused++
		default:
			res.Unknown++
		}
		added = append(added, a.element)
	}
	for _, r := range reads {
		universe = append(universe, r.read...)
	}
	universe = append(universe, added...)
	slices.Sort(added)
	res.Elements = len(slices.Compact(added))
	res.Reads = len(reads)
	if len(reads) == 0 {
		res.Verdict = "unknown"
		return res, nil
	}
	slices.Sort(universe)
	for _, e := range slices.Compact(universe) {
		var lost, unexpected, future, recovered bool
		for _, r := range reads {
			held := slices.Contains(r.read, e)
			var tried, acked, allLater bool
			allLater = true
			for _, a := range adds {
				if a.element != e {
					continue
				}
				if a.is(history.Ok) {
					acked = true
					if !held && a.done.Time < r.inv.Time {
						lost = true
					}
				}
				if a.mayHaveTakenEffect() {
					tried = true
					if !(r.done.Time < a.inv.Time) {
						allLater = false
					}
				}
			}
			unexpected = unexpected || held && !tried
			future = future || held && tried && allLater
			recovered = recovered || held && tried && !acked
		}
		if lost {
			res.Lost = append(res.Lost, e)
		}
		if unexpected {
			res.Unexpected = append(res.Unexpected, e)
		}
		if future {
			res.Future = append(res.Future, e)
		}
		if recovered {
			res.Recovered = append(res.Recovered, e)
		}
	}
	res.Verdict = "valid"
	if len(res.Lost)+len(res.Unexpected)+len(res.Future) > 0 {
		res.Verdict = "invalid"
	}
	return res, nil
}

// setOps lists the adds and the ok reads of clients (process ≥ 0). The
// completion of an invocation is the process's next entry, if that is not
// another invocation.
func setOps(ops []history.Op) (adds, reads []setOp, err error) {
	for i := range ops {
		inv := &ops[i]
		if inv.Process < 0 || inv.Type != history.Invoke || inv.F != setop.FAdd && inv.F != setop.FRead {
			continue
		}
		o := setOp{inv: inv}
		for j := i + 1; j < len(ops); j++ {
			if ops[j].Process == inv.Process && (ops[j].F == setop.FAdd || ops[j].F == setop.FRead) {
				if ops[j].Type != history.Invoke {
					o.done = &ops[j]
				}
				break
			}
		}
		if inv.F == setop.FRead {
			if o.is(history.Ok) {
				var v setop.Value
				if err := o.done.Decode(&v); err != nil {
					return nil, nil, err
				}
				o.read = v.Read
				reads = append(reads, o)
			}
			continue
		}
		var v setop.Value
		if err := inv.Decode(&v); err != nil {
			return nil, nil, err
		}
		if v.Element == nil {
			return nil, nil, fmt.Errorf("op #%d: add without element", inv.Index)
		}
		o.element = *v.Element
		adds = append(adds, o)
	}
	return adds, reads, nil
}

// RandomSetHistory draws a small set history: 1–5 client processes, 1–12
// operations, adds of a handful of elements with duplicates, outcomes ok,
// fail, info or never completed (a process's last operation only), reads
// ok or not holding any of the elements (some never added), and times on
// a coarse clock, so that operations overlap and times tie. Each process's
// entries are in its own order, but the processes are interleaved at
// random, so the line order need not be the time order.
func RandomSetHistory(r randhistory.Rand) []history.Op {
	const elements = 5 // 0..3 are added, 4 only ever read
	procs := 1 + r.IntN(5)
	owner := make([]int, 1+r.IntN(12)) // the process of each operation
	for k := range owner {
		owner[k] = r.IntN(procs)
	}
	lines := make([][]history.Op, procs) // each process's entries, in its order
	clock := make([]time.Duration, procs)
	var drawn []int64 // the elements of the adds drawn so far
	for k, p := range owner {
		inv := clock[p] + time.Duration(r.IntN(4))*randhistory.Tick
		done := inv + time.Duration(r.IntN(5))*randhistory.Tick
		clock[p] = done
		entry := func(at time.Duration, t history.Type, f string, v setop.Value) history.Op {
			return history.Op{Time: at, Type: t, Process: p, F: f, Value: history.MustValue(v)}
		}
		node := fmt.Sprintf("n%d", 1+r.IntN(3))
		outcome := randhistory.OneOf(r, history.Ok, history.Ok, history.Fail, history.Info, "")
		if outcome == "" && slices.Contains(owner[k+1:], p) {
			outcome = history.Info // only a process's last operation may be left unfinished
		}
		if r.IntN(2) == 0 {
			e := int64(r.IntN(elements - 1))
			drawn = append(drawn, e)
			lines[p] = append(lines[p], entry(inv, history.Invoke, setop.FAdd, setop.Value{Element: &e}))
			if outcome != "" {
				lines[p] = append(lines[p], entry(done, outcome, setop.FAdd, setop.Value{Element: &e, Node: node}))
			}
			continue
		}
		// A read mostly holds the elements drawn for adds so far, so that
		// valid histories are common too.
		var read []int64
		for e := range int64(elements) {
			if slices.Contains(drawn, e) && r.IntN(4) > 0 || r.IntN(12) == 0 {
				read = append(read, e)
			}
		}
		lines[p] = append(lines[p], entry(inv, history.Invoke, setop.FRead, setop.Value{}))
		switch outcome {
		case history.Ok:
			lines[p] = append(lines[p], entry(done, outcome, setop.FRead, setop.Value{Read: read, Node: node}))
		case history.Fail, history.Info:
			lines[p] = append(lines[p], entry(done, outcome, setop.FRead, setop.Value{Node: node}))
		}
	}
	return randhistory.Interleave(r, lines)
}
