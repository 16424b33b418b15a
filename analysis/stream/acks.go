package stream

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// ack is a publish that the stream acknowledged with the sequence it
// stored the message at. The log reached that sequence, with that
// message, at some moment between the publish's invocation and its
// acknowledgment: it was shorter before, and holds the message there ever
// after.
type ack struct {
	history.Pair
	v    int64
	seq  uint64
	node string
}

func (a *ack) String() string {
	return fmt.Sprintf("%s's publish of %d, acknowledged at sequence %d by %s (#%d, answered at #%d)",
		history.ProcessName(a.Inv.Process), a.v, a.seq, analysis.CmpOr(a.node, "an unknown server"), a.Inv.Index, a.Done.Index)
}

func (a *ack) ops() []history.Op { return []history.Op{*a.Inv, *a.Done} }

// judgeAcks finds the acknowledgments that no log growing in real time
// agrees with, beside the reads:
//
//   - stream-ack-mismatch: a read holds another message at an acknowledged
//     sequence (a finding a read, naming the first such acknowledgment), or
//     two acknowledgments give one sequence to different messages (a
//     finding a sequence);
//   - stream-ack-lost: a read invoked after a publish was acknowledged
//     ends before its sequence (a finding a read, naming the highest);
//   - stream-ack-future: a read that completed before a publish was
//     invoked reaches the sequence the publish was acknowledged at (a
//     finding a read, naming the lowest);
//   - stream-ack-order: a publish acknowledged before another was invoked
//     got a higher sequence (a finding for the later one, naming the
//     highest before it).
func judgeAcks(acks []*ack, reads []*read, found *analysis.FindingList) {
	first := map[uint64]*ack{} // the first acknowledgment of each sequence
	mismatched := map[uint64]bool{}
	for _, a := range acks {
		f, ok := first[a.seq]
		if !ok {
			first[a.seq] = a
			continue
		}
		if f.v != a.v && !mismatched[a.seq] {
			mismatched[a.seq] = true
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "stream-ack-mismatch", Explanation: fmt.Sprintf(
					"%s; %s: one sequence, two messages.", f, a), Ops: append(f.ops(), a.ops()...)}
			})
		}
	}
	highest := highestBefore(acks)
	for _, r := range reads {
		for _, a := range acks {
			if v, ok := r.at(a.seq); ok && v != a.v {
				found.Add(func() analysis.Finding {
					return analysis.Finding{Kind: "stream-ack-mismatch", Explanation: fmt.Sprintf(
						"%s; %s holds %d there.", a, r, v), Ops: append(a.ops(), r.ops()...)}
				})
				break
			}
		}
		if a := highest(r.Inv.Time); a != nil && a.seq > r.last {
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "stream-ack-lost", Explanation: fmt.Sprintf(
					"%s, answered at %s; %s, invoked later, at %s, %s: the log lost messages it had acknowledged.",
					a, analysis.Secs(a.Done.Time), r, analysis.Secs(r.Inv.Time), r.end()), Ops: append(a.ops(), r.ops()...)}
			})
		}
		var early *ack // the lowest sequence acknowledged to a publish invoked after r completed
		for _, a := range acks {
			if r.Done.Time < a.Inv.Time && a.seq <= r.last && (early == nil || a.seq < early.seq) {
				early = a
			}
		}
		if early != nil {
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "stream-ack-future", Explanation: fmt.Sprintf(
					"%s, answered at %s, reaches sequence %d; %s was invoked later, at %s: the read saw a sequence the log had not reached.",
					r, analysis.Secs(r.Done.Time), r.last, early, analysis.Secs(early.Inv.Time)), Ops: append(r.ops(), early.ops()...)}
			})
		}
	}
	for _, b := range acks {
		if a := highest(b.Inv.Time); a != nil && a.seq > b.seq {
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "stream-ack-order", Explanation: fmt.Sprintf(
					"%s, answered at %s; %s was invoked later, at %s, and stored earlier in the log.",
					a, analysis.Secs(a.Done.Time), b, analysis.Secs(b.Inv.Time)), Ops: append(a.ops(), b.ops()...)}
			})
		}
	}
}

// highestBefore returns a function that gives, of the acknowledgments
// answered strictly before t, the one with the highest sequence (nil if
// none).
func highestBefore(acks []*ack) func(t time.Duration) *ack {
	byDone := slices.SortedFunc(slices.Values(acks), func(a, b *ack) int { return cmp.Compare(a.Done.Time, b.Done.Time) })
	best := make([]*ack, len(byDone)) // best[i]: the highest of byDone[:i+1]
	for i, a := range byDone {
		best[i] = a
		if i > 0 && best[i-1].seq >= a.seq {
			best[i] = best[i-1]
		}
	}
	return func(t time.Duration) *ack {
		n, _ := slices.BinarySearchFunc(byDone, t, func(a *ack, t time.Duration) int { return cmp.Compare(a.Done.Time, t) })
		if n == 0 {
			return nil
		}
		return best[n-1]
	}
}
