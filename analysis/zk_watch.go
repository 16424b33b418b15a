package analysis

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
)

func init() { Register(ZKWatchChecker{}) }

// ZKWatchChecker checks ZooKeeper's watch guarantees (the ZooKeeper
// Programmer's Guide, "ZooKeeper Watches") on each watcher's own sequence
// of operations, against the versions and zxids that writes' and reads'
// answers give. Data watches are judged by a znode's data version and
// mzxid, child watches by the directory's cversion and pzxid:
//
//   - a client sees a watch event before it sees the new data that
//     triggered it: after a watch set at version v, no read of that client
//     on the same connection shows a later version before the event has
//     reached it ("zk-data-before-event");
//   - watch events are seen in the order of the updates the server saw: a
//     client's events, in the order they came off its connection, have
//     the growing zxids of the writes that triggered them
//     ("zk-event-order"); but for events fired when a reconnection
//     re-registered their watches, which the server sends at once for
//     every znode changed meanwhile;
//   - a watch is not missed: a watch set at version v gets its event once
//     a change made a later version, unless the session expired first; a
//     watcher that went on for missGrace after an answer that shows the
//     change (a write's, a read's, or a create or delete of a child sent
//     after the watch was set) and never got it missed it
//     ("zk-missed-event").
type ZKWatchChecker struct{}

// zkWatchFs are the operations the checker reads.
var zkWatchFs = []string{history.FZKSet, history.FZKCreate, history.FZKDelete, history.FZKWatch, history.FZKRead,
	history.FZKChildWatch, history.FZKChildRead, history.FZKEvent, history.FZKLost}

func (ZKWatchChecker) Name() string { return "zookeeper-watch" }

// missGrace is how long after an answer that shows a change a watcher must
// still be going for its watch's event to count as missed.
const missGrace = 3 * time.Second

// zkChange is the earliest answer that shows a version of a key: a write's
// or a read's, with the zxid of the change that made the version. A create
// or delete of a child says no version: it shows that the directory's
// children changed after its invocation.
type zkChange struct {
	version int32 // 0: not known
	zxid    int64
	pair    history.Pair
}

// firedEvent is an event and the change that triggered it.
type firedEvent struct {
	history.Pair
	v       history.ZKValue
	trigger zkChange
}

// zkChanges holds, by key, what answers show of its changes.
type zkChanges struct {
	versions  map[string]map[int32]zkChange // the earliest answer showing each version
	unversion map[string][]history.Pair     // creates and deletes of children, by directory
}

func (c *zkChanges) note(f string, v history.ZKValue, p history.Pair) {
	if f == history.FZKCreate || f == history.FZKDelete {
		c.unversion[v.Key] = append(c.unversion[v.Key], p)
		return
	}
	if v.Version <= 0 {
		return // the znode as created, or no version in the answer
	}
	if c.versions[v.Key] == nil {
		c.versions[v.Key] = map[int32]zkChange{}
	}
	if old, ok := c.versions[v.Key][v.Version]; !ok || p.Done.Time < old.pair.Done.Time {
		c.versions[v.Key][v.Version] = zkChange{v.Version, v.Zxid, p}
	}
}

// after is the earliest answer that shows key changed past version, by a
// version or by a child's create or delete sent after set, the watch that
// saw version, completed.
func (c *zkChanges) after(key string, version int32, set history.Pair) (zkChange, bool) {
	var best zkChange
	found := false
	better := func(ch zkChange) {
		if !found || ch.pair.Done.Time < best.pair.Done.Time {
			best, found = ch, true
		}
	}
	for v, ch := range c.versions[key] {
		if v > version {
			better(ch)
		}
	}
	for _, p := range c.unversion[key] {
		if p.Inv.Time > set.Done.Time {
			better(zkChange{pair: p})
		}
	}
	return best, found
}

// zkWatchState is one live watch of a watcher.
type zkWatchState struct {
	version int32
	conn    int64 // the connection it was set on
	set     history.Pair
}

func (ZKWatchChecker) Check(_ context.Context, in Input) Result {
	var bad errCount
	decode := func(op *history.Op) (history.ZKValue, bool) {
		var v history.ZKValue
		if err := op.Decode(&v); err != nil {
			bad.add(err)
			return v, false
		}
		return v, true
	}
	changes := zkChanges{versions: map[string]map[int32]zkChange{}, unversion: map[string][]history.Pair{}}
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
		if slices.Contains([]string{history.FZKSet, history.FZKCreate, history.FZKDelete}, p.Inv.F) {
			continue
		}
		if len(byProcess[p.Inv.Process]) == 0 {
			watchers++
		}
		byProcess[p.Inv.Process] = append(byProcess[p.Inv.Process], p)
	}
	if bad.n > 0 {
		return unknownResult(fmt.Sprintf("%d operations could not be read; first: %v", bad.n, bad.first))
	}
	res := Result{Verdict: Valid, Stats: map[string]any{"watchers": watchers}}
	if watchers == 0 {
		res.Notes = append(res.Notes, "no watcher got an answer: nothing to check")
		return res
	}
	var found findingList
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
			case history.FZKWatch, history.FZKChildWatch:
				live[v.Key] = zkWatchState{v.Version, v.Conn, p}
			case history.FZKLost:
				delete(live, v.Key)
			case history.FZKRead, history.FZKChildRead:
				// Across a reconnection the client re-registers the watch
				// while it sends the requests it held: no order to judge.
				if watched && v.Version > w.version && !v.EventSeen && v.Conn == w.conn {
					found.add(func() Finding {
						return Finding{Kind: "zk-data-before-event", Explanation: fmt.Sprintf(
							"%s set a watch on %s at version %d (#%d), then read version %d (#%d) before the watch's event reached it.",
							history.ProcessName(proc), v.Key, w.version, w.set.Done.Index, v.Version, p.Done.Index),
							Ops: []history.Op{*w.set.Inv, *w.set.Done, *p.Inv, *p.Done}}
					})
				}
			case history.FZKEvent:
				events++
				if !watched {
					continue
				}
				delete(live, v.Key)
				// An event fired when a reconnection re-registered the
				// watch comes in no order of its update.
				if trigger, known := changes.versions[v.Key][w.version+1]; known && v.Seq > 0 && v.Conn == w.conn {
					fired = append(fired, firedEvent{p, v, trigger})
				}
			}
		}
		// In the order the events came off the connection, their updates'
		// zxids must grow.
		slices.SortFunc(fired, func(a, b firedEvent) int { return cmp.Compare(a.v.Seq, b.v.Seq) })
		for i := 1; i < len(fired); i++ {
			a, b := fired[i-1], fired[i]
			if b.trigger.zxid > a.trigger.zxid {
				continue
			}
			found.add(func() Finding {
				return Finding{Kind: "zk-event-order", Explanation: fmt.Sprintf(
					"%s got the event of %s (zxid %#x, #%d) before that of %s (zxid %#x, #%d): events out of the order of their updates.",
					history.ProcessName(proc), a.v.Key, a.trigger.zxid, a.trigger.pair.Done.Index, b.v.Key, b.trigger.zxid, b.trigger.pair.Done.Index),
					Ops: []history.Op{*a.trigger.pair.Inv, *a.trigger.pair.Done, *b.trigger.pair.Inv, *b.trigger.pair.Done, *a.Inv, *a.Done, *b.Inv, *b.Done}}
			})
		}
		// Watches still live at the watcher's end: owed an event if an
		// answer showed a change long enough before.
		end := ops[len(ops)-1].Done.Time
		for _, key := range slices.Sorted(maps.Keys(live)) {
			w := live[key]
			next, ok := changes.after(key, w.version, w.set)
			if !ok || next.pair.Done.Time+missGrace > end {
				continue
			}
			shows := fmt.Sprintf("version %d", next.version)
			if next.version == 0 {
				shows = "a change of its children"
			}
			found.add(func() Finding {
				return Finding{Kind: "zk-missed-event", Explanation: fmt.Sprintf(
					"%s set a watch on %s at version %d (#%d); %s (#%d, done at %.3fs) shows %s, yet no event came by the watcher's end at %.3fs.",
					history.ProcessName(proc), key, w.version, w.set.Done.Index, next.pair.Inv.F, next.pair.Done.Index, next.pair.Done.Time.Seconds(), shows, end.Seconds()),
					Ops: []history.Op{*w.set.Inv, *w.set.Done, *next.pair.Inv, *next.pair.Done}}
			})
		}
	}
	res.Stats["events"] = events
	res.Findings, res.FindingsTotal = found.list, found.total
	if found.total > 0 {
		res.Verdict = Invalid
	}
	return res
}
