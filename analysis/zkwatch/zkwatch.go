// Package zkwatch is the zookeeper-watch checker: ZooKeeper's watch
// guarantees, judged on each watcher's own sequence of operations.
package zkwatch

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/zkop"
)

func init() { analysis.Register(Checker{}) }

// Checker checks ZooKeeper's watch guarantees (the ZooKeeper
// Programmer's Guide, "ZooKeeper Watches") on each watcher's own sequence
// of operations, against what writes' and reads' answers show. A data
// watch is placed by its znode's data version (and the mzxid of that
// version); a child watch by its directory's pzxid, the zxid of the last
// create or delete of a child (cversion counts creates only):
//
//   - a client sees a watch event before it sees the new data that
//     triggered it: after a watch set at a place, no read of that client
//     on the same connection shows a later place before the event has
//     reached it ("zk-data-before-event");
//   - watch events are seen in the order of the updates the server saw: in
//     the order a client's events came off its connection, no event's
//     update is certainly later than a later event's ("zk-event-order").
//     An update's zxid is known exactly for a data watch when an answer
//     shows the version after the watched one; otherwise it lies between
//     the watched place's zxid and the least zxid any answer shows beyond
//     it. Events fired when a reconnection re-registered their watches,
//     which the server sends at once for every znode changed meanwhile,
//     are not held to that order;
//   - a watch is not missed: a watch gets its event once a change moved
//     its znode past the watched place, unless the session expired first;
//     a watcher that went on in the watch's session for missGrace after an
//     answer that shows the change (a write's, a read's, or a create or
//     delete of a child sent after the watch was set) and never got it
//     missed it ("zk-missed-event"). A watcher cut off from its server
//     gets no answer and may learn of its session's end only later, and
//     one that reconnects gets the events owed just after: it went on only
//     as long as it got answers in the watch's session on one connection,
//     from the later of the change and that connection's first answer.
type Checker struct{}

// zkWatchFs are the operations the checker reads.
var zkWatchFs = []string{zkop.FSet, zkop.FCreate, zkop.FDelete, zkop.FWatch, zkop.FRead,
	zkop.FChildWatch, zkop.FChildRead, zkop.FEvent, zkop.FLost}

func (Checker) Name() string { return "zookeeper-watch" }

// missGrace is how long after an answer that shows a change a watcher must
// still be going for its watch's event to count as missed.
const missGrace = 3 * time.Second

// zkPlace is where an answer places its key: a data version, or the
// directory's pzxid.
func zkPlace(f string, v zkop.Value) int64 {
	if f == zkop.FChildWatch || f == zkop.FChildRead {
		return v.Zxid
	}
	return int64(v.Version)
}

// zkChange is the earliest answer that shows a place of a key, with the
// zxid of the change that made it.
type zkChange struct {
	place, zxid int64
	pair        history.Pair
}

// zkChanges holds, by key, what answers show of its changes.
type zkChanges struct {
	places map[string]map[int64]zkChange // the earliest answer showing each place
	// unplaced are the creates and deletes of children, by directory:
	// their answers show no place, only that the children changed after
	// their invocation.
	unplaced map[string][]history.Pair
}

func (c *zkChanges) note(f string, v zkop.Value, p history.Pair) {
	if f == zkop.FCreate || f == zkop.FDelete {
		c.unplaced[v.Key] = append(c.unplaced[v.Key], p)
		return
	}
	place := zkPlace(f, v)
	if place <= 0 || v.Zxid <= 0 {
		return // the znode as created, or nothing in the answer
	}
	if c.places[v.Key] == nil {
		c.places[v.Key] = map[int64]zkChange{}
	}
	if old, ok := c.places[v.Key][place]; !ok || p.Done.Time < old.pair.Done.Time {
		c.places[v.Key][place] = zkChange{place, v.Zxid, p}
	}
}

// after is the earliest answer that shows w's key moved past w's place:
// one showing a later place, or a child's create or delete sent after the
// watch was set.
func (c *zkChanges) after(key string, w zkWatchState) (zkChange, bool) {
	var best zkChange
	found := false
	better := func(ch zkChange) {
		if !found || ch.pair.Done.Time < best.pair.Done.Time {
			best, found = ch, true
		}
	}
	for place, ch := range c.places[key] {
		if place > w.place {
			better(ch)
		}
	}
	for _, p := range c.unplaced[key] {
		if p.Inv.Time > w.set.Done.Time {
			better(zkChange{pair: p})
		}
	}
	return best, found
}

// trigger bounds the zxid of the update that fired w: exact for a data
// watch whose next version an answer shows; otherwise above the watched
// place's zxid and at most the least zxid shown beyond the place (hi is
// that answer; none when no answer shows one).
func (c *zkChanges) trigger(key string, w zkWatchState) (lo, hi int64, by *zkChange) {
	if next, ok := c.places[key][w.place+1]; ok && !w.child {
		return next.zxid, next.zxid, &next
	}
	lo, hi = w.zxid+1, math.MaxInt64
	for place, ch := range c.places[key] {
		if place > w.place && ch.zxid < hi {
			hi, by = ch.zxid, &ch
		}
	}
	return lo, hi, by
}

// zkWatchState is one live watch of a watcher.
type zkWatchState struct {
	place, zxid int64 // where it was set, and that place's zxid
	child       bool
	conn        int64 // the connection it was set on
	session     int64
	set         history.Pair
}

func (w zkWatchState) String() string {
	if w.child {
		return fmt.Sprintf("children at pzxid %#x", w.place)
	}
	return fmt.Sprintf("version %d", w.place)
}

// firedEvent is an event, its watch and the bounds of its update's zxid.
type firedEvent struct {
	history.Pair
	v      zkop.Value
	w      zkWatchState
	lo, hi int64
	by     *zkChange // the answer that gives hi
}

func (Checker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var bad analysis.ErrCount
	decode := func(op *history.Op) (zkop.Value, bool) {
		var v zkop.Value
		if err := op.Decode(&v); err != nil {
			bad.Add(err)
			return v, false
		}
		return v, true
	}
	changes := zkChanges{places: map[string]map[int64]zkChange{}, unplaced: map[string][]history.Pair{}}
	byProcess := map[int][]history.Pair{}
	watchers := 0
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return slices.Contains(zkWatchFs, op.F)
	}) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		v, ok := decode(p.Done)
		if !ok {
			continue
		}
		changes.note(p.Inv.F, v, p)
		if slices.Contains([]string{zkop.FSet, zkop.FCreate, zkop.FDelete}, p.Inv.F) {
			continue
		}
		if len(byProcess[p.Inv.Process]) == 0 {
			watchers++
		}
		byProcess[p.Inv.Process] = append(byProcess[p.Inv.Process], p)
	}
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d operations could not be read; first: %v", bad.N, bad.First))
	}
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"watchers": watchers}}
	if watchers == 0 {
		res.Notes = append(res.Notes, "no watcher got an answer: nothing to check")
		return res
	}
	var found analysis.FindingList
	events := 0
	for _, proc := range slices.Sorted(maps.Keys(byProcess)) {
		ops := byProcess[proc]
		slices.SortStableFunc(ops, func(a, b history.Pair) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
		live := map[string]zkWatchState{}
		var fired []firedEvent
		for _, p := range ops {
			v, _ := decode(p.Done)
			w, watched := live[v.Key]
			switch p.Inv.F {
			case zkop.FWatch, zkop.FChildWatch:
				live[v.Key] = zkWatchState{zkPlace(p.Inv.F, v), v.Zxid, p.Inv.F == zkop.FChildWatch, v.Conn, v.Session, p}
			case zkop.FLost:
				delete(live, v.Key)
			case zkop.FRead, zkop.FChildRead:
				// Across a reconnection the client re-registers the watch
				// while it sends the requests it held: no order to judge.
				if watched && zkPlace(p.Inv.F, v) > w.place && !v.EventSeen && v.Conn == w.conn {
					seen := zkWatchState{place: zkPlace(p.Inv.F, v), child: w.child}
					found.Add(func() analysis.Finding {
						return analysis.Finding{Kind: "zk-data-before-event", Explanation: fmt.Sprintf(
							"%s set a watch on %s at %s (#%d), then read %s (#%d) before the watch's event reached it.",
							history.ProcessName(proc), v.Key, w, w.set.Done.Index, seen, p.Done.Index),
							Ops: []history.Op{*w.set.Inv, *w.set.Done, *p.Inv, *p.Done}}
					})
				}
			case zkop.FEvent:
				events++
				if !watched {
					continue
				}
				delete(live, v.Key)
				// An event fired when a reconnection re-registered the
				// watch comes in no order of its update.
				if v.Seq > 0 && v.Conn == w.conn {
					lo, hi, by := changes.trigger(v.Key, w)
					fired = append(fired, firedEvent{p, v, w, lo, hi, by})
				}
			}
		}
		checkEventOrder(proc, fired, &found)
		// Watches still live at the watcher's end: owed an event if an
		// answer showed a change long enough before the watcher's answers
		// on a connection of the watch's session ended.
		spans := map[[2]int64][2]time.Duration{} // by session and connection: first and last answer
		for _, p := range ops {
			v, _ := decode(p.Done)
			if v.Session == 0 && p.Inv.F == zkop.FEvent {
				continue // events say no session
			}
			id := [2]int64{v.Session, v.Conn}
			sp, seen := spans[id]
			if !seen {
				sp[0] = p.Done.Time
			}
			sp[1] = p.Done.Time
			spans[id] = sp
		}
		for _, key := range slices.Sorted(maps.Keys(live)) {
			w := live[key]
			next, ok := changes.after(key, w)
			if !ok {
				continue
			}
			var end time.Duration
			owed := false
			for id, sp := range spans {
				if id[0] == w.session && sp[1] >= max(next.pair.Done.Time, sp[0])+missGrace {
					owed, end = true, max(end, sp[1])
				}
			}
			if !owed {
				continue
			}
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "zk-missed-event", Explanation: fmt.Sprintf(
					"%s set a watch on %s at %s (#%d); %s #%d (done at %.3fs) shows a change past it, yet no event came by the watcher's end at %.3fs.",
					history.ProcessName(proc), key, w, w.set.Done.Index, next.pair.Inv.F, next.pair.Done.Index, next.pair.Done.Time.Seconds(), end.Seconds()),
					Ops: []history.Op{*w.set.Inv, *w.set.Done, *next.pair.Inv, *next.pair.Done}}
			})
		}
	}
	res.Stats["events"] = events
	found.Put(&res)
	if found.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	return res
}

// checkEventOrder finds, in the order the events came off the connection,
// an event whose update certainly came after that of a later event: the
// least zxid its update can have is above the most the later one's can.
func checkEventOrder(proc int, fired []firedEvent, found *analysis.FindingList) {
	slices.SortFunc(fired, func(a, b firedEvent) int { return cmp.Compare(a.v.Seq, b.v.Seq) })
	top := -1 // the event so far with the highest lower bound
	for j, b := range fired {
		if top >= 0 && fired[top].lo > b.hi {
			a := fired[top]
			found.Add(func() analysis.Finding {
				ops := []history.Op{*a.w.set.Inv, *a.w.set.Done, *a.Inv, *a.Done, *b.w.set.Inv, *b.w.set.Done, *b.Inv, *b.Done, *b.by.pair.Inv, *b.by.pair.Done}
				return analysis.Finding{Kind: "zk-event-order", Explanation: fmt.Sprintf(
					"%s got the event of %s (watch at %s, #%d; its update's zxid at least %#x) before that of %s (watch at %s, #%d; its update's zxid at most %#x, as #%d shows): events out of the order of their updates.",
					history.ProcessName(proc), a.v.Key, a.w, a.w.set.Done.Index, a.lo, b.v.Key, b.w, b.w.set.Done.Index, b.hi, b.by.pair.Done.Index),
					Ops: ops}
			})
		}
		if top < 0 || b.lo > fired[top].lo {
			top = j
		}
	}
}
