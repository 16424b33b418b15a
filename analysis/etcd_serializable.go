package analysis

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/history"
)

func init() { Register(SerializableChecker{}) }

// SerializableChecker judges etcd's serializable reads, which one member
// answers from its own state without consensus: they may be stale, but a
// member's state only moves forward, so a revision a member has served
// never goes back. A read answered by member m at revision r, completed
// before another read of m was invoked, bounds that read's revision from
// below (real time from the recorded times).
type SerializableChecker struct{}

func (SerializableChecker) Name() string { return "etcd-serializable" }

// servedRead is an ok serializable read: the member and the revision.
type servedRead struct {
	history.Pair
	member string
	rev    int64
}

func (SerializableChecker) Check(_ context.Context, in Input) Result {
	var bad errCount
	var reads []servedRead
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool { return op.F == history.FRangeSerializable }) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		var resp history.KVResponse
		if err := p.Done.Decode(&resp); err != nil {
			bad.add(err)
			continue
		}
		if resp.Member == "" {
			bad.add(fmt.Errorf("op #%d: no member named in the answer", p.Done.Index))
			continue
		}
		reads = append(reads, servedRead{Pair: p, member: resp.Member, rev: resp.Revision})
	}
	if bad.n > 0 {
		return unknownResult(fmt.Sprintf("%d serializable reads could not be read; first: %v", bad.n, bad.first))
	}
	res := Result{Verdict: Valid, Stats: map[string]any{"serializable_reads": len(reads)}}
	if len(reads) == 0 {
		res.Notes = append(res.Notes, "no serializable read succeeded: nothing to check")
		return res
	}
	// Sweep the reads by invocation; those completed before each one's
	// invocation raise its member's floor, kept with the read that set it.
	byDone := slices.Clone(reads)
	slices.SortStableFunc(byDone, func(a, b servedRead) int { return cmp.Compare(a.Done.Time, b.Done.Time) })
	slices.SortStableFunc(reads, func(a, b servedRead) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
	floor := map[string]servedRead{}
	var found findingList
	next := 0
	for _, r := range reads {
		for ; next < len(byDone) && byDone[next].Done.Time < r.Inv.Time; next++ {
			d := byDone[next]
			if f, ok := floor[d.member]; !ok || d.rev > f.rev {
				floor[d.member] = d
			}
		}
		f, ok := floor[r.member]
		if !ok || r.rev >= f.rev {
			continue
		}
		found.add(func() Finding {
			return Finding{Kind: "revision-went-back", Explanation: fmt.Sprintf(
				"member %s answered %s's serializable read at revision %d (#%d, done at %.3fs), then %s's at revision %d (#%d, invoked at %.3fs): a member's revision went back.",
				r.member, history.ProcessName(f.Inv.Process), f.rev, f.Done.Index, f.Done.Time.Seconds(),
				history.ProcessName(r.Inv.Process), r.rev, r.Inv.Index, r.Inv.Time.Seconds()),
				Ops: []history.Op{*f.Inv, *f.Done, *r.Inv, *r.Done}}
		})
	}
	res.Findings, res.FindingsTotal = found.list, found.total
	if found.total > 0 {
		res.Verdict = Invalid
	}
	return res
}
