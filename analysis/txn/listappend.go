package txn

import (
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
)

// listOrder is each key's version order, as Elle's append-index: the
// distinct elements of the key's longest committed read. Every other read
// must be a prefix of that one; an append no read holds came after all of it.
type listOrder struct {
	longest []int32 // per key: its longest committed read (mop index), -1 if none
	order   []span  // per key: its version order, in orders
	orders  []int32
	pos     []int32 // per version: its place in its key's order, -1 if unread
}

// inferListOrders builds the version orders and reports what a list read
// shows against them: incompatible orders, and dirty updates.
func (o *observation) inferListOrders(found *findings) *listOrder {
	lo := &listOrder{longest: make([]int32, len(o.keys)), order: make([]span, len(o.keys)), pos: make([]int32, len(o.versions))}
	for i := range lo.longest {
		lo.longest[i] = -1
	}
	for i := range lo.pos {
		lo.pos[i] = -1
	}
	o.eachKnownRead(func(_ int32, i int32, m mop) {
		if l := lo.longest[m.key]; l < 0 || m.seen.len() > o.mops[l].seen.len() {
			lo.longest[m.key] = i
		}
	})
	for k, l := range lo.longest {
		from := int32(len(lo.orders))
		if l >= 0 {
			for _, v := range o.seen(o.mops[l]) {
				if lo.pos[v] < 0 { // Elle's order keeps an element's first place
					lo.pos[v] = int32(len(lo.orders)) - from
					lo.orders = append(lo.orders, v)
				}
			}
		}
		lo.order[k] = span{from, int32(len(lo.orders))}
	}
	incompatible := make([]bool, len(o.keys))
	o.eachKnownRead(func(t int32, _ int32, m mop) {
		longest := o.mops[lo.longest[m.key]]
		seen, all := o.seen(m), o.seen(longest)
		if incompatible[m.key] || len(seen) <= len(all) && slices.Equal(seen, all[:len(seen)]) {
			return
		}
		incompatible[m.key] = true
		other := o.mopTxn(lo.longest[m.key])
		found.add("incompatible-order", func() analysis.Finding {
			return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s = %s and %s read it = %s: neither is a prefix of the other, so no one order of appends gives both.",
				o.name(t), o.keys[m.key], o.showRead(m), o.name(other), o.showRead(longest)), Ops: o.ops(t, other)}
		})
	})
	o.checkDirtyUpdates(lo, found)
	return lo
}

// eachKnownRead calls f with each known read: its transaction, its index
// in o.mops, and the read.
func (o *observation) eachKnownRead(f func(t, i int32, m mop)) {
	for t, tx := range o.txns {
		for i := tx.mops.from; i < tx.mops.to; i++ {
			if m := o.mops[i]; m.kind == readMop && m.known {
				f(int32(t), i, m)
			}
		}
	}
}

// mopTxn is the transaction micro-op i belongs to.
func (o *observation) mopTxn(i int32) int32 {
	t, _ := slices.BinarySearchFunc(o.txns, i, func(tx txn, i int32) int {
		switch {
		case tx.mops.to <= i:
			return -1
		case tx.mops.from > i:
			return 1
		}
		return 0
	})
	return int32(t)
}

// keyOrder is key k's version order.
func (lo *listOrder) keyOrder(k int32) []int32 { return lo.orders[lo.order[k].from:lo.order[k].to] }

// previous is the version an append of v came right after, as Elle's
// previously-appended-element: the one before it in its key's order, or,
// for an append no read holds, the last of the order (the initial version
// when there is none).
func (lo *listOrder) previous(o *observation, v int32) int32 {
	k := o.versions[v].key
	order, p := lo.keyOrder(k), lo.pos[v]
	switch {
	case p > 0:
		return order[p-1]
	case p < 0 && len(order) > 0:
		return order[len(order)-1]
	}
	return o.initial[k]
}

// checkDirtyUpdates walks each key's order for an append by a failed
// transaction followed by one by a committed transaction, as Elle's
// dirty-update-cases: the committed write built on aborted state.
func (o *observation) checkDirtyUpdates(lo *listOrder, found *findings) {
	for k := range o.keys {
		last, lastStatus := int32(-1), committed // the initial state is committed
		var since []int32                        // versions from the last aborted write on
		for _, v := range lo.keyOrder(int32(k)) {
			w := o.versions[v].writer
			st := indeterminate // a value nobody wrote: no telling
			if w >= 0 {
				st = o.txns[w].status
			}
			since = append(since, v)
			switch {
			case lastStatus == aborted && st == committed:
				failed, vs := last, slices.Clone(since)
				found.add("dirty-update", func() analysis.Finding {
					return analysis.Finding{Explanation: fmt.Sprintf("Key %s went through %s: %s appended %s, building on the append of %s by %s, which failed.",
						o.keys[k], o.showVersions(vs, true), o.name(w), o.text[v], o.text[vs[0]], o.name(failed)), Ops: o.ops(failed, w)}
				})
				last, lastStatus, since = w, st, append(since[:0], v)
			case st == committed, st == aborted && lastStatus != aborted:
				last, lastStatus, since = w, st, append(since[:0], v)
			}
		}
	}
}

// linkListAppend adds the data dependencies the version orders give, as
// Elle's ww-graph, wr-graph and rw-graph: an append depends (ww) on the
// append before it and (rw) on every read that saw the state before it; a
// read depends (wr) on the append of its last element.
func (o *observation) linkListAppend(lo *listOrder, es *edges) {
	readers := o.readersOf(false)
	unread := make([][]int32, len(o.keys)) // the writers of each key's appends no read holds
	for t, tx := range o.txns {
		if tx.status == aborted {
			continue
		}
		for _, m := range o.txnMops(int32(t)) {
			switch {
			case m.kind == writeMop:
				p := lo.previous(o, m.value)
				if w := o.writerOf(p); w >= 0 {
					es.link(w, int32(t), ww)
				}
				if lo.pos[m.value] < 0 {
					unread[m.key] = append(unread[m.key], int32(t))
					continue
				}
				for _, r := range readers.of(p) {
					es.link(r, int32(t), rw)
				}
			case m.known && m.seen.len() > 0:
				if w := o.writerOf(m.value); w >= 0 {
					es.link(w, int32(t), wr)
				}
			}
		}
	}
	// Every unread append of a key follows the last state read: linked
	// together, since a database that loses appends may leave many of them
	// after a state many transactions read.
	for k, ts := range unread {
		last := o.initial[k]
		if order := lo.keyOrder(int32(k)); len(order) > 0 {
			last = order[len(order)-1]
		}
		es.fan(readers.of(last), ts, rw)
	}
}

// explainListAppend says why b depends on a by relation r, naming them an
// and bn, as Elle's explainers for the list-append graphs.
func (o *observation) explainListAppend(lo *listOrder, a, b int32, r rel, an, bn string) string {
	for _, m := range o.txnMops(b) {
		switch {
		case r == wr && m.kind == readMop && m.known && m.seen.len() > 0 && o.versions[m.value].writer == a:
			return fmt.Sprintf("%s read key %s = %s, which ends with %s's append of %s", bn, o.keys[m.key], o.showRead(m), an, o.text[m.value])
		case m.kind != writeMop:
			continue
		}
		p := lo.previous(o, m.value)
		if r == ww && !o.versions[p].initial && o.versions[p].writer == a {
			return fmt.Sprintf("%s appended %s after %s appended %s to key %s", bn, o.text[m.value], an, o.text[p], o.keys[m.key])
		}
		if r != rw {
			continue
		}
		for _, ra := range o.txnMops(a) {
			if ra.kind != readMop || !ra.known || ra.value != p {
				continue
			}
			next := "came next"
			if lo.pos[m.value] < 0 {
				next = "came later: no read saw it"
			}
			return fmt.Sprintf("%s read key %s = %s, and %s's append of %s %s", an, o.keys[m.key], o.showRead(ra), bn, o.text[m.value], next)
		}
	}
	return ""
}
