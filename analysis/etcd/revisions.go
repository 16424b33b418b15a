package etcd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// etcdInitial is the etcd checkers' Input.Initial: the store's revision
// when the history began (1, etcd's first, unless given). Every etcd
// checker takes the store to hold no key and no lease then: etcd-kv's
// model starts empty, and elimination and the origins of events count
// only the keys and leases the history's writes made.
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

// revisionLimit is, for a time, the highest revision the writes of a
// history can have made by then: each put, delete, transaction and lease
// revoke that did not fail, invoked before that time, makes one at the
// most (none, when its answer shows it wrote nothing), as does each
// lease's expiry, once its TTL has passed since its grant was sent; and
// no revision at or past one an acknowledged write made was there before
// that write was sent.
type revisionLimit struct {
	initial int64
	sent    []time.Duration // when each write can first have made its revision, in order
	// makers are the acknowledged writes that made a revision, by when
	// they were sent, each with the lowest revision made by it or by one
	// sent after it.
	makers []limitMaker
}

type limitMaker struct {
	a      answered
	lowest answered // the one of makers[i:] that made the lowest revision
}

// revisionBound is the revision limit of a history, or nil when it holds
// operations the etcd checkers do not know, which may write too.
func revisionBound(h []history.Op, answers []answered, initial int64) *revisionLimit {
	l := &revisionLimit{initial: initial}
	// An acknowledged put, delete or transaction whose answer shows it
	// wrote nothing (a delete that found no key) made no revision.
	none := map[int]bool{}
	for _, a := range answers {
		if a.resp != nil && a.Inv.F != etcdop.FLeaseRevoke && !madeRevision(a.Inv.F, &a.req, a.resp) {
			none[a.Inv.Index] = true
		}
	}
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 }) {
		if p.Done != nil && p.Done.Type == history.Fail || none[p.Inv.Index] {
			continue
		}
		switch p.Inv.F {
		case etcdop.FPut, etcdop.FDelete, etcdop.FKVTxn, etcdop.FLeaseRevoke:
			l.sent = append(l.sent, p.Inv.Time)
		case etcdop.FLeaseGrant:
			l.sent = append(l.sent, p.Inv.Time+grantTTL(p))
		case etcdop.FRange, etcdop.FRangeSerializable, etcdop.FWatch, etcdop.FLeaseKeepAlive:
		default:
			return nil
		}
	}
	slices.Sort(l.sent)
	for _, a := range answers {
		if a.resp != nil && madeRevision(a.Inv.F, &a.req, a.resp) {
			l.makers = append(l.makers, limitMaker{a: a})
		}
	}
	slices.SortStableFunc(l.makers, func(a, b limitMaker) int { return cmp.Compare(a.a.Inv.Time, b.a.Inv.Time) })
	for i := len(l.makers) - 1; i >= 0; i-- {
		l.makers[i].lowest = l.makers[i].a
		if i+1 < len(l.makers) && l.makers[i+1].lowest.resp.Revision < l.makers[i].a.resp.Revision {
			l.makers[i].lowest = l.makers[i+1].lowest
		}
	}
	return l
}

// most is the highest revision there can have been at t, why not
// higher, and the operations that show it; no limit when l is nil.
func (l *revisionLimit) most(t time.Duration) (int64, string, []history.Op) {
	if l == nil {
		return math.MaxInt64, "", nil
	}
	n, _ := slices.BinarySearch(l.sent, t+1) // at t or before
	most := l.initial + int64(n)
	why := fmt.Sprintf("the writes sent by then can have made no revision past %d", most)
	var ops []history.Op
	i, _ := slices.BinarySearchFunc(l.makers, t+1, func(m limitMaker, t time.Duration) int { return cmp.Compare(m.a.Inv.Time, t) })
	if i < len(l.makers) {
		if w := l.makers[i].lowest; w.resp.Revision-1 < most {
			most = w.resp.Revision - 1
			why = fmt.Sprintf("%s made revision %d and was sent only at %.3fs", w.src(), w.resp.Revision, w.Inv.Time.Seconds())
			ops = w.ops()
		}
	}
	return most, why, ops
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

// grantExpiries are, by lease, the earliest each acknowledged grant's
// lease can expire: its TTL after the grant was sent.
func grantExpiries(answers []answered) map[int64]time.Duration {
	out := map[int64]time.Duration{}
	for _, a := range answers {
		if a.Inv.F != etcdop.FLeaseGrant || a.resp == nil {
			continue
		}
		if t, ok := out[a.resp.Lease]; !ok || a.Inv.Time+grantTTL(a.Pair) < t {
			out[a.resp.Lease] = a.Inv.Time + grantTTL(a.Pair)
		}
	}
	return out
}

// checkMade reports an answer that came at a time naming a revision past
// the bound by then ("revision-never-made").
func checkMade(limit *revisionLimit, rev int64, at time.Duration, what string, ops []history.Op, found *analysis.FindingList) {
	var why string
	switch most, because, shown := limit.most(at); {
	case rev < 1:
		why = "which no store has: etcd's begins at revision 1"
	case rev > most:
		why = "but " + because
		ops = slices.Concat(ops, shown)
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
func checkFloors(answers []answered, seen []observed, found *analysis.FindingList) {
	slices.SortStableFunc(seen, func(a, b observed) int { return cmp.Compare(a.at, b.at) })
	var asked []answered
	for _, a := range answers {
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
func watchesSeen(watches []watchOp) []observed {
	var out []observed
	for _, w := range watches {
		for _, r := range w.res.Responses {
			if rev := responseRevision(r); rev > 0 {
				out = append(out, observed{at: r.Time, rev: rev, ops: w.proof(),
					src: w.src()})
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
