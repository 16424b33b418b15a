// Package stream is the stream-order checker: the final reads of a log,
// which must agree on the order of the elements they share.
package stream

import (
	"context"
	"fmt"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

func init() { analysis.Register(OrderChecker{}) }

// OrderChecker judges the final reads of a log (a NATS stream read
// whole, in order): a log is one total order, so any two reads hold the
// elements they share in the same order ("stream-order-divergence": two
// readers, or the replicas that served them, disagree). An element read
// twice in one read was stored twice (the clients never publish one number
// again): JetStream promises at least once, so duplicates are counted, not
// anomalies. Lost and unexpected elements are the set checker's.
type OrderChecker struct{}

func (OrderChecker) Name() string { return "stream-order" }

func (OrderChecker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var bad analysis.ErrCount
	type read struct {
		history.Pair
		vs []int64
	}
	var reads []read
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool { return op.F == setop.FRead && op.Process >= 0 }) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		var v setop.Value
		if err := p.Done.Decode(&v); err != nil {
			bad.Add(err)
			continue
		}
		reads = append(reads, read{p, v.Read})
	}
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d reads could not be read; first: %v", bad.N, bad.First))
	}
	if len(reads) == 0 {
		return analysis.UnknownResult("no final read succeeded: no order to compare")
	}
	duplicates := 0
	// at maps an element to its first place in each read.
	at := make([]map[int64]int, len(reads))
	for i, r := range reads {
		at[i] = make(map[int64]int, len(r.vs))
		for j, v := range r.vs {
			if _, seen := at[i][v]; seen {
				duplicates++
				continue
			}
			at[i][v] = j
		}
	}
	var found analysis.FindingList
	for i := range reads {
		for j := i + 1; j < len(reads); j++ {
			// The shared elements, in read j's order, must come in read i's
			// order too: the first that comes before the last one seen is
			// the divergence.
			prev, prevAt := int64(0), -1
			for n, v := range reads[j].vs {
				k, shared := at[i][v]
				if !shared || at[j][v] != n { // not in read i, or read again
					continue
				}
				if k < prevAt {
					a, b := reads[i], reads[j]
					x, y := prev, v
					found.Add(func() analysis.Finding {
						return analysis.Finding{Kind: "stream-order-divergence", Explanation: fmt.Sprintf(
							"%s's read (#%d) has %d before %d; %s's read (#%d) has %d before %d: the log is not one order.",
							history.ProcessName(a.Inv.Process), a.Done.Index, y, x, history.ProcessName(b.Inv.Process), b.Done.Index, x, y),
							Ops: []history.Op{*a.Inv, *a.Done, *b.Inv, *b.Done}}
					})
					break
				}
				prev, prevAt = v, k
			}
		}
	}
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"reads": len(reads), "duplicates": duplicates}}
	found.Put(&res)
	if found.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	return res
}
