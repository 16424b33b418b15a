package etcd

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// etcdEvidence is what a history shows of the writes whose answers were
// lost, as etcd's robustness tests use it, without their assumption that
// a value names one put:
//
//   - a watch event or a read that shows a key with a value at a revision
//     no answer accounts for shows that a write of unknown outcome putting
//     that value to that key made the revision, by when it was shown; when
//     one such write exists and the pair was shown at one such revision,
//     the revision is that write's;
//   - when watches of every key written vouch for every revision up to the
//     last any answer named, the revisions no answer accounts for were
//     made by writes of unknown outcome, and the watches' events say what
//     each did: a delete of a key, or a lease revoke's deletes (their
//     previous keys name the lease); each is assigned to an operation that
//     can have made it;
//   - a put of unknown outcome shown nowhere, whose key's watches vouch for
//     every revision up to the last named, took no effect: had it, they
//     would have got its event (else etcd-watch and this model find a
//     revision unexplained). A watch vouches only for the keys it asked
//     for. Past the last revision named, no answer can tell a write from
//     one that never happened.
type etcdEvidence struct {
	seen map[keyValue]sighting // the revision the one open write of a pair made
	// ambiguous: pairs shown at revisions no answer accounts for that more
	// than one write of unknown outcome can have made, or at several.
	ambiguous map[keyValue]bool
	// keyCovered: the watches of a key vouch for every revision from the
	// initial one to the last any answer named (for the keys of open puts).
	keyCovered map[string]bool
	// covered: watches of every key written vouch for every revision.
	covered bool
	// made are the deletes and revokes of unknown outcome (by the position
	// of their invocation) that the unexplained revisions were assigned to.
	made map[int]sighting
	// settled: covered, and every unexplained revision assigned.
	settled bool
}

// keyValue is a put's key and value.
type keyValue struct{ key, value string }

// sighting is a revision a write made, and the earliest time an answer
// showing it came (the write took effect before).
type sighting struct {
	rev int64
	at  time.Duration
}

// openWrite is a delete or lease revoke of unknown outcome.
type openWrite struct {
	index    int
	f        string
	key, end string // a delete's, of one key or a range
	lease    int64  // a revoke's
	invoked  time.Duration
	// other: a delete of a range or in a transaction, never assigned a
	// revision, but one that can have made it when no other write can.
	other bool
}

// watchWindow is the keys and the revisions a watch vouches for.
type watchWindow struct {
	key, end string
	span     [2]int64
}

// gathered is what one pass over the history collects.
type gathered struct {
	openPuts  map[keyValue]int                     // pair -> writes of unknown outcome putting it
	written   map[string]bool                      // every key a put writes
	shown     map[keyValue]map[int64]time.Duration // pair -> revisions it was shown at, and when first
	windows   []watchWindow
	events    map[int64][]etcdop.WatchEvent // by revision, a key once
	eventAt   map[int64]time.Duration       // earliest a watch got the revision's events
	prevLease map[eventAt]int64             // a deleted key's lease, from a watch's prev_kv
	explained map[int64]bool                // revisions answers say writes made
	answered  []sighting                    // ok answers' revisions and times
	revokes   map[int64]sighting            // ok revokes' answered revisions and invocations, by lease
	open      []openWrite
	last      int64 // the last revision any answer named
}

func gatherEtcdEvidence(h []history.Op, initialRev int64) etcdEvidence {
	g := gathered{openPuts: map[keyValue]int{}, written: map[string]bool{}, shown: map[keyValue]map[int64]time.Duration{},
		events: map[int64][]etcdop.WatchEvent{}, eventAt: map[int64]time.Duration{},
		prevLease: map[eventAt]int64{}, explained: map[int64]bool{}, revokes: map[int64]sighting{}, last: initialRev}
	ev := etcdEvidence{seen: map[keyValue]sighting{}, ambiguous: map[keyValue]bool{}, keyCovered: map[string]bool{}, made: map[int]sighting{}}
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 || op.Process == history.Server }) {
		g.add(p)
	}
	ev.attribute(&g)
	for kv := range g.openPuts {
		ev.keyCovered[kv.key] = covers(g.spans(func(w watchWindow) bool { return inRange(w.key, w.end, kv.key) }), initialRev+1, g.last)
	}
	ev.covered = covers(g.spans(func(w watchWindow) bool {
		for k := range g.written {
			if !inRange(w.key, w.end, k) {
				return false
			}
		}
		return true
	}), initialRev+1, g.last)
	if !ev.covered {
		return ev
	}
	// A revoke answered with a revision made of deletes of its lease's
	// keys made that revision, unless an answer named the revision before
	// the revoke was sent: then it found its lease emptied (by a delete
	// of unknown outcome, say) and answered the current revision.
	floor := floors(g.answered)
	for lease, r := range g.revokes {
		if g.deletesOf(r.rev, lease) && floor(r.at) < r.rev {
			g.explained[r.rev] = true
		}
	}
	ev.settled = true
	for rev := initialRev + 1; rev <= g.last; rev++ {
		if g.explained[rev] {
			continue
		}
		i := g.assign(rev, floor)
		if i < 0 {
			ev.settled = false
			continue
		}
		ev.made[g.open[i].index] = sighting{rev: rev, at: g.eventAt[rev]}
		g.open = slices.Delete(g.open, i, i+1)
	}
	return ev
}

// attribute gives the pairs shown at revisions no answer accounts for to
// the writes of unknown outcome that put them: to the one write, when one
// can have and the pair was shown at one such revision; else to none in
// particular. Either way those revisions are explained. A pair no open
// write put, shown at a revision no answer accounts for, is left to the
// model, which finds it made by no one.
func (ev etcdEvidence) attribute(g *gathered) {
	var made []int64
	for kv, revs := range g.shown {
		if g.openPuts[kv] == 0 {
			continue
		}
		for rev, at := range revs {
			if g.explained[rev] {
				continue // an acknowledged write's
			}
			made = append(made, rev)
			if s, ok := ev.seen[kv]; ok && s.rev != rev || g.openPuts[kv] > 1 {
				ev.ambiguous[kv] = true
			}
			ev.seen[kv] = sighting{rev: rev, at: at}
		}
	}
	for kv := range ev.ambiguous {
		delete(ev.seen, kv)
	}
	for _, rev := range made {
		g.explained[rev] = true
	}
}

// spans are the revision spans of the watches that keep.
func (g *gathered) spans(keep func(watchWindow) bool) [][2]int64 {
	var out [][2]int64
	for _, w := range g.windows {
		if keep(w) {
			out = append(out, w.span)
		}
	}
	return out
}

// show notes that a key had a value from revision rev, by time at.
func (g *gathered) show(key, value string, rev int64, at time.Duration) {
	kv := keyValue{key, value}
	revs := g.shown[kv]
	if revs == nil {
		revs = map[int64]time.Duration{}
		g.shown[kv] = revs
	}
	if t, ok := revs[rev]; !ok || at < t {
		revs[rev] = at
	}
}

// add takes in one operation.
func (g *gathered) add(p history.Pair) {
	var req etcdop.KVRequest
	isKV := p.Inv.F != etcdop.FWatch && p.Inv.Decode(&req) == nil
	open := p.Done == nil || p.Done.Type == history.Info
	for _, op := range slices.Concat(req.Then, req.Else) {
		if op.F == etcdop.FPut {
			g.written[op.Key] = true
			if open {
				g.openPuts[keyValue{op.Key, op.Value}]++
			}
		}
	}
	if open {
		switch {
		case !isKV:
		case p.Inv.F == etcdop.FDelete && len(req.Then) == 1 && req.Then[0].End == "":
			g.open = append(g.open, openWrite{index: p.Inv.Index, f: p.Inv.F, key: req.Then[0].Key, invoked: p.Inv.Time})
		case p.Inv.F == etcdop.FDelete || p.Inv.F == etcdop.FKVTxn:
			for _, op := range slices.Concat(req.Then, req.Else) {
				if op.F == etcdop.FDelete {
					g.open = append(g.open, openWrite{index: p.Inv.Index, f: etcdop.FDelete, key: op.Key, end: op.End, invoked: p.Inv.Time, other: true})
				}
			}
		case p.Inv.F == etcdop.FLeaseRevoke:
			g.open = append(g.open, openWrite{index: p.Inv.Index, f: p.Inv.F, lease: req.Lease, invoked: p.Inv.Time})
		}
		return
	}
	if p.Done.Type != history.Ok {
		return
	}
	if p.Inv.F == etcdop.FWatch {
		g.addWatch(p)
		return
	}
	var resp etcdop.KVResponse
	if !isKV || p.Done.Decode(&resp) != nil {
		return // the checkers report what they cannot read
	}
	g.last = max(g.last, resp.Revision)
	for _, r := range resp.Results {
		for _, kv := range r.KVs {
			g.show(kv.Key, kv.Value, kv.Mod, p.Done.Time)
		}
	}
	if madeRevision(p.Inv.F, &req, &resp) {
		g.explained[resp.Revision] = true
	}
	if p.Inv.F == etcdop.FLeaseRevoke {
		g.revokes[req.Lease] = sighting{rev: resp.Revision, at: p.Inv.Time}
	}
	g.answered = append(g.answered, sighting{rev: resp.Revision, at: p.Done.Time})
}

func (g *gathered) addWatch(p history.Pair) {
	w := watchOp{Pair: p}
	if errors.Join(p.Inv.Decode(&w.req), p.Done.Decode(&w.res)) != nil {
		return
	}
	if from, to := w.window(); from > 0 {
		g.windows = append(g.windows, watchWindow{key: w.req.Key, end: w.req.End, span: [2]int64{from, to}})
	}
	leases := map[string]int64{} // a key's lease, as its last put in this watch gave it
	for _, r := range w.res.Responses {
		g.last = max(g.last, r.Revision)
		for _, e := range r.Events {
			rev := e.KV.Mod
			lease, known := leases[e.KV.Key]
			if e.Type == "put" {
				leases[e.KV.Key] = e.KV.Lease
			} else if known && e.Prev == nil {
				// The watch's own stream says which lease the key had
				// (were it not whole, etcd-watch finds it).
				g.prevLease[eventAt{rev, e.KV.Key}] = lease
			}
			if e.Type == "put" {
				g.show(e.KV.Key, e.KV.Value, rev, r.Time)
			}
			if !slices.ContainsFunc(g.events[rev], func(o etcdop.WatchEvent) bool { return o.KV.Key == e.KV.Key }) {
				g.events[rev] = append(g.events[rev], e)
			}
			if at, ok := g.eventAt[rev]; !ok || r.Time < at {
				g.eventAt[rev] = r.Time
			}
			if e.Prev != nil {
				g.prevLease[eventAt{rev, e.KV.Key}] = e.Prev.Lease
			}
		}
	}
}

// deletesOf says whether the events of rev are all deletes of keys that,
// as far as the watches tell, had the lease.
func (g *gathered) deletesOf(rev, lease int64) bool {
	evs := g.events[rev]
	return len(evs) > 0 && !slices.ContainsFunc(evs, func(e etcdop.WatchEvent) bool {
		l, known := g.prevLease[eventAt{rev, e.KV.Key}]
		return e.Type != "delete" || known && l != lease
	})
}

// assign picks the open write that made unexplained revision rev: one
// invoked before the revision's events came and after no answer named
// rev or later; the latest such, among deletes of its one deleted key,
// or the revoke of the lease its deleted keys had. -1 if there is none,
// or no one choice.
func (g *gathered) assign(rev int64, floor func(time.Duration) int64) int {
	evs := g.events[rev]
	can := func(w openWrite) bool { return w.invoked <= g.eventAt[rev] && floor(w.invoked) < rev }
	if len(evs) == 1 && evs[0].Type == "delete" {
		// The latest invoked: the nearest in time, and the earlier ones
		// can make any later revision it could.
		latest := -1
		for i, w := range g.open {
			if w.f == etcdop.FDelete && !w.other && w.key == evs[0].KV.Key && can(w) && (latest < 0 || w.invoked > g.open[latest].invoked) {
				latest = i
			}
		}
		if latest >= 0 {
			return latest
		}
	}
	// A revoke is not interchangeable with a delete of a range, or in a
	// transaction, that can have made the same events: it also ends its
	// lease, on which later puts would fail.
	if slices.ContainsFunc(g.open, func(w openWrite) bool {
		return w.other && can(w) && !slices.ContainsFunc(evs, func(e etcdop.WatchEvent) bool {
			return !touches(etcdop.KVOp{F: etcdop.FDelete, Key: w.key, End: w.end}, e.KV.Key)
		})
	}) {
		return -1
	}
	var revokes []int
	for i, w := range g.open {
		// A lease revoked with an ok answer had its keys deleted by that
		// revoke: another revoke of it would have found no lease.
		_, revoked := g.revokes[w.lease]
		if w.f == etcdop.FLeaseRevoke && !revoked && g.deletesOf(rev, w.lease) && can(w) {
			revokes = append(revokes, i)
		}
	}
	if len(revokes) == 1 {
		return revokes[0]
	}
	return -1
}

// floors is, for a time t, the highest revision answered before t: an
// operation invoked at t makes a revision above it.
func floors(answered []sighting) func(time.Duration) int64 {
	slices.SortFunc(answered, func(a, b sighting) int { return cmp.Compare(a.at, b.at) })
	for i := 1; i < len(answered); i++ {
		answered[i].rev = max(answered[i].rev, answered[i-1].rev)
	}
	return func(t time.Duration) int64 {
		i, _ := slices.BinarySearchFunc(answered, t, func(a sighting, t time.Duration) int { return cmp.Compare(a.at, t) })
		if i == 0 {
			return 0
		}
		return answered[i-1].rev
	}
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

// madeRevision says whether an ok answer shows that its write made the
// revision it names: a put, a delete that deleted, a transaction whose
// branch did either. (A lease revoke's answer does not say whether it
// deleted keys; gatherEtcdEvidence asks the watches.)
func madeRevision(f string, req *etcdop.KVRequest, resp *etcdop.KVResponse) bool {
	ops := req.Then
	if f == etcdop.FKVTxn && !resp.Succeeded {
		ops = req.Else
	}
	switch f {
	case etcdop.FPut, etcdop.FDelete, etcdop.FKVTxn:
		for i, op := range ops {
			if op.F == etcdop.FPut || op.F == etcdop.FDelete && i < len(resp.Results) && resp.Results[i].Deleted > 0 {
				return true
			}
		}
	}
	return false
}

// decide decides a write of unknown outcome on the evidence: the answer
// it would have had and when it took effect by the latest, if it took
// effect; none if it took none; undecided otherwise (ranges and lease
// grants are not writes the evidence decides).
func (ev etcdEvidence) decide(inv *history.Op, req *etcdop.KVRequest) (out etcdOut, at time.Duration, none, decided bool) {
	switch f := inv.F; {
	case f == etcdop.FPut,
		// Shown, it succeeded; never shown, it ran the branch that only
		// reads, or never ran: no effect either way.
		f == etcdop.FKVTxn && len(req.Then) == 1 && req.Then[0].F == etcdop.FPut &&
			!slices.ContainsFunc(req.Else, func(op etcdop.KVOp) bool { return op.F != etcdop.FRange }):
		put := keyValue{req.Then[0].Key, req.Then[0].Value}
		if s, ok := ev.seen[put]; ok {
			return etcdOut{resp: &etcdop.KVResponse{Revision: s.rev, Succeeded: true, Results: []etcdop.KVResult{{}}}}, s.at, false, true
		}
		none := ev.unseen(put)
		return etcdOut{}, 0, none, none
	case f == etcdop.FKVTxn && len(req.If) == 0 && slices.ContainsFunc(req.Then, func(op etcdop.KVOp) bool { return op.F == etcdop.FPut }):
		// A transaction without conditions always runs Then, at one
		// revision: its puts shown show that revision, though not what its
		// ranges and deletes returned; none shown, it never ran. Puts shown
		// at different revisions decide nothing.
		var first *sighting
		none := true
		for _, op := range req.Then {
			if op.F != etcdop.FPut {
				continue
			}
			put := keyValue{op.Key, op.Value}
			none = none && ev.unseen(put)
			s, ok := ev.seen[put]
			switch {
			case ev.ambiguous[put]:
				return etcdOut{}, 0, false, false
			case !ok:
			case first == nil:
				first = &s
			case s.rev != first.rev:
				return etcdOut{}, 0, false, false
			default:
				first.at = min(first.at, s.at)
			}
		}
		if first != nil {
			return etcdOut{resp: &etcdop.KVResponse{Revision: first.rev, Succeeded: true}, partial: true}, first.at, false, true
		}
		return etcdOut{}, 0, none, none
	case f == etcdop.FDelete && req.Then[0].End == "" || f == etcdop.FLeaseRevoke:
		if s, ok := ev.made[inv.Index]; ok {
			resp := &etcdop.KVResponse{Revision: s.rev}
			if f == etcdop.FDelete {
				resp.Results = []etcdop.KVResult{{Deleted: 1}}
			}
			return etcdOut{resp: resp}, s.at, false, true
		}
		return etcdOut{}, 0, ev.settled, ev.settled
	}
	return etcdOut{}, 0, false, false
}

// unseen says whether a put of unknown outcome is shown to have taken no
// effect: shown nowhere, and its key's watches vouch for every revision.
func (ev etcdEvidence) unseen(put keyValue) bool {
	_, shown := ev.seen[put]
	return !shown && !ev.ambiguous[put] && ev.keyCovered[put.key]
}
