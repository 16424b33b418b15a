package etcd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

func init() { analysis.Register(SerializableChecker{}) }

// SerializableChecker judges etcd's serializable reads, which one member
// answers from its own state without consensus. They may be stale, but:
//   - a member's state only moves forward, so a revision a member has
//     served never goes back: a read answered by member m at revision r,
//     completed before another read of m was invoked, bounds that read's
//     revision from below (real time from the recorded times);
//   - a member answers from its store at the revision in the header, and
//     the store at a revision is one and the same on every member: any two
//     reads at the same revision, serializable or linearizable, from any
//     members, return the same keys where their ranges meet
//     ("divergent-reads", as a member whose data diverged after a crash
//     would answer: etcd #13766), and a serializable read returns no key
//     from a later revision, none older than an event of it known at or
//     before its revision, and leaves out no key known to exist then (see
//     storeKnown.judge).
type SerializableChecker struct{}

func (SerializableChecker) Name() string { return "etcd-serializable" }

// servedRead is an ok serializable read: the member and the revision.
type servedRead struct {
	history.Pair
	member string
	rev    int64
}

func (SerializableChecker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var bad analysis.ErrCount
	var reads []servedRead
	var found analysis.FindingList
	agree := agreeing{}
	initial, err := initialRevision(in)
	if err != nil {
		return analysis.UnknownResult(err.Error())
	}
	// Read once, for the store, the floors and elimination; etcd-watch
	// reports the watches it cannot read.
	answers := readAnswered(in.History)
	watches, _ := readWatches(in.History)
	limit := revisionBound(in.History, answers, initial)
	store := knowStore(answers, watches, limit)
	store.makers.reportNobody(etcdop.FRangeSerializable, &found)
	writes := indexWrites(in.History, answers, initial, store.makers, store.written)
	seen := watchesSeen(watches)
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return op.F == etcdop.FRangeSerializable || op.F == etcdop.FRange
	}) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		var req etcdop.KVRequest
		var resp etcdop.KVResponse
		if err := errors.Join(p.Inv.Decode(&req), p.Done.Decode(&resp)); err != nil {
			bad.Add(err)
			continue
		}
		if len(req.Then) != 1 || len(resp.Results) != 1 {
			bad.Add(fmt.Errorf("op #%d: expected one range and its answer", p.Inv.Index))
			continue
		}
		answer := servedAnswer{p, resp}
		agree.add(rangeAnswer{req.Then[0], answer}, &found)
		if p.Inv.F != etcdop.FRangeSerializable {
			continue
		}
		store.judge(answer, req.Then[0], &found)
		what := fmt.Sprintf("%s's serializable read (#%d, member %s)", history.ProcessName(p.Inv.Process), p.Done.Index, analysis.CmpOr(resp.Member, "unknown"))
		ops := []history.Op{*p.Inv, *p.Done}
		checkMade(limit, resp.Revision, p.Done.Time, what, ops, &found)
		for _, kv := range resp.Results[0].KVs {
			if kv.Mod <= resp.Revision && kvFlaw(kv) == "" { // else judge reports it
				writes.checkOrigin(etcdop.WatchEvent{Type: "put", KV: kv}, p.Done.Time, what, ops, readOrigin, &found)
				checkLeaseLive(kv, resp.Revision, writes.ends, what, ops, readOrigin.phantom, &found)
			}
		}
		seen = append(seen, observed{at: p.Done.Time, rev: resp.Revision, src: what, ops: ops})
		if resp.Member == "" {
			bad.Add(fmt.Errorf("op #%d: no member named in the answer", p.Done.Index))
			continue
		}
		reads = append(reads, servedRead{Pair: p, member: resp.Member, rev: resp.Revision})
	}
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d serializable reads could not be read; first: %v", bad.N, bad.First))
	}
	checkFloors(answers, seen, &found)
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"serializable_reads": len(reads), "revisions_read": len(agree)}}
	if len(reads) == 0 {
		res.Notes = append(res.Notes, "no serializable read succeeded: only reads at the same revision were compared")
	}
	// Sweep the reads by invocation; those completed before each one's
	// invocation raise its member's floor, kept with the read that set it.
	byDone := slices.Clone(reads)
	slices.SortStableFunc(byDone, func(a, b servedRead) int { return cmp.Compare(a.Done.Time, b.Done.Time) })
	slices.SortStableFunc(reads, func(a, b servedRead) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
	floor := map[string]servedRead{}
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
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "revision-went-back", Explanation: fmt.Sprintf(
				"member %s answered %s's serializable read at revision %d (#%d, done at %.3fs), then %s's at revision %d (#%d, invoked at %.3fs): a member's revision went back.",
				r.member, history.ProcessName(f.Inv.Process), f.rev, f.Done.Index, f.Done.Time.Seconds(),
				history.ProcessName(r.Inv.Process), r.rev, r.Inv.Index, r.Inv.Time.Seconds()),
				Ops: []history.Op{*f.Inv, *f.Done, *r.Inv, *r.Done}}
		})
	}
	found.Put(&res)
	if found.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	return res
}

// servedAnswer is an ok range and its answer.
type servedAnswer struct {
	history.Pair
	resp etcdop.KVResponse
}

func divergent(a, b servedAnswer) analysis.Finding {
	what := func(s servedAnswer) string {
		return fmt.Sprintf("%s's %s (#%d, member %s) got %s", history.ProcessName(s.Inv.Process), s.Inv.F, s.Done.Index,
			analysis.CmpOr(s.resp.Member, "unknown"), describeKVs(s.resp.Results[0].KVs))
	}
	return analysis.Finding{Kind: "divergent-reads", Explanation: fmt.Sprintf(
		"two reads of the same keys at revision %d disagree: %s; %s. The store at a revision is the same on every member.",
		a.resp.Revision, what(a), what(b)), Ops: []history.Op{*a.Inv, *a.Done, *b.Inv, *b.Done}}
}

func describeKVs(kvs []etcdop.KV) string {
	if len(kvs) == 0 {
		return "nothing"
	}
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = fmt.Sprintf("%s=%s (mod %d, version %d)", kv.Key, kv.Value, kv.Mod, kv.Version)
	}
	return strings.Join(parts, ", ")
}
