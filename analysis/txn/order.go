package txn

import (
	"cmp"
	"slices"
	"time"
)

// linkProcesses adds process-order edges, as Elle's process-graph: each
// committed transaction precedes its process's next committed one, in the
// order they were invoked (a process has one in flight, so this is also
// the order of their completions, by which a transaction without an
// invocation goes). A transaction of unknown outcome gets none: it may
// still take effect after its process has moved on.
func (o *observation) linkProcesses(es *edges) {
	var ts []int32
	for t := range o.txns {
		if o.txns[t].status == committed {
			ts = append(ts, int32(t))
		}
	}
	slices.SortStableFunc(ts, func(a, b int32) int {
		pa, pb := o.pairs[a].Done, o.pairs[b].Done
		return cmp.Or(cmp.Compare(pa.Process, pb.Process), cmp.Compare(pa.Time, pb.Time))
	})
	for i := 1; i < len(ts); i++ {
		if o.pairs[ts[i-1]].Done.Process == o.pairs[ts[i]].Done.Process {
			es.link(ts[i-1], ts[i], process)
		}
	}
}

// event is a transaction's invocation or committed completion in time.
type event struct {
	at   time.Duration
	done bool
	txn  int32
}

// linkRealtime adds real-time edges by recorded time, as Elle's
// realtime-graph: a committed transaction precedes every transaction
// (committed, or of unknown outcome) invoked after it completed. Only a
// transitive reduction is linked: a completed transaction stays in the
// frontier of candidate predecessors until some transaction invoked after
// it completes, which then stands for it. With p processes the frontier
// holds about p transactions, so each invocation gets about p edges, not
// one from every earlier transaction.
//
// Two events at the same time are concurrent: invocations sort first. A
// transaction without an invocation follows nothing in real time, since
// when it began is unknown (as in Elle, which links completed transactions
// only to later invocations' completions).
func (o *observation) linkRealtime(es *edges) {
	evs := make([]event, 0, 2*len(o.txns))
	for t, tx := range o.txns {
		if tx.status == aborted {
			continue
		}
		p := o.pairs[t]
		if p.Inv != nil {
			evs = append(evs, event{at: p.Inv.Time, txn: int32(t)})
		}
		if tx.status == committed {
			evs = append(evs, event{at: p.Done.Time, done: true, txn: int32(t)})
		}
	}
	slices.SortFunc(evs, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(boolInt(a.done), boolInt(b.done)), cmp.Compare(a.txn, b.txn))
	})
	// The frontier holds completion events, in order; a transaction's
	// completion removes those before its invocation, which it now stands
	// for: always a prefix.
	var frontier []int32
	invokedAt := make([]int32, len(o.txns))
	for i, e := range evs {
		if !e.done {
			invokedAt[e.txn] = int32(i)
			for _, f := range frontier {
				es.link(evs[f].txn, e.txn, realtime)
			}
			continue
		}
		n := 0
		for n < len(frontier) && frontier[n] < invokedAt[e.txn] {
			n++
		}
		frontier = append(frontier[:copy(frontier, frontier[n:])], int32(i))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
