package etcd

import (
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
	return analysistest.RunChecker(t, "etcd-watch", analysis.Input{History: h.Ops})
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
