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
// lost, as etcd's robustness tests use it:
//
//   - a put's value is unique to it, so a watch event or a read that
//     shows the value shows that the put took effect, at which revision
//     and by when;
//   - when the watches vouch for every revision up to the last any answer
//     named, the revisions no answer accounts for were made by writes of
//     unknown outcome, and the watches' events say what each did: a delete
//     of a key, or a lease revoke's deletes (their previous keys name the
//     lease); each is assigned to an operation that can have made it;
//   - then a write of unknown outcome shown nowhere took no effect: had
//     it, a watch would have got its event (else etcd-watch and this model
//     find a revision unexplained). Past the last revision named, no
//     answer can tell it from one that never happened.
type etcdEvidence struct {
	seen map[string]sighting // by put value, shown once and put by one operation
	// covered: the watches vouch for every revision from the initial one
	// to the last any answer named.
	covered bool
	// made are the deletes and revokes of unknown outcome (by the position
	// of their invocation) that the unexplained revisions were assigned to.
	made map[int]sighting
	// settled: covered, and every unexplained revision assigned.
	settled bool
}

// sighting is a revision a write made, and the earliest time an answer
// showing it came (the write took effect before).
type sighting struct {
	rev int64
	at  time.Duration
}

// openWrite is a delete or lease revoke of unknown outcome.
type openWrite struct {
	index   int
	f       string
	key     string // a delete's, of one key
	lease   int64  // a revoke's
	invoked time.Duration
}

// gathered is what one pass over the history collects.
type gathered struct {
	puts      map[string]int // value -> operations putting it
	windows   [][2]int64
	events    map[int64][]etcdop.WatchEvent // by revision, a key once
	eventAt   map[int64]time.Duration       // earliest a watch got the revision's events
	prevLease map[eventAt]int64             // a deleted key's lease, from a watch's prev_kv
	explained map[int64]bool                // revisions answers say writes made
	answered  []sighting                    // ok answers' revisions and times
	revokes   map[int64]int64               // ok revokes' answered revisions, by lease
	open      []openWrite
	last      int64 // the last revision any answer named
}

func gatherEtcdEvidence(h []history.Op, initialRev int64) etcdEvidence {
	g := gathered{puts: map[string]int{}, events: map[int64][]etcdop.WatchEvent{}, eventAt: map[int64]time.Duration{},
		prevLease: map[eventAt]int64{}, explained: map[int64]bool{}, revokes: map[int64]int64{}, last: initialRev}
	ev := etcdEvidence{seen: map[string]sighting{}, made: map[int]sighting{}}
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 }) {
		g.add(p, ev.show)
	}
	for v := range ev.seen {
		if g.puts[v] != 1 {
			delete(ev.seen, v) // not unique: shows nothing about one put
		}
	}
	ev.covered = covers(g.windows, initialRev+1, g.last)
	if !ev.covered {
		return ev
	}
	for _, s := range ev.seen {
		g.explained[s.rev] = true
	}
	// A revoke answered with a revision made of deletes of its lease's
	// keys made that revision.
	for lease, rev := range g.revokes {
		if g.deletesOf(rev, lease) {
			g.explained[rev] = true
		}
	}
	ev.settled = true
	floor := floors(g.answered)
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

func (ev etcdEvidence) show(value string, rev int64, at time.Duration) {
	if s, ok := ev.seen[value]; !ok || at < s.at {
		ev.seen[value] = sighting{rev: rev, at: at}
	}
}

// add takes in one operation.
func (g *gathered) add(p history.Pair, show func(string, int64, time.Duration)) {
	var req etcdop.KVRequest
	isKV := p.Inv.F != etcdop.FWatch && p.Inv.Decode(&req) == nil
	for _, op := range slices.Concat(req.Then, req.Else) {
		if op.F == etcdop.FPut {
			g.puts[op.Value]++
		}
	}
	if p.Done == nil || p.Done.Type == history.Info {
		switch {
		case !isKV:
		case p.Inv.F == etcdop.FDelete && len(req.Then) == 1 && req.Then[0].End == "":
			g.open = append(g.open, openWrite{index: p.Inv.Index, f: p.Inv.F, key: req.Then[0].Key, invoked: p.Inv.Time})
		case p.Inv.F == etcdop.FLeaseRevoke:
			g.open = append(g.open, openWrite{index: p.Inv.Index, f: p.Inv.F, lease: req.Lease, invoked: p.Inv.Time})
		}
		return
	}
	if p.Done.Type != history.Ok {
		return
	}
	if p.Inv.F == etcdop.FWatch {
		g.addWatch(p, show)
		return
	}
	var resp etcdop.KVResponse
	if !isKV || p.Done.Decode(&resp) != nil {
		return // the checkers report what they cannot read
	}
	g.last = max(g.last, resp.Revision)
	for _, r := range resp.Results {
		for _, kv := range r.KVs {
			show(kv.Value, kv.Mod, p.Done.Time)
		}
	}
	if madeRevision(p.Inv.F, &req, &resp) {
		g.explained[resp.Revision] = true
	}
	if p.Inv.F == etcdop.FLeaseRevoke {
		g.revokes[req.Lease] = resp.Revision
	}
	g.answered = append(g.answered, sighting{rev: resp.Revision, at: p.Done.Time})
}

func (g *gathered) addWatch(p history.Pair, show func(string, int64, time.Duration)) {
	w := watchOp{Pair: p}
	if errors.Join(p.Inv.Decode(&w.req), p.Done.Decode(&w.res)) != nil {
		return
	}
	if from, to := w.window(); from > 0 {
		g.windows = append(g.windows, [2]int64{from, to})
	}
	for _, r := range w.res.Responses {
		g.last = max(g.last, r.Revision)
		for _, e := range r.Events {
			rev := e.KV.Mod
			if e.Type == "put" {
				show(e.KV.Value, rev, r.Time)
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
			if w.f == etcdop.FDelete && w.key == evs[0].KV.Key && can(w) && (latest < 0 || w.invoked > g.open[latest].invoked) {
				latest = i
			}
		}
		if latest >= 0 {
			return latest
		}
	}
	var revokes []int
	for i, w := range g.open {
		if w.f == etcdop.FLeaseRevoke && g.deletesOf(rev, w.lease) && can(w) {
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
		if s, ok := ev.seen[req.Then[0].Value]; ok {
			return etcdOut{resp: &etcdop.KVResponse{Revision: s.rev, Succeeded: true, Results: []etcdop.KVResult{{}}}}, s.at, false, true
		}
		return etcdOut{}, 0, ev.covered, ev.covered
	case f == etcdop.FKVTxn && len(req.If) == 0 && slices.ContainsFunc(req.Then, func(op etcdop.KVOp) bool { return op.F == etcdop.FPut }):
		// A transaction without conditions always runs Then, at one
		// revision: its puts shown show that revision, though not what its
		// ranges and deletes returned; none shown, it never ran. Puts shown
		// at different revisions decide nothing.
		var first *sighting
		for _, op := range req.Then {
			s, ok := ev.seen[op.Value]
			switch {
			case !ok || op.F != etcdop.FPut:
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
		return etcdOut{}, 0, ev.covered, ev.covered
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
