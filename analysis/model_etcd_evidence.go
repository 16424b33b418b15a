package analysis

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// etcdEvidence is what a history shows of the writes whose answers were
// lost, as etcd's robustness tests use it: a put's value is unique to it,
// so a watch event or a read that shows the value shows that the put took
// effect, and at which revision. When the watches vouch for every revision
// up to the last any answer named, a put never shown took no effect there:
// had it, a watch would have got its event (else etcd-watch and this
// model find the revision it took unexplained); past that revision, no
// answer can tell it from one that never happened.
type etcdEvidence struct {
	seen map[string]sighting // by put value, shown once and put by one operation
	// covered: the watches vouch for every revision from the initial one
	// to the last any answer named.
	covered bool
}

// sighting is where a value was first shown: its put's revision, and the
// earliest time an answer showing it came (the put took effect before).
type sighting struct {
	rev int64
	at  time.Duration
}

func gatherEtcdEvidence(h []history.Op, initialRev int64) etcdEvidence {
	puts := map[string]int{} // value -> operations putting it
	ev := etcdEvidence{seen: map[string]sighting{}}
	show := func(value string, rev int64, at time.Duration) {
		if s, ok := ev.seen[value]; !ok || at < s.at {
			ev.seen[value] = sighting{rev: rev, at: at}
		}
	}
	last := initialRev
	var windows [][2]int64
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 }) {
		var req history.KVRequest
		if slices.Contains([]string{history.FPut, history.FKVTxn}, p.Inv.F) && p.Inv.Decode(&req) == nil {
			for _, op := range slices.Concat(req.Then, req.Else) {
				if op.F == history.FPut {
					puts[op.Value]++
				}
			}
		}
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		switch p.Inv.F {
		case history.FWatch:
			w := watchOp{Pair: p}
			if errors.Join(p.Inv.Decode(&w.req), p.Done.Decode(&w.res)) != nil {
				continue // etcd-watch reports what it cannot read
			}
			if from, to := w.window(); from > 0 {
				windows = append(windows, [2]int64{from, to})
			}
			for _, r := range w.res.Responses {
				last = max(last, r.Revision)
				for _, e := range r.Events {
					if e.Type == "put" {
						show(e.KV.Value, e.KV.Mod, r.Time)
					}
				}
			}
		case history.FRange, history.FRangeSerializable, history.FPut, history.FDelete, history.FKVTxn, history.FLeaseGrant, history.FLeaseRevoke:
			var resp history.KVResponse
			if p.Done.Decode(&resp) != nil {
				continue
			}
			last = max(last, resp.Revision)
			for _, r := range resp.Results {
				for _, kv := range r.KVs {
					show(kv.Value, kv.Mod, p.Done.Time)
				}
			}
		}
	}
	for v := range ev.seen {
		if puts[v] != 1 {
			delete(ev.seen, v) // not unique: shows nothing about one put
		}
	}
	ev.covered = covers(windows, initialRev+1, last)
	return ev
}

// covers says whether the union of windows holds every revision in [from, to].
func covers(windows [][2]int64, from, to int64) bool {
	slices.SortFunc(windows, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	next := from // the first revision not yet covered
	for _, w := range windows {
		if w[0] > next {
			break
		}
		next = max(next, w[1]+1)
	}
	return next > to
}

// patch decides a put or transaction of unknown outcome on the evidence:
// shown, it took effect (the answer it would have had, and when by the
// latest); never shown where watches cover every revision, it took none.
// Other operations, and those the evidence cannot decide, stay unknown.
func (ev etcdEvidence) patch(f string, req *history.KVRequest) (resp *history.KVResponse, at time.Duration, unseen bool) {
	var value string
	switch {
	case f == history.FPut:
		value = req.Then[0].Value
	case f == history.FKVTxn && len(req.Then) == 1 && req.Then[0].F == history.FPut && !slices.ContainsFunc(req.Else, func(op history.KVOp) bool { return op.F != history.FRange }):
		// Shown, it succeeded; never shown, it ran the branch that only
		// reads, or never ran: no effect either way.
		value = req.Then[0].Value
	default:
		return nil, 0, false
	}
	s, ok := ev.seen[value]
	if !ok {
		return nil, 0, ev.covered
	}
	return &history.KVResponse{Revision: s.rev, Succeeded: true, Results: []history.KVResult{{}}}, s.at, false
}
