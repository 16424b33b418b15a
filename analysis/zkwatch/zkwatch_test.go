package zkwatch

import (
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/zkop"
)

// zkh builds ZooKeeper watch histories; times in seconds.
type zkh struct{ analysistest.History }

func (h *zkh) op(proc int, t1, t2 float64, f string, v zkop.Value) *zkh {
	h.Add(t1, proc, history.Invoke, f, zkop.Value{Key: v.Key, Value: v.Value})
	h.Add(t2, proc, history.Ok, f, v)
	return h
}

func (h *zkh) set(proc int, t1, t2 float64, key string, version int32, zxid int64) *zkh {
	return h.op(proc, t1, t2, zkop.FSet, zkop.Value{Key: key, Value: "x", Version: version, Zxid: zxid})
}

func (h *zkh) watch(t1, t2 float64, key string, version int32) *zkh {
	return h.op(9, t1, t2, zkop.FWatch, zkop.Value{Key: key, Version: version})
}

func (h *zkh) read(t1, t2 float64, key string, version int32, seen bool) *zkh {
	return h.op(9, t1, t2, zkop.FRead, zkop.Value{Key: key, Version: version, EventSeen: seen})
}

// child is a create or delete of a child of key, whose answer says no version.
func (h *zkh) child(t1, t2 float64, f, key string) *zkh {
	return h.op(0, t1, t2, f, zkop.Value{Key: key, Value: "c"})
}

func (h *zkh) childWatch(t1, t2 float64, key string, cversion int32, pzxid int64) *zkh {
	return h.op(9, t1, t2, zkop.FChildWatch, zkop.Value{Key: key, Version: cversion, Zxid: pzxid})
}

func (h *zkh) event(t float64, key string, seq int64) *zkh {
	return h.op(9, t, t, zkop.FEvent, zkop.Value{Key: key, Event: "EventNodeDataChanged", Seq: seq})
}

func TestZKWatch(t *testing.T) {
	for name, c := range map[string]struct {
		h    *zkh
		want string // the finding's kind; "" for valid
	}{
		"new data before its event": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).read(3, 4, "a", 1, false), "zk-data-before-event"},
		"new data on another connection": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).
			op(9, 3, 4, zkop.FRead, zkop.Value{Key: "a", Version: 1, Conn: 1}).event(5, "a", 1), ""},
		"new data after its event": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).read(3, 4, "a", 1, true).event(5, "a", 1), ""},
		"events out of update order": {(&zkh{}).watch(0, 1, "a", 0).watch(1, 2, "b", 0).
			set(0, 2, 3, "a", 1, 10).set(0, 3, 4, "b", 1, 12).event(5, "b", 1).event(5, "a", 2), "zk-event-order"},
		"events fired by a reconnection, in any order": {(&zkh{}).watch(0, 1, "a", 0).watch(1, 2, "b", 0).
			set(0, 2, 3, "a", 1, 10).set(0, 3, 4, "b", 1, 12).
			op(9, 5, 5, zkop.FEvent, zkop.Value{Key: "b", Event: "EventNodeDataChanged", Seq: 1, Conn: 1}).
			op(9, 5, 5, zkop.FEvent, zkop.Value{Key: "a", Event: "EventNodeDataChanged", Seq: 2, Conn: 1}), ""},
		"events in update order, polled in another": {(&zkh{}).watch(0, 1, "a", 0).watch(1, 2, "b", 0).
			set(0, 2, 3, "a", 1, 10).set(0, 3, 4, "b", 1, 12).event(5, "b", 2).event(5, "a", 1), ""},
		"a missed event": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).read(9, 10, "a", 0, false), "zk-missed-event"},
		"an event lost with the session": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).
			op(9, 3, 3, zkop.FLost, zkop.Value{Key: "a", Event: "EventNotWatching"}).read(9, 10, "a", 1, false), ""},
		"children listed before their event": {(&zkh{}).childWatch(0, 1, "kids", 0, 5).child(1, 2, zkop.FDelete, "kids").
			op(9, 3, 4, zkop.FChildRead, zkop.Value{Key: "kids", Version: 0, Zxid: 11}), "zk-data-before-event"},
		"children listed after their event": {(&zkh{}).childWatch(0, 1, "kids", 0, 5).child(1, 2, zkop.FDelete, "kids").
			event(2.5, "kids", 1).op(9, 3, 4, zkop.FChildRead, zkop.Value{Key: "kids", Version: 0, Zxid: 11}), ""},
		"a missed child event":                 {(&zkh{}).childWatch(0, 1, "kids", 0, 5).child(1.5, 2, zkop.FCreate, "kids").read(9, 10, "a", 0, false), "zk-missed-event"},
		"a child created as the watch was set": {(&zkh{}).childWatch(0, 1, "kids", 0, 5).child(0.5, 2, zkop.FCreate, "kids").read(9, 10, "a", 0, false), ""},
		"a missed event, the change shown by another reader": {(&zkh{}).watch(0, 1, "a", 0).
			op(3, 1, 2, zkop.FRead, zkop.Value{Key: "a", Version: 1, Zxid: 10}).read(9, 10, "b", 0, false), "zk-missed-event"},
		// A child watch is placed by pzxid: the child event's update lies
		// above the watch's pzxid, at most the least pzxid shown beyond it.
		"a child event whose watch came after the data event's update": {(&zkh{}).watch(0, 1, "a", 0).
			set(0, 1, 2, "a", 1, 10).childWatch(2, 3, "kids", 0, 11).child(3, 4, zkop.FCreate, "kids").
			op(3, 4, 4.5, zkop.FChildRead, zkop.Value{Key: "kids", Version: 1, Zxid: 12}).
			event(5, "kids", 1).event(5, "a", 2), "zk-event-order"},
		"child and data events in update order": {(&zkh{}).watch(0, 1, "a", 0).
			set(0, 1, 2, "a", 1, 10).childWatch(2, 3, "kids", 0, 11).child(3, 4, zkop.FCreate, "kids").
			op(3, 4, 4.5, zkop.FChildRead, zkop.Value{Key: "kids", Version: 1, Zxid: 12}).
			event(5, "a", 1).event(5, "kids", 2), ""},
		// A delete moves pzxid, not cversion: fired by a delete at 101, the
		// child event comes before the data event of an update at 102.
		"a child event fired by a delete, then a data event": {(&zkh{}).watch(0, 1, "a", 0).childWatch(0, 1, "kids", 1, 100).
			child(1, 2, zkop.FDelete, "kids").set(0, 2, 3, "a", 1, 102).child(3, 4, zkop.FCreate, "kids").
			op(3, 4, 4.5, zkop.FChildRead, zkop.Value{Key: "kids", Version: 2, Zxid: 103}).
			event(5, "kids", 1).event(5, "a", 2), ""},
		"an event owed, the session gone": {(&zkh{}).op(9, 0, 1, zkop.FWatch, zkop.Value{Key: "a", Session: 7}).
			set(0, 1, 2, "a", 1, 10).op(9, 9, 10, zkop.FRead, zkop.Value{Key: "b", Session: 8}), ""},
		"an event owed, the session going on": {(&zkh{}).op(9, 0, 1, zkop.FWatch, zkop.Value{Key: "a", Session: 7}).
			set(0, 1, 2, "a", 1, 10).op(9, 9, 10, zkop.FRead, zkop.Value{Key: "b", Session: 7}), "zk-missed-event"},
		"an event owed, the watcher reconnected just before its end": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).
			op(9, 9, 9.5, zkop.FRead, zkop.Value{Key: "b", Conn: 1}).op(9, 9.5, 10, zkop.FRead, zkop.Value{Key: "b", Conn: 1}), ""},
		"an event owed, the watcher gone too soon": {(&zkh{}).watch(0, 1, "a", 0).set(0, 1, 2, "a", 1, 10).read(3, 4, "a", 0, false), ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := analysistest.RunChecker(t, "zookeeper-watch", analysis.Input{History: c.h.Ops})
			switch {
			case c.want == "" && r.Verdict != analysis.Valid, c.want != "" && (r.Verdict != analysis.Invalid || r.Findings[0].Kind != c.want || len(r.Findings[0].Ops) < 4):
				t.Fatalf("got %s %+v, expected %q", r.Verdict, r.Findings, c.want)
			}
		})
	}
}
