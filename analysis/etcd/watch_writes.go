package etcd

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// answered is a write or read and what its answer says, when it has one.
type answered struct {
	history.Pair
	req  etcdop.KVRequest
	resp *etcdop.KVResponse // nil: unknown outcome
}

// branch is the operations the answer says ran, or, of unknown outcome,
// every operation that may have.
func (a answered) branch() []etcdop.KVOp {
	switch {
	case a.resp == nil:
		return slices.Concat(a.req.Then, a.req.Else)
	case a.Inv.F == etcdop.FKVTxn && !a.resp.Succeeded:
		return a.req.Else
	}
	return a.req.Then
}

// lease is the lease a revoke or a grant is of; a grant's, only once
// answered.
func (a answered) lease() int64 {
	if a.Inv.F == etcdop.FLeaseGrant {
		return a.resp.Lease
	}
	return a.req.Lease
}

// endsLease says whether a ends a lease: a revoke, or, for elimination, a
// grant standing for its lease's expiry.
func (a answered) endsLease() bool {
	return a.Inv.F == etcdop.FLeaseRevoke || a.Inv.F == etcdop.FLeaseGrant
}

func (a answered) src() string {
	return fmt.Sprintf("%s's %s (#%d)", history.ProcessName(a.Inv.Process), a.Inv.F, a.Inv.Index)
}

func (a answered) ops() []history.Op {
	if a.Done == nil {
		return []history.Op{*a.Inv}
	}
	return []history.Op{*a.Inv, *a.Done}
}

// readAnswered reads the KV operations that did not fail, and leaves out
// what cannot be read or run (the etcd-kv checker reports it).
func readAnswered(h []history.Op) []answered {
	var out []answered
	for _, p := range history.Pairs(h, func(op *history.Op) bool {
		return op.F != etcdop.FWatch && op.F != etcdop.FLeaseKeepAlive && op.Process >= 0
	}) {
		a := answered{Pair: p}
		if p.Done != nil && p.Done.Type == history.Fail || p.Inv.Decode(&a.req) != nil || checkKVRequest(p.Inv.F, &a.req) != nil {
			continue
		}
		if p.Done != nil && p.Done.Type == history.Ok {
			a.resp = &etcdop.KVResponse{}
			if p.Done.Decode(a.resp) != nil {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// answeredEvents are the events that answers make known: an ok put at its
// answer's revision, an ok delete of one key that deleted it, or of a
// range that deleted as many keys as puts sent before its answer wrote in
// it (each of them, then), the writes of the branch an ok transaction
// ran, and every key a read returned, put at its mod revision.
func answeredEvents(answers []answered) []knownEvent {
	var out []knownEvent
	puts := putsOf(answers)
	for _, a := range answers {
		if a.resp == nil {
			continue
		}
		add := func(ev etcdop.WatchEvent) {
			out = append(out, knownEvent{ev: ev, ops: a.ops(), src: a.src(), since: ev.KV.Mod})
		}
		for i, op := range a.branch() {
			var res etcdop.KVResult
			if i < len(a.resp.Results) {
				res = a.resp.Results[i]
			}
			switch {
			case op.F == etcdop.FPut:
				add(etcdop.WatchEvent{Type: "put", KV: etcdop.KV{Key: op.Key, Value: op.Value, Mod: a.resp.Revision, Lease: op.Lease}})
			case op.F == etcdop.FDelete && op.End == "" && res.Deleted > 0:
				add(etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: op.Key, Mod: a.resp.Revision}})
			case op.F == etcdop.FDelete && res.Deleted > 0:
				if keys := puts.keysIn(op.Key, op.End, a.Done.Time); int64(len(keys)) == res.Deleted {
					for _, key := range keys {
						add(etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: key, Mod: a.resp.Revision}})
					}
				}
			}
			for _, kv := range res.KVs {
				add(etcdop.WatchEvent{Type: "put", KV: kv})
			}
		}
	}
	return out
}

// writtenEvents are the events answers and elimination tell of, and the
// deletes of a range delete that deleted as many keys as were certainly
// there before it: a key whose last event known before it put it, with
// every revision since left it alone by elimination's showing.
func writtenEvents(answers []answered, m revisionMakers) []knownEvent {
	out := slices.Concat(answeredEvents(answers), m.events)
	byKey := map[string][]knownEvent{}
	known := map[eventAt]bool{}
	for _, e := range out {
		byKey[e.ev.KV.Key] = append(byKey[e.ev.KV.Key], e)
		known[eventAt{e.ev.KV.Mod, e.ev.KV.Key}] = true
	}
	for _, es := range byKey {
		slices.SortFunc(es, func(a, b knownEvent) int { return cmp.Compare(a.ev.KV.Mod, b.ev.KV.Mod) })
	}
	for _, a := range answers {
		// A delete alone: in a transaction, the writes before it would
		// change what was there.
		if a.resp == nil || a.Inv.F != etcdop.FDelete || m.puts.byKey == nil {
			continue
		}
		for _, i := range a.rangeDeletes() {
			op, rev, n := a.branch()[i], a.resp.Revision, a.resp.Results[i].Deleted
			var found []knownEvent
			for _, key := range m.puts.keysIn(op.Key, op.End, a.Done.Time) {
				if put, ok := standing(byKey[key], key, rev-1, m); ok {
					found = append(found, put)
				}
			}
			if n == 0 || int64(len(found)) != n {
				continue
			}
			for _, put := range found {
				if key := put.ev.KV.Key; !known[eventAt{rev, key}] {
					out = append(out, knownEvent{ev: etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: key, Mod: rev}},
						ops: slices.Concat(a.ops(), put.ops), src: fmt.Sprintf("%s, which deleted as many keys as %s and the like left there", a.src(), put.src), since: put.ev.KV.Mod})
				}
			}
		}
	}
	return out
}

// revokedKeys are the deletes an ok lease revoke made: of each key whose
// last event known before the revoke's revision put it with the lease. A
// watch is bound to have got such a delete when it covered that put too,
// since then no event of the key can have come between unseen.
func revokedKeys(answers []answered, known map[eventAt]knownEvent) []knownEvent {
	byKey := map[string][]knownEvent{}
	for _, e := range known {
		byKey[e.ev.KV.Key] = append(byKey[e.ev.KV.Key], e)
	}
	for _, es := range byKey {
		slices.SortFunc(es, func(a, b knownEvent) int { return cmp.Compare(a.ev.KV.Mod, b.ev.KV.Mod) })
	}
	var out []knownEvent
	for _, a := range answers {
		if a.Inv.F != etcdop.FLeaseRevoke || a.resp == nil {
			continue
		}
		rev := a.resp.Revision
		for key, es := range byKey {
			i, _ := slices.BinarySearchFunc(es, rev, func(e knownEvent, r int64) int { return cmp.Compare(e.ev.KV.Mod, r) })
			if i == 0 || es[i-1].ev.Type != "put" || es[i-1].ev.KV.Lease != a.req.Lease {
				continue
			}
			put := es[i-1]
			out = append(out, knownEvent{ev: etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: key, Mod: rev}},
				ops: slices.Concat(a.ops(), put.ops), src: fmt.Sprintf("%s, of the lease %s gave the key", a.src(), put.src), since: put.ev.KV.Mod})
		}
	}
	return out
}

// rangeDeletes are the positions, in the branch that ran, of an ok
// write's range deletes that have a result.
func (a answered) rangeDeletes() []int {
	var out []int
	for i, op := range a.branch() {
		if op.F == etcdop.FDelete && op.End != "" && i < len(a.resp.Results) {
			out = append(out, i)
		}
	}
	return out
}

// checkRangeDeletes finds the revisions that an ok write made by deleting
// keys of a range the watch asked for, which the watch covered and got no
// event of ("watch-lost-event": it must have got one, whichever keys they
// were).
func (x writeIndex) checkRangeDeletes(w watchOp, found *analysis.FindingList) {
	from, to := w.window()
	got := w.revisions()
	for _, a := range x.ranged {
		rev := a.resp.Revision
		if from == 0 || rev < from || rev > to || got[rev] {
			continue
		}
		for _, i := range a.rangeDeletes() {
			op := a.branch()[i]
			if a.resp.Results[i].Deleted == 0 || !rangeWithin(op.Key, op.End, w.req.Key, w.req.End) {
				continue
			}
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "watch-lost-event", Explanation: fmt.Sprintf(
					"%s's watch (#%d) covered revisions %d to %d of %s but got no event at revision %d, where %s deleted %d keys of %s.",
					history.ProcessName(w.Inv.Process), w.Inv.Index, from, to, describeRange(w.req.Key, w.req.End), rev, a.src(),
					a.resp.Results[i].Deleted, describeRange(op.Key, op.End)), Ops: slices.Concat(w.proof(), a.ops())}
			})
			break
		}
	}
}

// rangeWithin says whether the range [key, end) lies in [wkey, wend) (a
// "\x00" end: no end, as etcd takes it; an empty one: the key alone).
func rangeWithin(key, end, wkey, wend string) bool {
	switch {
	case end == "":
		return inRange(wkey, wend, key)
	case wend == "":
		return end == "" && key == wkey
	case key < wkey:
		return false
	case wend == "\x00":
		return true
	}
	return end != "\x00" && end <= wend
}

// touches says whether op can write key.
func touches(op etcdop.KVOp, key string) bool {
	switch op.F {
	case etcdop.FPut:
		return op.Key == key
	case etcdop.FDelete:
		return op.Key == key || op.End != "" && inRange(op.Key, op.End, key)
	}
	return false
}

// checkTxnOrder checks that the events a response gives of an ok
// transaction's revision follow the order of its operations.
func (x writeIndex) checkTxnOrder(r etcdop.WatchResponse, src string, wops []history.Op, found *analysis.FindingList) {
	byRev := map[int64][]string{}
	for _, e := range r.Events {
		byRev[e.KV.Mod] = append(byRev[e.KV.Mod], e.KV.Key)
	}
	for rev, got := range byRev {
		txn, ok := x.txns[rev]
		if !ok || len(got) < 2 {
			continue
		}
		var want []string
		for _, op := range txn.branch() {
			if op.F == etcdop.FDelete && op.End != "" {
				want = nil // a range's deletes come in key order, which the answer does not give
				break
			}
			if (op.F == etcdop.FPut || op.F == etcdop.FDelete) && slices.Contains(got, op.Key) && !slices.Contains(want, op.Key) {
				want = append(want, op.Key)
			}
		}
		if want != nil && !slices.Equal(want, got) {
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "watch-txn-order", Explanation: fmt.Sprintf(
					"%s got the events of revision %d for keys %v, where %s wrote them in the order %v.", src, rev, got, txn.src(), want),
					Ops: slices.Concat(wops, txn.ops())}
			})
		}
	}
}
