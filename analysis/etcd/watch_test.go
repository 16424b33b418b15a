package etcd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// watch adds a watch of [key, end) from rev by proc over [t1, t2] that got
// resps.
func (h *kvh) watch(proc int, t1, t2 float64, req etcdop.WatchRequest, resps ...etcdop.WatchResponse) *kvh {
	for i := range resps {
		resps[i].Time = time.Duration(t2 * float64(time.Second))
	}
	h.Add(t1, proc, history.Invoke, etcdop.FWatch, req)
	h.Add(t2, proc, history.Ok, etcdop.FWatch, etcdop.WatchResult{Member: "m1", Responses: resps})
	return h
}

func wput(key, value string, create, mod, version int64) etcdop.WatchEvent {
	return etcdop.WatchEvent{Type: "put", KV: kv(key, value, create, mod, version)}
}

func wdel(key string, rev int64) etcdop.WatchEvent {
	return etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: key, Mod: rev}}
}

func resp(rev int64, evs ...etcdop.WatchEvent) etcdop.WatchResponse {
	return etcdop.WatchResponse{Revision: rev, Events: evs}
}

var all = etcdop.WatchRequest{Key: "a", End: "z"}

func checkWatch(t *testing.T, h *kvh) analysis.Result {
	t.Helper()
	// Most of these histories hold no write: the store began at 100.
	return analysistest.RunChecker(t, "etcd-watch", analysis.Input{History: h.Ops, Initial: json.RawMessage(`{"revision": 100}`)})
}

func TestWatchKept(t *testing.T) {
	for name, h := range map[string]*kvh{
		"in order, one revision per response": (&kvh{}).watch(0, 0, 9, all,
			resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("b", "1", 3, 3, 1)), resp(4, wdel("a", 4)), resp(5, wput("a", "2", 5, 5, 1))),
		"a transaction's events in one response": (&kvh{}).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1), wput("b", "1", 2, 2, 1))),
		"two watchers, one resuming where it broke": (&kvh{}).
			watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("a", "2", 2, 3, 2))).
			watch(1, 0, 4, all, resp(2, wput("a", "1", 2, 2, 1))).
			watch(1, 5, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 3}, resp(3, wput("a", "2", 2, 3, 2))),
		"a progress notification before later events": (&kvh{}).watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Progress: true},
			resp(2, wput("a", "1", 2, 2, 1)), etcdop.WatchResponse{Revision: 2, Progress: true}, resp(3, wput("a", "2", 2, 3, 2))),
		"prev_kv as the key was": (&kvh{}).watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", PrevKV: true},
			resp(2, wput("a", "1", 2, 2, 1)),
			resp(3, etcdop.WatchEvent{Type: "put", KV: kv("a", "2", 2, 3, 2), Prev: &etcdop.KV{Key: "a", Value: "1", Create: 2, Mod: 2, Version: 1}})),
		"a put whose answer matches the event": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1))),
		"a compacted start revision": (&kvh{}).watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2},
			etcdop.WatchResponse{Revision: 9, Canceled: true, Compacted: 5}),
		"no watch": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2),
		"a cancel without a header": (&kvh{}).watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2},
			etcdop.WatchResponse{Canceled: true}),
	} {
		t.Run(name, func(t *testing.T) {
			if r := checkWatch(t, h); r.Verdict != analysis.Valid {
				t.Fatalf("got %s %+v", r.Verdict, r.Findings)
			}
		})
	}
}

func TestWatchBroken(t *testing.T) {
	for kind, h := range map[string]*kvh{
		"watch-order": (&kvh{}).watch(0, 0, 9, all, resp(3, wput("b", "1", 3, 3, 1)), resp(3, wput("a", "1", 2, 2, 1))),
		"watch-duplicate": (&kvh{}).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("b", "1", 3, 3, 1)),
			resp(3, wput("b", "1", 3, 3, 1))),
		"watch-split-revision": (&kvh{}).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(2, wput("b", "1", 2, 2, 1))),
		"watch-after-progress": (&kvh{}).watch(0, 0, 9, all, etcdop.WatchResponse{Revision: 5, Progress: true}, resp(5, wput("a", "1", 5, 5, 1))),
		"watch-lost-event": (&kvh{}).
			watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("b", "1", 3, 3, 1)), resp(4, wput("a", "2", 2, 4, 2))).
			watch(1, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(4, wput("a", "2", 2, 4, 2))),
		"watch-unrequested-key": (&kvh{}).watch(0, 0, 9, etcdop.WatchRequest{Key: "a"}, resp(2, wput("b", "1", 2, 2, 1))),
		"watch-divergent-event": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).watch(0, 0, 9, all, resp(2, wput("a", "0", 2, 2, 1))),
		"watch-wrong-prev":      (&kvh{}).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("a", "2", 3, 3, 1))),
	} {
		t.Run(kind, func(t *testing.T) {
			r := checkWatch(t, h)
			if r.Verdict != analysis.Invalid || r.Findings[0].Kind != kind || len(r.Findings[0].Ops) < 2 {
				t.Fatalf("got %s %+v, expected %s", r.Verdict, r.Findings, kind)
			}
		})
	}
}

// A lost event is found whatever tells of it: here only a put's answer.
func TestWatchLostWrite(t *testing.T) {
	h := (&kvh{}).put(1, 0, 1, "b", "1", 0, 3).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(4, wput("a", "2", 2, 4, 2)))
	r := checkWatch(t, h)
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "watch-lost-event" || len(r.Findings[0].Ops) != 4 {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
}

// What the issue-35 round added: each rule broken, and kept (items 6 to
// 10). Each case failed before.
func TestWatchAgainstWrites(t *testing.T) {
	prevWatch := etcdop.WatchRequest{Key: "a", End: "z", PrevKV: true}
	withPrev := func(e etcdop.WatchEvent, prev etcdop.KV) etcdop.WatchEvent { e.Prev = &prev; return e }
	grant := func(h *kvh) *kvh {
		return h.op(2, 0, 0.5, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7})
	}
	leased := func(key, value string, create, mod, version int64) etcdop.WatchEvent {
		e := wput(key, value, create, mod, version)
		e.KV.Lease = 7
		return e
	}
	revoke := func(h *kvh, t1, t2 float64, rev int64) *kvh {
		return h.op(2, t1, t2, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: rev})
	}
	txn := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: "b", Value: "1"}, {F: etcdop.FPut, Key: "a", Value: "1"}}}
	for kind, h := range map[string]*kvh{
		// 6: the watch got the event at 3 s; the put was invoked at 5 s
		// (the one of b, sent before, can have made revision 2).
		"watch-event-before-write": (&kvh{}).put(2, 0, 1, "b", "1", 0, 0).put(1, 5, 6, "a", "1", 0, 0).watch(0, 0, 3, all, resp(2, wput("a", "1", 2, 2, 1))),
		// 7: a range read shows b made at 3, which the watch never got.
		"watch-lost-event": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(2, 1, 2, "b", "1", 0, 0).put(1, 2, 3, "a", "2", 0, 4).
			get(3, 3, 4, "b", "", 4, kv("b", "1", 3, 3, 1)).
			watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(4, wput("a", "2", 2, 4, 2))),
		// 8: a transaction's events in another order than its operations.
		"watch-txn-order": (&kvh{}).op(1, 0, 1, etcdop.FKVTxn, txn, &etcdop.KVResponse{Revision: 2, Succeeded: true, Results: []etcdop.KVResult{{}, {}}}).
			watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1), wput("b", "1", 2, 2, 1))),
		// 9: two watchers, two previous values of one event.
		"watch-divergent-event": (&kvh{}).put(1, 0, 1, "a", "1", 0, 0).put(1, 1, 2, "a", "2", 0, 0).put(1, 2, 3, "a", "3", 0, 0).
			watch(0, 0, 9, prevWatch, resp(4, withPrev(wput("a", "3", 2, 4, 3), kv("a", "2", 2, 3, 2)))).
			watch(3, 0, 9, prevWatch, resp(4, withPrev(wput("a", "3", 2, 4, 3), kv("a", "1", 2, 2, 1)))),
		// 10: a value nobody wrote, in a watch that did not see the start.
		"watch-phantom-event":        (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).watch(0, 0, 9, all, resp(3, wput("a", "9", 2, 3, 2))),
		"watch-phantom-event/delete": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).watch(0, 0, 9, all, resp(3, wdel("a", 3))),
		// Version 3 at revision 4 needs three puts of a from 2 to 4, but
		// revision 3 was the put of c's.
		"watch-divergent-event/a version no puts allow": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "c", "1", 0, 3).put(1, 2, 3, "a", "2", 0, 4).
			watch(0, 0, 9, etcdop.WatchRequest{Key: "a"}, resp(4, wput("a", "2", 2, 4, 3))),
		// The previous key b=2 at revision 2: the one put of b=2 made 3.
		"watch-phantom-event/a previous key": (&kvh{}).put(1, 0, 1, "c", "2", 0, 0).put(2, 0.5, 2, "b", "2", 0, 3).
			watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 3, PrevKV: true}, resp(3, withPrev(wput("b", "2", 2, 3, 2), kv("b", "2", 2, 2, 1)))),
		// Revision 3 was the put of c's; b was created at 2, by a.
		"watch-divergent-event/another key's revision": (&kvh{}).put(1, 0, 1, "b", "1", 0, 2).put(1, 1, 2, "c", "1", 0, 3).put(2, 1, 2, "b", "2", 0, 0).
			watch(0, 0, 9, all, resp(3, wput("b", "2", 2, 3, 2))),
		// The read at 2 left a out: whatever made 2 did not put a.
		"watch-divergent-event/a put where a read showed its key absent": (&kvh{}).put(1, 0, 1, "a", "1", 0, 0).put(2, 0, 1, "b", "1", 0, 0).
			put(4, 0, 1, "c", "1", 0, 0).get(3, 1, 2, "a", "", 2).watch(0, 0, 9, etcdop.WatchRequest{Key: "a"}, resp(2, wput("a", "1", 2, 2, 1))),
		"watch-divergent-event/another key's creation": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "c", "1", 0, 3).put(1, 2, 3, "a", "1", 0, 4).
			watch(0, 0, 9, etcdop.WatchRequest{Key: "a", Rev: 4}, resp(4, wput("a", "1", 3, 4, 2))),
	} {
		t.Run(kind, func(t *testing.T) {
			want, _, _ := strings.Cut(kind, "/")
			proof := 4 // the watch and a write, or two watches
			if want == "watch-phantom-event" {
				proof = 2 // the watch: no write made it
			}
			r := analysistest.RunChecker(t, "etcd-watch", analysis.Input{History: h.Ops}) // from an empty store
			if r.Verdict != analysis.Invalid || !slices.ContainsFunc(r.Findings, func(f analysis.Finding) bool { return f.Kind == want && len(f.Ops) >= proof }) {
				t.Fatalf("got %s %+v, expected %s proven by %d entries", r.Verdict, r.Findings, want, proof)
			}
		})
	}
	// 7: an acknowledged revoke's deletes, which the watch never got.
	lostRevoke := revoke(grant(&kvh{}).put(1, 1, 2, "a", "1", 7, 2), 3, 4, 3).put(1, 5, 6, "b", "1", 0, 4).
		watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}, resp(2, leased("a", "1", 2, 2, 1)), resp(4, wput("b", "1", 4, 4, 1)))
	if r := checkWatch(t, lostRevoke); r.Verdict != analysis.Invalid || r.Findings[0].Kind != "watch-lost-event" {
		t.Fatalf("a revoke's delete lost: got %s %+v", r.Verdict, r.Findings)
	}
	for name, h := range map[string]*kvh{
		"a transaction's events in its order": (&kvh{}).op(1, 0, 1, etcdop.FKVTxn, txn, &etcdop.KVResponse{Revision: 2, Succeeded: true, Results: []etcdop.KVResult{{}, {}}}).
			watch(0, 0, 9, all, resp(2, wput("b", "1", 2, 2, 1), wput("a", "1", 2, 2, 1))),
		"an event of a write of unknown outcome": (&kvh{}).put(1, 0, 1, "a", "1", 0, 0).watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1))),
		"a value written twice": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "a", "1", 0, 3).
			watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("a", "1", 2, 3, 2))),
		"a revoke's deletes": revoke(grant(&kvh{}).put(1, 1, 2, "a", "1", 7, 2), 3, 4, 3).
			watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}, resp(2, leased("a", "1", 2, 2, 1)), resp(3, wdel("a", 3))),
		"a leased key deleted at expiry": grant(&kvh{}).put(1, 1, 2, "a", "1", 7, 2).
			watch(0, 0, 9, all, resp(2, leased("a", "1", 2, 2, 1)), resp(3, wdel("a", 3))),
		"a range delete": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).
			op(1, 1, 2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
			watch(0, 0, 9, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wdel("a", 3))),
		"one previous value, from two watchers": (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "a", "2", 0, 3).
			watch(0, 0, 9, prevWatch, resp(3, withPrev(wput("a", "2", 2, 3, 2), kv("a", "1", 2, 2, 1)))).
			watch(3, 0, 9, prevWatch, resp(3, withPrev(wput("a", "2", 2, 3, 2), kv("a", "1", 2, 2, 1)))),
	} {
		t.Run(name, func(t *testing.T) {
			if r := checkWatch(t, h); r.Verdict != analysis.Valid {
				t.Fatalf("got %s %+v", r.Verdict, r.Findings)
			}
		})
	}
}

// Elimination: revision 3, the progress notification's, was made by one of
// the two puts of b of unknown outcome, either of which the watch of every
// key would have got.
func TestWatchLostByElimination(t *testing.T) {
	h := (&kvh{}).put(1, 0.46, 0.57, "b", "3", 0, 0).put(2, 0.55, 0.84, "b", "2", 0, 2).put(3, 0.60, 0.95, "b", "1", 0, 0).
		watch(0, 0.2, 1.2, etcdop.WatchRequest{Key: "a", End: "\x00", Rev: 2, Progress: true},
			resp(2, wput("b", "2", 2, 2, 1)), etcdop.WatchResponse{Revision: 3, Progress: true})
	r := analysistest.RunChecker(t, "etcd-watch", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "watch-lost-event" || len(r.Findings[0].Ops) != 6 {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
}

// A finding names a long watch's completion by its place in the history,
// not its responses: a broken stream gives a finding per event, and each
// repeating megabytes ran a run's analysis out of memory.
func TestWatchProofLeavesOutLongCompletions(t *testing.T) {
	var resps []etcdop.WatchResponse
	for rev := int64(2); rev < 2000; rev++ {
		resps = append(resps, resp(rev, wput("a", "1", 2, rev, rev-1)))
	}
	resps = append(resps, resp(1999, wput("a", "1", 2, 1999, 1998))) // the last event twice
	h := (&kvh{}).watch(0, 0, 9, all, resps...)
	r := checkWatch(t, h)
	if r.Verdict != analysis.Invalid || len(r.Findings) == 0 {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
	done := r.Findings[0].Ops[1]
	if done.Index != h.Ops[1].Index || len(done.Value) > maxProofValue || !strings.Contains(string(done.Value), `"events":1999`) {
		t.Errorf("the completion as the finding names it: #%d %s", done.Index, done.Value)
	}
}

// A watch that asked for previous keys gets one for every event of a key
// that existed, unless a compaction removed the revision before it: from
// the nemesis, from a watch canceled for it, or from the members' own
// auto-compaction. Settings not known (a history checked alone) leave it
// undecided, as a compaction.
func TestWatchMissingPrevious(t *testing.T) {
	h := func() *kvh {
		return (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 2, 3, "a", "2", 0, 3).
			watch(0, 0, 9, etcdop.WatchRequest{Key: "a", PrevKV: true}, resp(3, wput("a", "2", 2, 3, 2)))
	}
	check := func(h *kvh, config map[string]string) analysis.Result {
		return analysistest.RunChecker(t, "etcd-watch", analysis.Input{History: h.Ops, Config: config})
	}
	r := check(h(), map[string]string{})
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "watch-wrong-prev" || !strings.Contains(r.Findings[0].Explanation, "without the previous key it asked for") {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
	compacted := h()
	compacted.Ops = append(compacted.Ops, history.Op{Index: len(compacted.Ops), Process: history.Nemesis, Type: history.Invoke, F: "compact-start", Time: 2500 * time.Millisecond})
	for name, c := range map[string]struct {
		h      *kvh
		config map[string]string
	}{
		"the nemesis compacted": {compacted, map[string]string{}},
		"auto-compaction":       {h(), map[string]string{"auto-compaction-retention": "1h"}},
		"settings not known":    {h(), nil},
	} {
		if r := check(c.h, c.config); r.Verdict != analysis.Valid {
			t.Errorf("%s: got %s %+v", name, r.Verdict, r.Findings)
		}
	}
}

// Histories a true etcd gives, which the etcd checkers once found
// invalid (a review, issue 35): a transaction's range before its put reads
// the store at the revision before the transaction's, and a transaction of
// unknown outcome whose one branch puts a key on a lease and the other
// deletes it can delete it at once, whatever the lease's TTL.
func TestWatchTrueHistories(t *testing.T) {
	rangeThenPut := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "k"}, {F: etcdop.FPut, Key: "k", Value: "2"}}}
	for name, h := range map[string]*kvh{
		"a transaction's range of the key it then puts": (&kvh{}).put(1, 0, 0.1, "k", "1", 0, 2).
			op(2, 0.2, 0.3, etcdop.FKVTxn, rangeThenPut, &etcdop.KVResponse{Revision: 3, Succeeded: true, Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("k", "1", 2, 2, 1)}}, {}}}).
			watch(0, 0, 1, etcdop.WatchRequest{Key: "k", Rev: 2}, resp(2, wput("k", "1", 2, 2, 1)), resp(3, wput("k", "2", 2, 3, 2))),
		"a transaction's range leaving out the key it then creates": (&kvh{}).put(1, 0, 0.1, "j", "1", 0, 2).
			op(2, 0.2, 0.3, etcdop.FKVTxn, rangeThenPut, &etcdop.KVResponse{Revision: 3, Succeeded: true, Results: []etcdop.KVResult{{}, {}}}).
			watch(0, 0, 1, etcdop.WatchRequest{Key: "k", Rev: 2}, resp(3, wput("k", "2", 3, 3, 1))),
		"a transaction that puts a key on a lease or deletes it": (&kvh{}).
			op(9, 0, 0.1, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
			put(1, 0.1, 0.2, "a", "1", 0, 2).
			op(2, 0.3, 0.9, etcdop.FKVTxn, etcdop.KVRequest{If: []etcdop.KVCompare{{Key: "a", Target: "value", Value: "9"}},
				Then: []etcdop.KVOp{{F: etcdop.FPut, Key: "a", Value: "2", Lease: 7}}, Else: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a"}}}, nil).
			watch(0, 0, 0.5, etcdop.WatchRequest{Key: "a", Rev: 2}, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wdel("a", 3))),
	} {
		t.Run(name, func(t *testing.T) {
			for _, checker := range etcdCheckers {
				if r := analysistest.RunChecker(t, checker, analysis.Input{History: h.Ops}); r.Verdict == analysis.Invalid {
					t.Errorf("%s: invalid %+v", checker, r.Findings)
				}
			}
		})
	}
}

// A put or a delete that holds no operation, in a history read from a file,
// makes no revision (etcd refuses it, and etcd-kv reports it): the one put
// of a can have made revision 2, and nothing 3.
func TestWatchMalformedWritesLeftOut(t *testing.T) {
	h := (&kvh{}).op(1, 0, 1, etcdop.FPut, etcdop.KVRequest{}, nil).op(2, 0, 1, etcdop.FDelete, etcdop.KVRequest{}, nil).
		put(3, 0, 1, "a", "1", 0, 0).watch(0, 0, 9, all, etcdop.WatchResponse{Revision: 3, Progress: true})
	r := analysistest.RunChecker(t, "etcd-watch", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Invalid || len(r.Findings) != 1 || r.Findings[0].Kind != "revision-never-made" {
		t.Fatalf("got %s %+v, expected revision 3 never made", r.Verdict, r.Findings)
	}
}
