package etcd

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// Where the events of watches and the keys of reads come from: every
// event, and every key a read returns, was made by a write of the history
// (or before it began), one that wrote that key, was sent in time, and
// made no other revision.

// writeIndex is every write that did not fail, by what it can have made.
type writeIndex struct {
	puts    map[keyValue][]answered // by key and value
	deletes []answered              // deletes of a key or a range, of any branch
	revokes []answered
	// leased: keys some put gave a lease to, with the put after which
	// its lease can first expire, and the key go.
	leased map[string]leasedKey
	txns   map[int64]answered // ok transactions with writes, by revision
	made   map[int64]answered // ok writes, by the revision they made
	// madeRevs are made's revisions in order; putAt, by key, those of
	// them whose writes put the key, in order.
	madeRevs []int64
	putAt    map[string][]int64
	// ranged are the ok writes whose answers say a range delete deleted
	// keys, though not which.
	ranged []answered
	// any: the history holds writes, failed or not (one without is not
	// judged: a foreign history, say).
	any bool
	// initial is the revision when the history began: the writes of
	// revisions up to it are not in it.
	initial int64
	// elim is what elimination showed of the writes that made each
	// revision; ends, the revokes that ended leases, by lease.
	elim revisionMakers
	ends map[int64]answered
	// removed are, by key, the deletes known from answers and from
	// elimination, in no order.
	removed map[string][]knownEvent
	// sole is, for each write (by its invocation's index) that alone can
	// have made some event, the first such event: a write makes one
	// revision at the most.
	sole map[int]soleEvent
}

// leasedKey is a put that gave a key a lease, and the earliest the lease
// can expire: its grant's TTL after the grant was sent, or, with no grant
// in the history, when the put was.
type leasedKey struct {
	put     answered
	expires time.Duration
}

type soleEvent struct {
	ev  etcdop.WatchEvent
	ops []history.Op // the watch that got it
}

// indexWrites indexes the writes of answers; elim is what elimination
// showed, written the events answers and elimination tell of.
func indexWrites(h []history.Op, answers []answered, initial int64, elim revisionMakers, written []knownEvent) writeIndex {
	x := writeIndex{initial: initial, elim: elim, ends: leaseEnds(answers), removed: map[string][]knownEvent{}, puts: map[keyValue][]answered{}, leased: map[string]leasedKey{}, txns: map[int64]answered{}, made: map[int64]answered{}, putAt: map[string][]int64{}, sole: map[int]soleEvent{}}
	x.any = slices.ContainsFunc(h, func(op history.Op) bool {
		return op.F == etcdop.FPut || op.F == etcdop.FDelete || op.F == etcdop.FKVTxn || op.F == etcdop.FLeaseRevoke
	})
	granted := grantExpiries(answers)
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
				expires := a.Inv.Time
				if t, ok := granted[op.Lease]; ok {
					expires = max(expires, t)
				}
				if first, ok := x.leased[op.Key]; op.Lease != 0 && (!ok || expires < first.expires) {
					x.leased[op.Key] = leasedKey{a, expires}
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
	for _, e := range written {
		if e.ev.Type == "delete" {
			x.removed[e.ev.KV.Key] = append(x.removed[e.ev.KV.Key], e)
		}
	}
	for rev, a := range x.made {
		x.madeRevs = append(x.madeRevs, rev)
		for _, op := range a.branch() {
			if op.F == etcdop.FPut {
				x.putAt[op.Key] = append(x.putAt[op.Key], rev)
			}
		}
	}
	slices.Sort(x.madeRevs)
	for _, revs := range x.putAt {
		slices.Sort(revs)
	}
	x.linearSoles(answers)
	return x
}

// linearSoles notes, for each key a linearizable read returned that one
// write of unknown outcome alone can have put, that write's revision: the
// read is etcd-kv's to judge, but a watch's event or a serializable read
// that the same write alone can have made at another revision is not.
func (x writeIndex) linearSoles(answers []answered) {
	for _, a := range answers {
		if a.resp == nil || a.Inv.F == etcdop.FRangeSerializable {
			continue
		}
		for i, op := range a.branch() {
			if op.F != etcdop.FRange || i >= len(a.resp.Results) {
				continue
			}
			for _, kv := range a.resp.Results[i].KVs {
				e := etcdop.WatchEvent{Type: "put", KV: kv}
				writes, _ := x.makers(e)
				if kv.Mod <= x.initial || len(writes) != 1 || writes[0].resp != nil {
					continue
				}
				if _, ok := x.sole[writes[0].Inv.Index]; !ok {
					x.sole[writes[0].Inv.Index] = soleEvent{e, a.ops()}
				}
			}
		}
	}
}

// othersIn are the operations of the acknowledged writes that made
// revisions of [from, to] without putting key (the first maxMakers).
func (x writeIndex) othersIn(key string, from, to int64) []history.Op {
	var ops []history.Op
	i, _ := slices.BinarySearch(x.madeRevs, from)
	for n := 0; i < len(x.madeRevs) && x.madeRevs[i] <= to && n < maxMakers; i++ {
		if _, puts := slices.BinarySearch(x.putAt[key], x.madeRevs[i]); !puts {
			ops = append(ops, x.made[x.madeRevs[i]].ops()...)
			n++
		}
	}
	return ops
}

// puttable is how many revisions of [from, to] can have put key: all but
// those acknowledged writes made without putting it.
func (x writeIndex) puttable(key string, from, to int64) int64 {
	within := func(revs []int64) int64 {
		i, _ := slices.BinarySearch(revs, from)
		j, _ := slices.BinarySearch(revs, to+1)
		return int64(j - i)
	}
	return to - from + 1 - (within(x.madeRevs) - within(x.putAt[key]))
}

// origin names the findings checkOrigin makes of one kind of answer: a
// key or an event that no write can have made, one that a write made
// without writing its key, and one answered before any write that can
// have made it was invoked.
type origin struct{ phantom, divergent, early string }

var (
	watchOrigin = origin{"watch-phantom-event", "watch-divergent-event", "watch-event-before-write"}
	readOrigin  = origin{"phantom-key", "divergent-reads", "read-from-future"}
)

// checkOrigins finds the events of a watch that no write can have made,
// or that it got before any write that can have made them was invoked,
// and the events of a transaction that came in another order than its
// operations ("watch-txn-order": etcd's events of a revision are its
// changes in order).
func (x writeIndex) checkOrigins(w watchOp, found *analysis.FindingList) {
	wops := w.proof()
	src := fmt.Sprintf("%s's watch (#%d)", history.ProcessName(w.Inv.Process), w.Inv.Index)
	for _, r := range w.res.Responses {
		for _, e := range r.Events {
			x.checkOrigin(e, r.Time, src, wops, watchOrigin, found)
			if e.Type == "put" {
				checkLeaseLive(e.KV, e.KV.Mod, x.ends, src, wops, watchOrigin.phantom, found)
			}
			if p := e.Prev; p != nil && p.Mod < e.KV.Mod && kvFlaw(*p) == "" { // else checkStream reports it
				x.checkOrigin(etcdop.WatchEvent{Type: "put", KV: *p}, r.Time, src+", as a previous key", wops, watchOrigin, found)
				checkLeaseLive(*p, e.KV.Mod-1, x.ends, src+", as a previous key", wops, watchOrigin.phantom, found)
			}
		}
		x.checkTxnOrder(r, src, wops, found)
	}
}

// checkOrigin finds what makes event e, which src got at a time, from no
// write of the history: no write can have made it, the write that made
// its revision did not write its key, or created it at another, or no
// write that can have made it was invoked by then. A history without
// writes (a foreign one, say) is not judged so, nor an event from before
// the history began.
func (x writeIndex) checkOrigin(e etcdop.WatchEvent, at time.Duration, src string, ops []history.Op, k origin, found *analysis.FindingList) {
	if !x.any || e.KV.Mod <= x.initial {
		return
	}
	writes, expiry := x.makers(e)
	if len(writes) == 0 && expiry == nil {
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: k.phantom, Explanation: fmt.Sprintf(
				"%s got %s at revision %d, which no write in the history can have made.", src, describeEvent(e), e.KV.Mod), Ops: ops}
		})
		return
	}
	if a, ok := x.made[e.KV.Mod]; ok && !slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return touches(op, e.KV.Key) }) {
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: k.divergent, Explanation: fmt.Sprintf(
				"%s got %s at revision %d, which %s made without writing %s.", src, describeEvent(e), e.KV.Mod, a.src(), e.KV.Key),
				Ops: slices.Concat(ops, a.ops())}
		})
	}
	if n := x.puttable(e.KV.Key, e.KV.Create, e.KV.Mod); e.Type == "put" && e.KV.Create > 0 && e.KV.Version > n {
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: k.divergent, Explanation: fmt.Sprintf(
				"%s got %s at revision %d: version %d counts more puts since its creation at revision %d than the %d that revisions %d to %d not made by other writes allow.",
				src, describeEvent(e), e.KV.Mod, e.KV.Version, e.KV.Create, n, e.KV.Create, e.KV.Mod), Ops: slices.Concat(ops, x.othersIn(e.KV.Key, e.KV.Create, e.KV.Mod))}
		})
	}
	x.checkLeftAlone(e, e.KV.Mod, src, ops, k, found)
	x.checkUnchanged(e, e.KV.Mod, src, ops, k, found)
	if e.Type == "put" && e.KV.Create > x.initial && e.KV.Create < e.KV.Mod {
		x.checkLeftAlone(e, e.KV.Create, src, ops, k, found)
		x.checkUnchanged(e, e.KV.Create, src, ops, k, found)
		x.checkDeletedSince(e, src, ops, k, found)
	}
	if a, wrong := x.createdBy(e.KV); e.Type == "put" && wrong {
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: k.divergent, Explanation: fmt.Sprintf(
				"%s got %s at revision %d, created at revision %d, which %s made without putting %s.",
				src, describeEvent(e), e.KV.Mod, e.KV.Create, a.src(), e.KV.Key), Ops: slices.Concat(ops, a.ops())}
		})
	}
	if len(writes) == 1 && expiry == nil {
		x.soleMaker(writes[0], e, ops, k.phantom, found)
	}
	checkEarly(e, at, writes, expiry, src, ops, k, found)
}

// checkEarly finds event e, got at a time, before any of its makers can
// have made it: a write before it was sent, a lease's expiry before its
// TTL can have passed.
func checkEarly(e etcdop.WatchEvent, at time.Duration, writes []answered, expiry *leasedKey, src string, ops []history.Op, k origin, found *analysis.FindingList) {
	first := time.Duration(math.MaxInt64)
	var what string
	var proof []history.Op
	for _, a := range writes {
		if a.Inv.Time < first {
			first, what, proof = a.Inv.Time, fmt.Sprintf("%s, the first write that can have made it, was invoked", a.src()), a.ops()
		}
	}
	if expiry != nil && expiry.expires < first {
		first, what, proof = expiry.expires, fmt.Sprintf("the lease %s gave %s, the first that can have deleted it, could expire", expiry.put.src(), e.KV.Key), expiry.put.ops()
	}
	if first <= at {
		return
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: k.early, Explanation: fmt.Sprintf(
			"%s got %s at revision %d at %s, before %s at %s.", src, describeEvent(e), e.KV.Mod, at, what, first), Ops: slices.Concat(ops, proof)}
	})
}

// checkLeftAlone finds event e saying its key was written at revision
// rev (its mod or create revision), which elimination showed only writes
// of unknown outcome can have made, none of them writing that key.
func (x writeIndex) checkLeftAlone(e etcdop.WatchEvent, rev int64, src string, ops []history.Op, k origin, found *analysis.FindingList) {
	if _, ok := x.made[rev]; ok || !x.elim.untouched(rev, e.KV.Key) {
		return // the write that made it is known, or may have written the key
	}
	var srcs []string
	for _, a := range x.elim.open[rev] {
		srcs = append(srcs, a.src())
		ops = slices.Concat(ops, a.ops())
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: k.divergent, Explanation: fmt.Sprintf(
			"%s got %s, which says %s was written at revision %d; only %s can have made that revision, and none writes %s.",
			src, describeEvent(e), e.KV.Key, rev, strings.Join(srcs, " or "), e.KV.Key), Ops: ops}
	})
}

// checkUnchanged finds event e saying its key was written at revision
// rev (its mod or create revision), where a read, or a creation, showed
// the key left as it was.
func (x writeIndex) checkUnchanged(e etcdop.WatchEvent, rev int64, src string, ops []history.Op, k origin, found *analysis.FindingList) {
	read, ok := x.elim.unchanged.holds(e.KV.Key, rev)
	if !ok {
		return
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: k.divergent, Explanation: fmt.Sprintf(
			"%s got %s, which says %s was written at revision %d, but %s showed it left as it was there.",
			src, describeEvent(e), e.KV.Key, rev, read.src), Ops: slices.Concat(ops, read.ops)}
	})
}

// checkDeletedSince finds a put event e whose key a known delete removed
// after its create revision, at or before its own.
func (x writeIndex) checkDeletedSince(e etcdop.WatchEvent, src string, ops []history.Op, k origin, found *analysis.FindingList) {
	for _, d := range x.removed[e.KV.Key] {
		if r := d.ev.KV.Mod; e.KV.Create < r && r <= e.KV.Mod {
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: k.divergent, Explanation: fmt.Sprintf(
					"%s got %s, created at revision %d, but %s deleted %s at revision %d, in between.",
					src, describeEvent(e), e.KV.Create, d.src, e.KV.Key, r), Ops: slices.Concat(ops, d.ops)}
			})
			return
		}
	}
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
// or a read got, and finds two revisions so made (a finding of kind).
func (x writeIndex) soleMaker(a answered, e etcdop.WatchEvent, wops []history.Op, kind string, found *analysis.FindingList) {
	first, ok := x.sole[a.Inv.Index]
	switch {
	case !ok:
		x.sole[a.Inv.Index] = soleEvent{e, wops}
	case first.ev.KV.Mod != e.KV.Mod:
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: kind, Explanation: fmt.Sprintf(
				"%s at revision %d and %s at revision %d can each have been made only by %s, which makes one revision at the most.",
				describeEvent(first.ev), first.ev.KV.Mod, describeEvent(e), e.KV.Mod, a.src()), Ops: slices.Concat(first.ops, wops, a.ops())}
		})
	}
}

// makers are the writes that can have made event e: of its key (and
// value), and, when answered, at its revision; for a delete, also the
// expiry of the lease a put gave the key, when there is one.
func (x writeIndex) makers(e etcdop.WatchEvent) (makers []answered, expiry *leasedKey) {
	at := func(a answered) bool { return a.resp == nil || a.resp.Revision == e.KV.Mod }
	if e.Type == "put" {
		for _, a := range x.puts[keyValue{e.KV.Key, e.KV.Value}] {
			if at(a) && slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool {
				return op.F == etcdop.FPut && op.Key == e.KV.Key && op.Value == e.KV.Value && op.Lease == e.KV.Lease
			}) {
				makers = append(makers, a)
			}
		}
		return makers, nil
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
	if l, ok := x.leased[e.KV.Key]; ok {
		expiry = &l
	}
	return makers, expiry
}
