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
// of operations, against the versions and zxids the writers' answers give:
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
//     a write made a later version, unless the session expired first; a
//     watcher that went on for missGrace after that write and never got it
//     missed it ("zk-missed-event").
type ZKWatchChecker struct{}

func (ZKWatchChecker) Name() string { return "zookeeper-watch" }

// missGrace is how long after a write's answer a watcher must still be
// going for its watch's event to count as missed.
const missGrace = 3 * time.Second

// zkWrite is what an ok write's answer says: its version's zxid, and when.
type zkWrite struct {
	zxid int64
	pair history.Pair
}

// firedEvent is an event and the write that triggered it.
type firedEvent struct {
	history.Pair
	v       history.ZKValue
	trigger zkWrite
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
	writes := map[string]map[int32]zkWrite{} // key -> version -> the write that made it
	byProcess := map[int][]history.Pair{}
	watchers := 0
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return slices.Contains([]string{history.FZKSet, history.FZKWatch, history.FZKRead, history.FZKEvent, history.FZKLost}, op.F)
	}) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		if p.Inv.F == history.FZKSet {
			if v, ok := decode(p.Done); ok {
				if writes[v.Key] == nil {
					writes[v.Key] = map[int32]zkWrite{}
				}
				writes[v.Key][v.Version] = zkWrite{v.Zxid, p}
			}
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
	events, missed := 0, 0
	for _, proc := range slices.Sorted(maps.Keys(byProcess)) {
		ops := byProcess[proc]
		slices.SortStableFunc(ops, func(a, b history.Pair) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
		live := map[string]zkWatchState{}
		var fired []firedEvent
		for _, p := range ops {
			v, _ := decode(p.Done)
			w, watched := live[v.Key]
			switch p.Inv.F {
			case history.FZKWatch:
				live[v.Key] = zkWatchState{v.Version, v.Conn, p}
			case history.FZKLost:
				delete(live, v.Key)
			case history.FZKRead:
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
				if trigger, known := writes[v.Key][w.version+1]; known && v.Seq > 0 && v.Conn == w.conn {
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
		// Watches still live at the watcher's end: owed an event if a write
		// made a later version long enough before.
		end := ops[len(ops)-1].Done.Time
		for _, key := range slices.Sorted(maps.Keys(live)) {
			w := live[key]
			next, ok := writes[key][w.version+1]
			if !ok || next.pair.Done.Time+missGrace > end {
				continue
			}
			missed++
			found.add(func() Finding {
				return Finding{Kind: "zk-missed-event", Explanation: fmt.Sprintf(
					"%s set a watch on %s at version %d (#%d); a write made version %d (#%d, done at %.3fs), yet no event came by the watcher's end at %.3fs.",
					history.ProcessName(proc), key, w.version, w.set.Done.Index, w.version+1, next.pair.Done.Index, next.pair.Done.Time.Seconds(), end.Seconds()),
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
