package etcd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// etcdInitial is the etcd checkers' Input.Initial: the store's revision
// when the history began (1, an empty store, unless given).
type etcdInitial struct {
	Revision int64 `json:"revision"`
}

func initialRevision(in analysis.Input) (int64, error) {
	init := etcdInitial{Revision: 1}
	if len(in.Initial) > 0 && string(in.Initial) != "null" {
		if err := json.Unmarshal(in.Initial, &init); err != nil {
			return 0, fmt.Errorf(`initial value %s: the etcd checkers start from {"revision": N}: %w`, in.Initial, err)
		}
	}
	return init.Revision, nil
}

// revisionBound is, for a time, the highest revision the writes of a
// history can have made by then: each put, delete, transaction and lease
// revoke that did not fail, invoked before that time, makes one at the
// most, as does each lease's expiry, once its TTL has passed since its
// grant was sent. ok is false when the history holds operations it does
// not know, which may write too.
func revisionBound(h []history.Op, initial int64) (most func(time.Duration) int64, ok bool) {
	var sent []time.Duration // when each write can first have made its revision
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 }) {
		if p.Done != nil && p.Done.Type == history.Fail {
			continue
		}
		switch p.Inv.F {
		case etcdop.FPut, etcdop.FDelete, etcdop.FKVTxn, etcdop.FLeaseRevoke:
			sent = append(sent, p.Inv.Time)
		case etcdop.FLeaseGrant:
			sent = append(sent, p.Inv.Time+grantTTL(p))
		case etcdop.FRange, etcdop.FRangeSerializable, etcdop.FWatch, etcdop.FLeaseKeepAlive:
		default:
			return nil, false
		}
	}
	slices.Sort(sent)
	return func(t time.Duration) int64 {
		n, _ := slices.BinarySearch(sent, t+1) // at t or before
		return initial + int64(n)
	}, true
}

// grantTTL is the shortest a grant's lease can live: the TTL it asked
// for, or that its answer gave (etcd may lengthen it, never shorten it).
func grantTTL(p history.Pair) time.Duration {
	var req etcdop.KVRequest
	var resp etcdop.KVResponse
	_ = p.Inv.Decode(&req) // etcd-lease reports what it cannot read
	if p.Done != nil && p.Done.Type == history.Ok {
		_ = p.Done.Decode(&resp)
	}
	return time.Duration(max(req.TTL, resp.TTL)) * time.Second
}

// checkMade reports an answer that came at a time naming a revision past
// the bound by then ("revision-never-made").
func checkMade(most func(time.Duration) int64, rev int64, at time.Duration, what string, ops []history.Op, found *analysis.FindingList) {
	var why string
	switch {
	case rev < 1:
		why = "which no store has: etcd's begins at revision 1"
	case most != nil && rev > most(at):
		why = fmt.Sprintf("but the writes sent by then can have made no revision past %d", most(at))
	default:
		return
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: "revision-never-made", Explanation: fmt.Sprintf("%s names revision %d at %.3fs, %s.", what, rev, at.Seconds(), why), Ops: ops}
	})
}

// observed is a revision that a member had made by a time: a watch
// response's or a serializable read's, with who told of it.
type observed struct {
	at  time.Duration
	rev int64
	src string
	ops []history.Op
}

// checkFloors finds linearizable answers older than a revision observed
// before they were asked ("revision-went-back"): a member serves only
// revisions the cluster committed, and a linearizable request sees every
// committed one.
func checkFloors(h []history.Op, seen []observed, found *analysis.FindingList) {
	slices.SortStableFunc(seen, func(a, b observed) int { return cmp.Compare(a.at, b.at) })
	var asked []answered
	for _, a := range readAnswered(h) {
		if a.resp != nil && a.Inv.F != etcdop.FRangeSerializable {
			asked = append(asked, a)
		}
	}
	slices.SortStableFunc(asked, func(a, b answered) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
	var floor *observed
	next := 0
	for _, a := range asked {
		for ; next < len(seen) && seen[next].at < a.Inv.Time; next++ {
			if floor == nil || seen[next].rev > floor.rev {
				floor = &seen[next]
			}
		}
		if floor == nil || a.resp.Revision >= floor.rev {
			continue
		}
		f := floor
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "revision-went-back", Explanation: fmt.Sprintf(
				"%s answered revision %d, although %s had shown revision %d at %.3fs, before it was invoked at %.3fs.",
				a.src(), a.resp.Revision, f.src, f.rev, f.at.Seconds(), a.Inv.Time.Seconds()), Ops: slices.Concat(f.ops, a.ops())}
		})
	}
}

// watchesSeen are the revisions the watches' responses showed, each when
// it came: its header's, or its last event's.
func watchesSeen(h []history.Op) []observed {
	watches, _ := readWatches(h) // etcd-watch reports what it cannot read
	var out []observed
	for _, w := range watches {
		for _, r := range w.res.Responses {
			if rev := responseRevision(r); rev > 0 {
				out = append(out, observed{at: r.Time, rev: rev, ops: []history.Op{*w.Inv, *w.Done},
					src: fmt.Sprintf("%s's watch (#%d)", history.ProcessName(w.Inv.Process), w.Inv.Index)})
			}
		}
	}
	return out
}

// responseRevision is the revision a watch response shows the member had:
// its header's, or its last event's.
func responseRevision(r etcdop.WatchResponse) int64 {
	rev := r.Revision
	for _, e := range r.Events {
		rev = max(rev, e.KV.Mod)
	}
	return rev
}
