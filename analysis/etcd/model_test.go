package etcd

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// kvh builds etcd-kv histories; times are in seconds.
type kvh struct{ analysistest.History }

// op adds an operation of proc over [t1, t2]: ok with resp, or info when
// resp is nil.
func (h *kvh) op(proc int, t1, t2 float64, f string, req etcdop.KVRequest, resp *etcdop.KVResponse) *kvh {
	h.Add(t1, proc, history.Invoke, f, req)
	if resp == nil {
		h.Add(t2, proc, history.Info, f, req)
	} else {
		h.Add(t2, proc, history.Ok, f, resp)
	}
	return h
}

func (h *kvh) put(proc int, t1, t2 float64, key, value string, lease int64, rev int64) *kvh {
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: value, Lease: lease}}}
	var resp *etcdop.KVResponse
	if rev > 0 {
		resp = &etcdop.KVResponse{Revision: rev, Results: []etcdop.KVResult{{}}}
	}
	return h.op(proc, t1, t2, etcdop.FPut, req, resp)
}

// get adds an ok range of [key, end) ("" end: key alone) answering kvs at rev.
func (h *kvh) get(proc int, t1, t2 float64, key, end string, rev int64, kvs ...etcdop.KV) *kvh {
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: key, End: end}}}
	return h.op(proc, t1, t2, etcdop.FRange, req, &etcdop.KVResponse{Revision: rev, Results: []etcdop.KVResult{{KVs: kvs}}})
}

func (h *kvh) del(proc int, t1, t2 float64, key string, deleted, rev int64) *kvh {
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: key}}}
	return h.op(proc, t1, t2, etcdop.FDelete, req, &etcdop.KVResponse{Revision: rev, Results: []etcdop.KVResult{{Deleted: deleted}}})
}

func kv(key, value string, create, mod, version int64) etcdop.KV {
	return etcdop.KV{Key: key, Value: value, Create: create, Mod: mod, Version: version}
}

func checkEtcd(t *testing.T, h *kvh, want analysis.Verdict) {
	t.Helper()
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: h.Ops}), want)
}

func TestEtcdKVSequential(t *testing.T) {
	h := &kvh{}
	h.put(0, 0, 1, "a", "1", 0, 2).
		get(0, 2, 3, "a", "", 2, kv("a", "1", 2, 2, 1)).
		op(0, 4, 5, etcdop.FKVTxn, etcdop.KVRequest{
			If:   []etcdop.KVCompare{{Key: "a", Target: etcdop.CompareMod, Rev: 2}},
			Then: []etcdop.KVOp{{F: etcdop.FPut, Key: "a", Value: "2"}, {F: etcdop.FRange, Key: "a"}},
			Else: []etcdop.KVOp{{F: etcdop.FRange, Key: "a"}},
		}, &etcdop.KVResponse{Revision: 3, Succeeded: true, Results: []etcdop.KVResult{{}, {KVs: []etcdop.KV{kv("a", "2", 2, 3, 2)}}}}).
		del(0, 6, 7, "a", 1, 4).
		del(0, 8, 9, "a", 0, 4).
		get(0, 10, 11, "a", "", 4)
	checkEtcd(t, h, analysis.Valid)
}

// Each history breaks one rule of etcd's store, from a valid base.
func TestEtcdKVAnomalies(t *testing.T) {
	for name, h := range map[string]*kvh{
		"a read whose revision went back": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(0, 2, 3, "b", "1", 0, 3).
			get(1, 4, 5, "a", "", 2, kv("a", "1", 2, 2, 1)),
		"a stale value at the current revision": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(0, 2, 3, "a", "2", 0, 3).
			get(1, 4, 5, "a", "", 3, kv("a", "1", 2, 2, 1)),
		"a wrong mod revision": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(0, 2, 3, "a", "2", 0, 3).
			get(1, 4, 5, "a", "", 3, kv("a", "2", 2, 2, 2)),
		"a wrong version": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(0, 2, 3, "a", "2", 0, 3).
			get(1, 4, 5, "a", "", 3, kv("a", "2", 2, 3, 1)),
		"a skipped revision":                                 (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(0, 2, 3, "a", "2", 0, 5),
		"two writes at one revision":                         (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(1, 0, 1, "b", "1", 0, 2),
		"a delete that found nothing yet moved the revision": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).del(0, 2, 3, "b", 0, 3),
		"a transaction seen half applied": (&kvh{}).op(0, 0, 1, etcdop.FKVTxn, etcdop.KVRequest{
			Then: []etcdop.KVOp{{F: etcdop.FPut, Key: "a", Value: "1"}, {F: etcdop.FPut, Key: "b", Value: "1"}},
		}, &etcdop.KVResponse{Revision: 2, Succeeded: true, Results: []etcdop.KVResult{{}, {}}}).
			get(1, 2, 3, "a", "c", 2, kv("a", "1", 2, 2, 1)),
		"a transaction that ran the wrong branch": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).op(0, 2, 3, etcdop.FKVTxn, etcdop.KVRequest{
			If:   []etcdop.KVCompare{{Key: "a", Target: etcdop.CompareValue, Value: "1"}},
			Then: []etcdop.KVOp{{F: etcdop.FPut, Key: "a", Value: "2"}},
		}, &etcdop.KVResponse{Revision: 2, Succeeded: false, Results: []etcdop.KVResult{}}),
		"a key outliving its revoked lease": (&kvh{}).
			op(0, 0, 1, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
			put(0, 2, 3, "a", "1", 7, 2).
			op(0, 4, 5, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}).
			get(1, 6, 7, "a", "", 3, etcdop.KV{Key: "a", Value: "1", Create: 2, Mod: 2, Version: 1, Lease: 7}),
		"a put to a lease never granted": (&kvh{}).put(0, 0, 1, "a", "1", 9, 2),
		"a lost acknowledged write":      (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).get(1, 2, 3, "a", "", 2),
	} {
		t.Run(name, func(t *testing.T) { checkEtcd(t, h, analysis.Invalid) })
	}
}

// The same rules kept: concurrency, unknown outcomes, leases.
func TestEtcdKVKept(t *testing.T) {
	for name, h := range map[string]*kvh{
		"concurrent puts in either order": (&kvh{}).put(0, 0, 3, "a", "1", 0, 3).put(1, 1, 2, "a", "2", 0, 2).
			get(2, 4, 5, "a", "", 3, kv("a", "1", 2, 3, 2)),
		"an unknown put seen later": (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).
			get(1, 2, 3, "a", "", 2, kv("a", "1", 2, 2, 1)),
		"an unknown put never applied": (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).
			put(1, 2, 3, "b", "1", 0, 2).get(1, 4, 5, "a", "b", 2),
		"an unknown put applied late": (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).
			put(1, 2, 3, "b", "1", 0, 2).get(1, 4, 5, "a", "c", 3, kv("a", "1", 3, 3, 1), kv("b", "1", 2, 2, 1)),
		"a range over a prefix in key order": (&kvh{}).put(0, 0, 1, "b", "1", 0, 2).put(0, 2, 3, "a", "1", 0, 3).
			get(0, 4, 5, "a", "c", 3, kv("a", "1", 3, 3, 1), kv("b", "1", 2, 2, 1)),
		"a lease revoke deleting its keys at one revision": (&kvh{}).
			op(0, 0, 1, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
			put(0, 2, 3, "a", "1", 7, 2).put(0, 4, 5, "b", "1", 7, 3).
			op(0, 6, 7, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 4}).
			get(1, 8, 9, "a", "c", 4),
		"a revision as given": (&kvh{}).put(0, 0, 1, "a", "1", 0, 2),
	} {
		t.Run(name, func(t *testing.T) { checkEtcd(t, h, analysis.Valid) })
	}
}

func TestEtcdKVInitialRevision(t *testing.T) {
	h := (&kvh{}).put(0, 0, 1, "a", "1", 0, 42)
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: h.Ops, Initial: json.RawMessage(`{"revision": 41}`)}), analysis.Valid)
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: h.Ops}), analysis.Invalid)
}

func TestEtcdKVRefusesWhatItCannotRun(t *testing.T) {
	h := (&kvh{}).op(0, 0, 1, etcdop.FPut, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a"}}}, &etcdop.KVResponse{Revision: 1})
	if r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: h.Ops}); r.Verdict != analysis.Unknown {
		t.Fatalf("a put whose operation is a range: %s, expected unknown", r.Verdict)
	}
}

// Writes of unknown outcome are decided on the evidence of watches and
// reads, as etcd's robustness tests decide them.
func TestEtcdKVEvidence(t *testing.T) {
	shown := (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).
		watch(1, 0, 3, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}, resp(2, wput("a", "1", 2, 2, 1)))
	r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: shown.Ops})
	if r.Verdict != analysis.Valid || r.Stats["patched"] != 1 {
		t.Fatalf("an unknown put a watch shows: %s %v", r.Verdict, r.Stats)
	}
	// Shown by a watch that got it at 3 s: it took effect by then, so a
	// read that began later must see it.
	late := (&kvh{}).put(0, 0, 9, "a", "1", 0, 0).
		watch(1, 0, 3, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}, resp(2, wput("a", "1", 2, 2, 1))).
		get(2, 4, 5, "a", "", 1)
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: late.Ops}), analysis.Invalid)

	// Never shown, and the watches cover every revision named: no effect.
	unseen := (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).put(1, 2, 3, "b", "1", 0, 2).
		watch(2, 0, 4, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}, resp(2, wput("b", "1", 2, 2, 1)))
	r = analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: unseen.Ops})
	if r.Verdict != analysis.Valid || r.Stats["dropped_unseen_writes"] != 1 {
		t.Fatalf("an unknown put never shown: %s %v", r.Verdict, r.Stats)
	}
	// Without a watch, it stays unknown.
	open := (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).put(1, 2, 3, "b", "1", 0, 2)
	r = analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: open.Ops})
	if r.Verdict != analysis.Valid || r.Stats["open"] != 1 {
		t.Fatalf("an unknown put, no watch: %s %v", r.Verdict, r.Stats)
	}
}

// A transaction of several operations, without conditions, of unknown
// outcome: one of its puts shown pins it at that revision, its ranges'
// and deletes' results unknown; a later read must see all of its writes.
func TestEtcdKVEvidenceMultiOp(t *testing.T) {
	multi := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "c"}, {F: etcdop.FPut, Key: "a", Value: "1"}, {F: etcdop.FPut, Key: "b", Value: "2"}}}
	all := etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}
	shown := (&kvh{}).op(0, 0, 1, etcdop.FKVTxn, multi, nil).
		watch(1, 0, 3, all, resp(2, wput("a", "1", 2, 2, 1), wput("b", "2", 2, 2, 1))).
		get(2, 4, 5, "a", "z", 2, kv("a", "1", 2, 2, 1), kv("b", "2", 2, 2, 1))
	r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: shown.Ops})
	if r.Verdict != analysis.Valid || r.Stats["patched"] != 1 {
		t.Fatalf("an unknown multi-operation transaction a watch shows: %s %v", r.Verdict, r.Stats)
	}
	half := (&kvh{}).op(0, 0, 1, etcdop.FKVTxn, multi, nil).
		watch(1, 0, 3, all, resp(2, wput("a", "1", 2, 2, 1), wput("b", "2", 2, 2, 1))).
		get(2, 4, 5, "a", "z", 2, kv("a", "1", 2, 2, 1))
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: half.Ops}), analysis.Invalid)
}

// Deletes and lease revokes of unknown outcome are decided by the
// revisions no answer explains, whose events the watches got.
func TestEtcdKVEvidenceDeletesAndRevokes(t *testing.T) {
	all := etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}
	del := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a"}}}
	made := (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).op(0, 2, 3, etcdop.FDelete, del, nil).
		watch(1, 0, 5, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wdel("a", 3)))
	r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: made.Ops})
	if r.Verdict != analysis.Valid || r.Stats["patched"] != 1 {
		t.Fatalf("an unknown delete whose event a watch got: %s %v", r.Verdict, r.Stats)
	}
	none := (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).op(0, 2, 3, etcdop.FDelete, del, nil).
		watch(1, 0, 5, all, resp(2, wput("a", "1", 2, 2, 1)), etcdop.WatchResponse{Revision: 2, Progress: true})
	r = analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: none.Ops})
	if r.Verdict != analysis.Valid || r.Stats["dropped_unseen_writes"] != 1 {
		t.Fatalf("an unknown delete no watch saw: %s %v", r.Verdict, r.Stats)
	}
	revoke := (&kvh{}).
		op(0, 0, 1, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
		put(0, 2, 3, "a", "1", 7, 2).
		op(0, 4, 5, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil).
		watch(1, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2, PrevKV: true}, resp(2, wput("a", "1", 2, 2, 1)),
			resp(3, etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: "a", Mod: 3}, Prev: &etcdop.KV{Key: "a", Value: "1", Create: 2, Mod: 2, Version: 1, Lease: 7}})).
		get(2, 10, 11, "a", "", 3)
	r = analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: revoke.Ops})
	if r.Verdict != analysis.Valid || r.Stats["patched"] != 1 {
		t.Fatalf("an unknown revoke whose deletes a watch got: %s %v", r.Verdict, r.Stats)
	}
}

// A condition judged as etcd's applyCompare judges it: over every key of
// its range, and over a missing key when the range holds none (a value
// condition never holds then); revisions and versions by =, !=, < and >.
func TestEtcdCompareRanges(t *testing.T) {
	s := newEtcdState(5, map[string]etcdKey{
		"/kv/a": {value: "1", create: 2, mod: 3, version: 2},
		"/kv/b": {value: "2", create: 5, mod: 5, version: 1},
	}, map[int64]bool{})
	for _, c := range []struct {
		c    etcdop.KVCompare
		want bool
	}{
		{etcdop.KVCompare{Key: "/kv/", End: "/kv0", Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: math.MaxInt64}, true},
		{etcdop.KVCompare{Key: "/kv/", End: "/kv0", Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: 5}, false},
		{etcdop.KVCompare{Key: "/kv/", End: "/kv0", Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: 6}, true},
		{etcdop.KVCompare{Key: "/kv/", End: "/kv0", Target: etcdop.CompareVersion, Op: etcdop.CompareGreater, Rev: 0}, true},
		{etcdop.KVCompare{Key: "/kv/", End: "/kv/b", Target: etcdop.CompareCreate, Rev: 2}, true},                    // /kv/b is past the end
		{etcdop.KVCompare{Key: "/kw/", End: "/kx", Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: 1}, true}, // no key: mod 0
		{etcdop.KVCompare{Key: "/kw/", End: "/kx", Target: etcdop.CompareMod, Rev: 1}, false},
		{etcdop.KVCompare{Key: "/kw/", End: "/kx", Target: etcdop.CompareValue, Value: ""}, false},
		{etcdop.KVCompare{Key: "/kv/b", End: "\x00", Target: etcdop.CompareMod, Op: etcdop.CompareGreater, Rev: 4}, true},
		{etcdop.KVCompare{Key: "/kv/a", End: "\x00", Target: etcdop.CompareMod, Op: etcdop.CompareGreater, Rev: 4}, false},
		{etcdop.KVCompare{Key: "/kv/a", Target: etcdop.CompareMod, Op: etcdop.CompareNotEqual, Rev: 3}, false},
		{etcdop.KVCompare{Key: "/kv/a", Target: etcdop.CompareCreate, Op: etcdop.CompareGreater, Rev: 1}, true},
		{etcdop.KVCompare{Key: "/kv/c", Target: etcdop.CompareVersion, Rev: 0}, true},
		{etcdop.KVCompare{Key: "/kv/c", Target: etcdop.CompareValue, Value: ""}, false},
	} {
		if got := s.holds(c.c); got != c.want {
			t.Errorf("%s: %v, want %v", describeCompare(c.c), got, c.want)
		}
	}
}

// A put guarded by a condition that holds over every key (the workload's
// scan-put) must run its Then branch: etcd answering that it did not is an
// anomaly; and the model refuses what it cannot judge from the record, a
// value compared by order.
func TestEtcdScanPut(t *testing.T) {
	guard := etcdop.KVCompare{Key: "a", End: "c", Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: math.MaxInt64}
	scanPut := func(h *kvh, t1 float64, value string, resp *etcdop.KVResponse) *kvh {
		return h.op(1, t1, t1+1, etcdop.FKVTxn, etcdop.KVRequest{If: []etcdop.KVCompare{guard}, Then: []etcdop.KVOp{{F: etcdop.FPut, Key: "b", Value: value}}}, resp)
	}
	ran := scanPut((&kvh{}).put(0, 0, 1, "a", "1", 0, 2), 2, "2", &etcdop.KVResponse{Revision: 3, Succeeded: true, Results: []etcdop.KVResult{{}}}).
		get(0, 4, 5, "a", "c", 3, kv("a", "1", 2, 2, 1), kv("b", "2", 3, 3, 1))
	checkEtcd(t, ran, analysis.Valid)
	skipped := scanPut((&kvh{}).put(0, 0, 1, "a", "1", 0, 2), 2, "2", &etcdop.KVResponse{Revision: 2, Succeeded: false, Results: []etcdop.KVResult{}})
	checkEtcd(t, skipped, analysis.Invalid)
}

// A value compared by order is judged as etcd judges it, on its bytes (a
// large value's filler included), not refused with the whole verdict
// (issue 35, item 5): a transaction that took the branch its compare
// gives is valid, one that took the other is not.
func TestEtcdValueCompareByOrder(t *testing.T) {
	txn := func(h *kvh, op, value string, succeeded bool) *kvh {
		resp := &etcdop.KVResponse{Revision: 2, Succeeded: succeeded, Results: []etcdop.KVResult{}} // else: nothing
		if succeeded {
			resp.Results = []etcdop.KVResult{{KVs: []etcdop.KV{kv("a", "p1-2", 2, 2, 1)}}}
		}
		return h.op(1, 2, 3, etcdop.FKVTxn, etcdop.KVRequest{
			If:   []etcdop.KVCompare{{Key: "a", Target: etcdop.CompareValue, Op: op, Value: value}},
			Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a"}},
		}, resp)
	}
	for _, tc := range []struct {
		op, value string
		holds     bool
	}{
		{etcdop.CompareLess, "p1-3", true},      // "p1-2" < "p1-3"
		{etcdop.CompareLess, "p1-10", false},    // bytes, not numbers: "p1-2" > "p1-10"
		{etcdop.CompareGreater, "p1-10", true},  //
		{etcdop.CompareNotEqual, "p1-2", false}, //
		{etcdop.CompareNotEqual, "p1-1", true},  //
		{etcdop.CompareLess, "p1-2#3", true},    // sent as "p1-2#xxx", longer with the same start
		{etcdop.CompareGreater, "p1-1#40000", true},
	} {
		for _, succeeded := range []bool{tc.holds, !tc.holds} {
			want := analysis.Valid
			if succeeded != tc.holds {
				want = analysis.Invalid
			}
			h := txn((&kvh{}).put(0, 0, 1, "a", "p1-2", 0, 2), tc.op, tc.value, succeeded)
			t.Run(fmt.Sprintf("a %s %s, succeeded %v", tc.op, tc.value, succeeded), func(t *testing.T) { checkEtcd(t, h, want) })
		}
	}
}

// A history the revision order finds illegal gets porcupine's interactive
// view all the same, named in the finding, as a register's does.
func TestEtcdKVVisualized(t *testing.T) {
	h := (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(0, 2, 3, "a", "2", 0, 3).
		get(1, 4, 5, "a", "", 3, kv("a", "1", 2, 2, 1))
	dir := t.TempDir()
	r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: h.Ops, Dir: dir})
	analysistest.WantResult(t, r, analysis.Invalid)
	files, _ := filepath.Glob(filepath.Join(dir, "linearizability-*.html"))
	if len(files) != 1 || len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Explanation, filepath.Base(files[0])) {
		t.Errorf("visualizations %v; finding %+v; want one, named in the finding", files, r.Findings)
	}
}

// Two puts may write one value: a sighting names the revision, and the
// key and value, not one operation (issue 35, item 1).
func TestEtcdKVEvidenceRepeatedValues(t *testing.T) {
	all := etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}
	// The second put of a=1 lost its answer but made revision 3, which a
	// watch and a read show.
	twice := (&kvh{}).put(0, 0, 1, "a", "1", 0, 2).put(1, 2, 3, "a", "1", 0, 0).
		watch(2, 0, 5, all, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wput("a", "1", 2, 3, 2))).
		get(3, 6, 7, "a", "", 3, kv("a", "1", 2, 3, 2))
	r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: twice.Ops})
	if r.Verdict != analysis.Valid {
		t.Fatalf("a repeated value whose second put lost its answer: %s %+v", r.Verdict, r.Findings)
	}
	// A value shown under another key says nothing of this put: a=1 never
	// shown, while b=1 was made by an acknowledged put.
	otherKey := (&kvh{}).put(0, 0, 1, "a", "1", 0, 0).put(1, 2, 3, "b", "1", 0, 2).
		watch(2, 0, 5, all, resp(2, wput("b", "1", 2, 2, 1))).
		get(3, 6, 7, "a", "", 2)
	r = analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: otherKey.Ops})
	if r.Verdict != analysis.Valid || r.Stats["dropped_unseen_writes"] != 1 {
		t.Fatalf("an unknown put whose value another key shows: %s %v", r.Verdict, r.Stats)
	}
}

// A watch vouches for its own keys only: one of key b says nothing of a
// put to a (issue 35, item 2).
func TestEtcdKVEvidenceWatchRange(t *testing.T) {
	onlyB := etcdop.WatchRequest{Key: "b", Rev: 2}
	// The put of a lost its answer and took effect at 3, after the put of
	// b; the watch of b saw nothing at 3, as it should not. A read of b
	// at 3 shows that something made revision 3.
	h := (&kvh{}).put(1, 0, 1, "b", "1", 0, 2).put(0, 2, 3, "a", "2", 0, 0).
		watch(2, 0, 5, onlyB, resp(2, wput("b", "1", 2, 2, 1)), etcdop.WatchResponse{Revision: 3, Progress: true}).
		get(3, 6, 7, "b", "", 3, kv("b", "1", 2, 2, 1))
	r := analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Valid {
		t.Fatalf("a watch of b taken as evidence about a: %s %+v", r.Verdict, r.Findings)
	}
}
