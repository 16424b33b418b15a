package etcd

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

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
// what cannot be read (the etcd-kv checker reports it).
func readAnswered(h []history.Op) []answered {
	var out []answered
	for _, p := range history.Pairs(h, func(op *history.Op) bool {
		return op.F != etcdop.FWatch && op.F != etcdop.FLeaseKeepAlive && op.Process >= 0
	}) {
		a := answered{Pair: p}
		if p.Done != nil && p.Done.Type == history.Fail || p.Inv.Decode(&a.req) != nil {
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

// writeIndex is every write that did not fail, by what it can have made.
type writeIndex struct {
	puts    map[keyValue][]answered // by key and value
	deletes []answered              // deletes of a key or a range, of any branch
	revokes []answered
	// leased: keys some put gave a lease to, and the first such put: the
	// lease may expire, and the key go, after it was invoked.
	leased map[string]answered
	txns   map[int64]answered // ok transactions with writes, by revision
	made   map[int64]answered // ok writes, by the revision they made
	// ranged are the ok writes whose answers say a range delete deleted
	// keys, though not which.
	ranged []answered
	// any: the history holds writes, failed or not (one without is not
	// judged: a foreign history, say).
	any bool
	// sole is, for each write (by its invocation's index) that alone can
	// have made some event, the first such event: a write makes one
	// revision at the most.
	sole map[int]soleEvent
}

type soleEvent struct {
	ev  etcdop.WatchEvent
	ops []history.Op // the watch that got it
}

func indexWrites(h []history.Op, answers []answered) writeIndex {
	x := writeIndex{puts: map[keyValue][]answered{}, leased: map[string]answered{}, txns: map[int64]answered{}, made: map[int64]answered{}, sole: map[int]soleEvent{}}
	x.any = slices.ContainsFunc(h, func(op history.Op) bool {
		return op.F == etcdop.FPut || op.F == etcdop.FDelete || op.F == etcdop.FKVTxn || op.F == etcdop.FLeaseRevoke
	})
	for _, a := range answers {
		if a.Inv.F == etcdop.FLeaseRevoke {
			x.revokes = append(x.revokes, a)
		}
		deletes := false
		for _, op := range a.branch() {
			switch op.F {
			case etcdop.FPut:
				kv := keyValue{op.Key, op.Value}
				x.puts[kv] = append(x.puts[kv], a)
				if first, ok := x.leased[op.Key]; op.Lease != 0 && (!ok || a.Inv.Time < first.Inv.Time) {
					x.leased[op.Key] = a
				}
			case etcdop.FDelete:
				deletes = true
			}
		}
		if deletes {
			x.deletes = append(x.deletes, a)
		}
		if a.Inv.F == etcdop.FKVTxn && a.resp != nil {
			x.txns[a.resp.Revision] = a
		}
		if a.resp != nil && madeRevision(a.Inv.F, &a.req, a.resp) {
			x.made[a.resp.Revision] = a
		}
		if a.resp != nil && slices.ContainsFunc(a.rangeDeletes(), func(i int) bool { return a.resp.Results[i].Deleted > 0 }) {
			x.ranged = append(x.ranged, a)
		}
	}
	return x
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

// checkUnseenMakers finds the revisions a watch covered and got no event
// at, though every write that can have made them writes only keys it
// asked for ("watch-lost-event").
func checkUnseenMakers(w watchOp, m revisionMakers, found *analysis.FindingList) {
	from, to := w.window()
	if from == 0 {
		return
	}
	got := w.revisions()
	for rev := from; rev <= to; rev++ {
		if got[rev] || !m.within(rev, w.req.Key, w.req.End) {
			continue
		}
		can := m.open[rev]
		ops := w.proof()
		var names []string
		for _, a := range can {
			ops, names = append(ops, a.ops()...), append(names, a.src())
		}
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "watch-lost-event", Explanation: fmt.Sprintf(
				"%s's watch (#%d) covered revisions %d to %d of %s but got no event at revision %d, which only %s can have made, each writing keys it watches.",
				history.ProcessName(w.Inv.Process), w.Inv.Index, from, to, describeRange(w.req.Key, w.req.End), rev, strings.Join(names, " or ")), Ops: ops}
		})
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

// checkOrigins finds the events of a watch that no write can have made
// ("watch-phantom-event"), or that it got before any write that can have
// made them was invoked ("watch-event-before-write"), and the events of a
// transaction that came in another order than its operations
// ("watch-txn-order": etcd's events of a revision are its changes in
// order). A history without writes (a foreign one, say) is not judged so.
func (x writeIndex) checkOrigins(w watchOp, found *analysis.FindingList) {
	if !x.any {
		return
	}
	wops := w.proof()
	src := fmt.Sprintf("%s's watch (#%d)", history.ProcessName(w.Inv.Process), w.Inv.Index)
	for _, r := range w.res.Responses {
		for _, e := range r.Events {
			makers := x.makers(e)
			if len(makers) == 0 {
				found.Add(func() analysis.Finding {
					return analysis.Finding{Kind: "watch-phantom-event", Explanation: fmt.Sprintf(
						"%s got %s at revision %d, which no write in the history can have made.", src, describeEvent(e), e.KV.Mod), Ops: wops}
				})
				continue
			}
			if a, ok := x.made[e.KV.Mod]; ok && !slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return touches(op, e.KV.Key) }) {
				found.Add(func() analysis.Finding {
					return analysis.Finding{Kind: "watch-divergent-event", Explanation: fmt.Sprintf(
						"%s got %s at revision %d, which %s made without writing %s.", src, describeEvent(e), e.KV.Mod, a.src(), e.KV.Key),
						Ops: slices.Concat(wops, a.ops())}
				})
			}
			if a, wrong := x.createdBy(e.KV); e.Type == "put" && wrong {
				found.Add(func() analysis.Finding {
					return analysis.Finding{Kind: "watch-divergent-event", Explanation: fmt.Sprintf(
						"%s got %s at revision %d, created at revision %d, which %s made without putting %s.",
						src, describeEvent(e), e.KV.Mod, e.KV.Create, a.src(), e.KV.Key), Ops: slices.Concat(wops, a.ops())}
				})
			}
			if len(makers) == 1 && (e.Type == "put" || x.leased[e.KV.Key].Inv != makers[0].Inv) { // not the lease's expiry
				x.soleMaker(makers[0], e, wops, found)
			}
			if first := slices.MinFunc(makers, func(a, b answered) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) }); first.Inv.Time > r.Time {
				found.Add(func() analysis.Finding {
					return analysis.Finding{Kind: "watch-event-before-write", Explanation: fmt.Sprintf(
						"%s got %s at revision %d at %s, before %s, the first write that can have made it, was invoked at %s.",
						src, describeEvent(e), e.KV.Mod, r.Time, first.src(), first.Inv.Time), Ops: slices.Concat(wops, first.ops())}
				})
			}
		}
		x.checkTxnOrder(r, src, wops, found)
	}
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

// createdBy finds the write that made the revision a key says it was
// created at, when that write put no such key: etcd takes a key's create
// revision from the put that created it.
func (x writeIndex) createdBy(kv etcdop.KV) (answered, bool) {
	a, ok := x.made[kv.Create]
	if !ok || kv.Create == kv.Mod {
		return answered{}, false
	}
	return a, !slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return op.F == etcdop.FPut && op.Key == kv.Key })
}

// soleMaker notes that write a alone can have made event e, which a watch
// got, and finds two revisions so made.
func (x writeIndex) soleMaker(a answered, e etcdop.WatchEvent, wops []history.Op, found *analysis.FindingList) {
	first, ok := x.sole[a.Inv.Index]
	switch {
	case !ok:
		x.sole[a.Inv.Index] = soleEvent{e, wops}
	case first.ev.KV.Mod != e.KV.Mod:
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "watch-phantom-event", Explanation: fmt.Sprintf(
				"%s at revision %d and %s at revision %d can each have been made only by %s, which makes one revision at the most.",
				describeEvent(first.ev), first.ev.KV.Mod, describeEvent(e), e.KV.Mod, a.src()), Ops: slices.Concat(first.ops, wops, a.ops())}
		})
	}
}

// makers are the writes that can have made event e: of its key (and
// value), and, when answered, at its revision; for a delete, also the
// first put that leased the key, after which its lease may expire.
func (x writeIndex) makers(e etcdop.WatchEvent) (makers []answered) {
	at := func(a answered) bool { return a.resp == nil || a.resp.Revision == e.KV.Mod }
	if e.Type == "put" {
		for _, a := range x.puts[keyValue{e.KV.Key, e.KV.Value}] {
			if at(a) && slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool {
				return op.F == etcdop.FPut && op.Key == e.KV.Key && op.Value == e.KV.Value && op.Lease == e.KV.Lease
			}) {
				makers = append(makers, a)
			}
		}
		return makers
	}
	for _, a := range x.deletes {
		if at(a) && slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool {
			return op.F == etcdop.FDelete && (op.Key == e.KV.Key || op.End != "" && inRange(op.Key, op.End, e.KV.Key))
		}) {
			makers = append(makers, a)
		}
	}
	for _, a := range x.revokes {
		if at(a) {
			makers = append(makers, a)
		}
	}
	if put, ok := x.leased[e.KV.Key]; ok {
		makers = append(makers, put)
	}
	return makers
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
