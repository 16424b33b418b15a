package etcd

import (
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// The disagreements TestOracleEtcdStore found, shrunk by hand: the
// oracle's verdict is checked, and the checkers must agree with it; each
// case says what they answered when it was written (issue 35), before
// they were mended.
func TestOracleEtcdCases(t *testing.T) {
	grant := func(h *kvh) *kvh {
		return h.op(9, 0, 0.1, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7})
	}
	delA := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a"}}}
	withPrev := func(e etcdop.WatchEvent, prev etcdop.KV) etcdop.WatchEvent { e.Prev = &prev; return e }
	sget := func(h *kvh, proc int, t1, t2 float64, key string, rev int64, kvs ...etcdop.KV) *kvh {
		req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: key}}}
		return h.op(proc, t1, t2, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: rev, Member: "m1", Results: []etcdop.KVResult{{KVs: kvs}}})
	}
	failedPut := func(h *kvh, key, value string) *kvh {
		req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: value}}}
		h.Add(0, 1, history.Invoke, etcdop.FPut, req).Add(1, 1, history.Fail, etcdop.FPut, req)
		return h
	}
	for _, c := range []struct {
		name  string
		h     *kvh
		valid bool   // the oracle's verdict
		then  string // what the checkers said when the case was written
	}{
		{
			// A delete of unknown outcome made revision 3; the revoke of
			// lease 7, which had no key (a was put without a lease), kept
			// revision 3. etcd-kv's evidence takes the revoke to have made
			// 3 (the watch's delete event, without prev_kv, names no
			// lease), so drops the delete, and then no one made 3.
			name: "a revoke of an empty lease at a revision a lost delete made",
			h: grant(&kvh{}).put(1, 0.2, 0.3, "a", "1", 0, 2).op(2, 0.4, 0.45, etcdop.FDelete, delA, nil).
				op(3, 0.5, 0.6, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}).
				watch(4, 0, 1, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2}, resp(2, wput("a", "1", 2, 2, 1)), resp(3, wdel("a", 3))),
			valid: true, then: "etcd-kv invalid (false alarm)",
		},
		{
			// The same with prev_kv, which names the lease: a read at 3
			// completed before the revoke was invoked, so revision 3 was
			// made before it, by the delete of unknown outcome; the
			// revoke found its lease empty. etcd-kv's evidence takes the
			// revoke to have made 3 all the same.
			name: "a revoke credited with a revision made before it was invoked",
			h: grant(&kvh{}).put(1, 0.2, 0.3, "a", "1", 7, 2).op(2, 0.4, 0.45, etcdop.FDelete, delA, nil).
				get(5, 0.5, 0.6, "a", "", 3).
				op(3, 0.7, 0.8, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}).
				watch(4, 0, 1, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2, PrevKV: true},
					resp(2, etcdop.WatchEvent{Type: "put", KV: etcdop.KV{Key: "a", Value: "1", Create: 2, Mod: 2, Version: 1, Lease: 7}}),
					resp(3, withPrev(wdel("a", 3), etcdop.KV{Key: "a", Value: "1", Create: 2, Mod: 2, Version: 1, Lease: 7}))),
			valid: true, then: "etcd-kv invalid (false alarm)",
		},
		{
			// A delete event of a key that only a leased put, invoked
			// after the event came, wrote: no write can have made it, and
			// the lease may expire only after that put.
			name: "a delete event before the only put that leased its key",
			h: grant(&kvh{}).put(1, 0.6, 0.7, "a", "1", 7, 2).
				watch(0, 0.2, 0.5, etcdop.WatchRequest{Key: "a"}, resp(3, wdel("a", 3))),
			valid: false, then: "etcd-watch crashed (slices.MinFunc: empty list, in checkOrigins)",
		},
		{
			name: "a progress notification at a revision never made",
			h: (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).
				watch(0, 2, 9, etcdop.WatchRequest{Key: "a", End: "c", Progress: true}, etcdop.WatchResponse{Revision: 5, Progress: true}),
			valid: false, then: "all valid (miss)",
		},
		{
			name: "a previous key given for a key that did not exist",
			h: (&kvh{}).put(1, 0, 1, "c", "2", 0, 2).
				watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "z", Rev: 2, PrevKV: true}, resp(2, withPrev(wput("c", "2", 2, 2, 1), kv("c", "9", 2, 1, 1)))),
			valid: false, then: "all valid (miss)",
		},
		{
			name: "a wrong previous key on a watch's first event of the key",
			h: (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "a", "2", 0, 3).
				watch(0, 0, 9, etcdop.WatchRequest{Key: "a", Rev: 3, PrevKV: true}, resp(3, withPrev(wput("a", "2", 2, 3, 2), kv("a", "9", 2, 2, 1)))),
			valid: false, then: "all valid (miss)",
		},
		{
			// A linearizable read after the serializable one shows the
			// cluster at revision 2; the member answered 5.
			name:  "a serializable read at a revision the cluster had not made",
			h:     sget((&kvh{}).put(1, 0, 1, "a", "1", 0, 2), 0, 2, 3, "b", 5).get(2, 4, 5, "a", "", 2, kv("a", "1", 2, 2, 1)),
			valid: false, then: "all valid (miss)",
		},
		{
			name:  "a serializable read of a value no write made at its revision",
			h:     sget((&kvh{}).put(1, 0, 1, "b", "1", 0, 2), 0, 2, 3, "b", 2, kv("b", "2", 2, 2, 1)),
			valid: false, then: "all valid (miss)",
		},
		{
			// Revision 2 was made by the put of b of unknown outcome, the
			// only write that can have: the watch of a..c from 2 missed
			// its event.
			name: "a watch missing the event of a write of unknown outcome",
			h: (&kvh{}).put(1, 0.1, 0.2, "b", "3", 0, 0).put(2, 0.3, 0.4, "b", "1", 0, 3).put(3, 0.5, 0.6, "a", "3", 0, 4).
				watch(0, 0, 0.45, etcdop.WatchRequest{Key: "a", End: "c", Rev: 2}, resp(3, wput("b", "1", 3, 3, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// The watch got the put's event at 0.5 s, so revision 2 was
			// made by then; a linearizable range invoked at 1 s answered
			// revision 1. etcd-kv times a write by its watch events only
			// when its answer was lost.
			name: "a linearizable range older than a watch event received before it",
			h: (&kvh{}).put(1, 0, 2, "a", "2", 0, 2).get(2, 1, 1.5, "a", "", 1).
				watch(0, 0, 0.5, etcdop.WatchRequest{Key: "a", Rev: 2}, resp(2, wput("a", "2", 2, 2, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// a was created at 2; the watch from 4 says at 3.
			name: "a wrong create revision on a watch's first event of the key",
			h: (&kvh{}).put(1, 0, 1, "a", "3", 0, 2).put(1, 1, 2, "c", "1", 0, 3).put(1, 2, 3, "a", "3", 0, 4).
				watch(0, 0, 9, etcdop.WatchRequest{Key: "a", Rev: 4}, resp(4, wput("a", "3", 3, 4, 2))),
			valid: false, then: "all valid (miss)",
		},
		{
			name:  "a serializable read with a wrong create revision",
			h:     sget((&kvh{}).put(1, 0, 1, "b", "2", 0, 2), 0, 2, 3, "b", 2, kv("b", "2", 1, 2, 1)),
			valid: false, then: "all valid (miss)",
		},
		{
			// One put of unknown outcome, two watches: one sees it make
			// revision 2, the other revision 3, which no write made.
			name: "one put seen at two revisions",
			h: (&kvh{}).put(1, 0, 1, "a", "3", 0, 0).
				watch(0, 0, 9, etcdop.WatchRequest{Key: "a"}, resp(2, wput("a", "3", 2, 2, 1))).
				watch(2, 0, 9, etcdop.WatchRequest{Key: "a"}, resp(3, wput("a", "3", 3, 3, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// The range delete's answer says it deleted one key at 3, not
			// which: a watch of every key from 2 to 4 must have got it.
			name: "a watch missing the event of a range delete",
			h: (&kvh{}).put(1, 0, 1, "a", "1", 0, 2).
				op(1, 1, 2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, &etcdop.KVResponse{Revision: 3, Results: []etcdop.KVResult{{Deleted: 1}}}).
				put(1, 2, 3, "b", "2", 0, 4).
				watch(0, 0, 9, etcdop.WatchRequest{Key: "a", End: "\x00", Rev: 2}, resp(2, wput("a", "1", 2, 2, 1)), resp(4, wput("b", "2", 4, 4, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// The put's answer says a was written at 2, so the store at 2
			// has a, whatever its create revision.
			name:  "a serializable read leaving out a key put at its revision",
			h:     sget((&kvh{}).put(1, 0, 1, "a", "3", 0, 2), 0, 2, 3, "a", 2),
			valid: false, then: "all valid (miss)",
		},
		{
			// etcd-watch judges no event of a history whose writes all
			// failed (it takes it for a foreign history).
			name: "an event of a failed put",
			h: failedPut(&kvh{}, "a", "1").
				watch(0, 0, 9, etcdop.WatchRequest{Key: "a", Rev: 1}, resp(2, wput("a", "1", 2, 2, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// The revoke of lease 7 answered revision 4, so b, put on
			// that lease at 2, was deleted at 4 (the revoke made it): a
			// read at 4 cannot return it.
			name: "a serializable read of a leased key at the revision its revoke deleted it",
			h: sget(grant(&kvh{}).put(2, 0.2, 0.3, "b", "2", 7, 0).put(3, 0.2, 0.35, "c", "3", 0, 3).
				op(6, 0.4, 0.5, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 4}),
				7, 0.6, 0.7, "b", 4, etcdop.KV{Key: "b", Value: "2", Create: 2, Mod: 2, Version: 1, Lease: 7}),
			valid: false, then: "all valid (miss)",
		},
		{
			// Revisions 2 and 3 are the acknowledged puts', and the
			// revoke of lease 7 answered 3: it deleted nothing, so the
			// leased put of unknown outcome had not run by then, and
			// after it no put on lease 7 can run. Nothing made 4.
			name: "a serializable read at a revision only a put on a revoked lease could make",
			h: sget(grant(&kvh{}).put(1, 0.2, 0.25, "a", "3", 0, 2).put(2, 0.2, 0.9, "b", "2", 7, 0).put(3, 0.3, 0.4, "b", "1", 0, 3).
				op(4, 0.45, 0.5, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}),
				6, 0.6, 0.7, "a", 4, kv("a", "3", 2, 2, 1)),
			valid: false, then: "all valid (miss)",
		},
		{
			// c was put once, at 3; only the put of b of unknown outcome
			// can have made 2, and it does not write c: c's create
			// revision cannot be 2.
			name: "an event whose create revision only a write of another key can have made",
			h: (&kvh{}).put(1, 0.1, 0.6, "b", "2", 0, 0).put(2, 0.1, 0.7, "c", "3", 0, 3).
				watch(0, 0, 1, etcdop.WatchRequest{Key: "a", End: "\x00"}, resp(3, wput("c", "3", 2, 3, 2))),
			valid: false, then: "all valid (miss)",
		},
		{
			// etcd's store begins empty at revision 1: no key was
			// created there.
			name:  "a key created at revision 1",
			h:     sget((&kvh{}).put(1, 0, 0.1, "a", "1", 0, 2).put(1, 0.1, 0.2, "a", "1", 0, 3), 0, 0.3, 0.4, "a", 3, kv("a", "1", 1, 3, 2)),
			valid: false, then: "all valid (miss)",
		},
		{
			// b's lease was granted for 600 s: it cannot expire in the
			// first second, and the revoke was sent after the delete
			// event came.
			name: "a delete event of a leased key before its revoke was sent and long before its lease could expire",
			h: grant(&kvh{}).put(1, 0.2, 0.3, "b", "1", 7, 2).put(3, 0.05, 0.95, "c", "1", 0, 4).
				watch(0, 0.1, 0.5, etcdop.WatchRequest{Key: "b", Rev: 2}, resp(2, etcdop.WatchEvent{Type: "put", KV: etcdop.KV{Key: "b", Value: "1", Create: 2, Mod: 2, Version: 1, Lease: 7}}), resp(3, wdel("b", 3))).
				op(2, 0.6, 0.7, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The second watch shows a created at 3, so a was absent at
			// 2 and no delete was sent: the put of a=3 did not make 2,
			// and it is the only write sent before the progress
			// notification at 2.
			name: "a progress notification at a revision only a put can have made, which a later creation rules out",
			h: (&kvh{}).put(1, 0.1, 0.3, "a", "3", 0, 0).
				watch(0, 0.05, 0.4, etcdop.WatchRequest{Key: "a", Progress: true}, etcdop.WatchResponse{Revision: 2, Progress: true}).
				put(2, 0.6, 0.9, "a", "1", 0, 0).
				watch(3, 0.35, 0.8, etcdop.WatchRequest{Key: "a", Rev: 3}, resp(3, wput("a", "1", 3, 3, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// The revoke can make a revision only past 4, where the put
			// of b gave its lease a key; so 2 was made by one of the puts
			// of a=1, either way a put of a=1, which the read of a..c at
			// 2 leaves out.
			name: "a serializable read leaving out a key one of two like puts put at its revision",
			h: grant(&kvh{}).put(1, 0.002, 0.024, "a", "1", 0, 0).put(3, 0.022, 0.049, "a", "1", 0, 0).
				op(2, 0.027, 0.1, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil).
				put(5, 0.05, 0.078, "b", "1", 7, 4).
				op(4, 0.025, 0.063, etcdop.FRangeSerializable, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}},
					&etcdop.KVResponse{Revision: 2, Member: "m1", Results: []etcdop.KVResult{{}}}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The watch got b=1 at 2 when only p3's put of it was sent:
			// p3 made 2. The revoke of lease 7, which no put gave a key,
			// made no revision, so p6's put made 3, and nothing made 4.
			name: "an event at a revision left to no one once a watch shows who made an earlier one",
			h: func() *kvh {
				h := grant(&kvh{}).put(3, 0.035, 0.043, "b", "1", 0, 0).put(6, 0.047, 0.2, "b", "1", 0, 0).
					op(5, 0.059, 0.064, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3})
				h.Add(0.007, 101, history.Invoke, etcdop.FWatch, etcdop.WatchRequest{Key: "b", Rev: 2, PrevKV: true})
				first := kv("b", "1", 2, 2, 1)
				h.Add(0.085, 101, history.Ok, etcdop.FWatch, etcdop.WatchResult{Member: "m1", Responses: []etcdop.WatchResponse{
					{Time: 44 * time.Millisecond, Revision: 2, Events: []etcdop.WatchEvent{{Type: "put", KV: first}}},
					{Time: 76 * time.Millisecond, Revision: 4, Events: []etcdop.WatchEvent{withPrev(wput("b", "1", 2, 4, 2), first)}},
				}})
				return h
			}(),
			valid: false, then: "all valid (miss)",
		},
		{
			// The delete of a..c can make a revision only past one a put
			// of a or b made, so past 2: b=2 made 2, which the read of
			// a..c at 2 leaves out.
			name: "a serializable read at the first revision, which a delete cannot have made",
			h: (&kvh{}).put(0, 0.007, 0.01, "b", "2", 0, 0).
				op(3, 0.037, 0.2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				put(6, 0.06, 0.073, "c", "3", 0, 4).
				op(4, 0.045, 0.064, etcdop.FRangeSerializable, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}},
					&etcdop.KVResponse{Revision: 2, Member: "m1", Results: []etcdop.KVResult{{}}}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The watch shows a=3 made 2; b was put only at 4, so the
			// delete of a..c, the one write left to make 3, deleted a
			// there, and the watch of a from 2 missed it.
			name: "a watch missing the delete of the one key a range delete can have deleted",
			h: (&kvh{}).op(0, 0, 0.018, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				put(1, 0.004, 0.2, "a", "3", 0, 0).put(3, 0.032, 0.041, "b", "1", 0, 4).
				watch(9, 0.013, 0.08, etcdop.WatchRequest{Key: "a", Rev: 2, Progress: true}, resp(2, wput("a", "3", 2, 2, 1)), etcdop.WatchResponse{Revision: 4, Progress: true}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The read at 3 returned a as put at 2: nothing wrote a at 3,
			// yet the watch got its delete there.
			name: "a watch's delete at a revision a read showed its key left as it was",
			h: (&kvh{}).put(2, 0.021, 0.034, "a", "2", 0, 0).put(0, 0, 0.018, "b", "3", 0, 0).
				op(4, 0.04, 0.056, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				get(3, 0.021, 0.055, "a", "", 3, kv("a", "2", 2, 2, 1)).
				watch(9, 0.018, 0.064, etcdop.WatchRequest{Key: "a"}, resp(3, wdel("a", 3))),
			valid: false, then: "all valid (miss)",
		},
		{
			// b=1 made 2 (the previous key shows it), so the delete of
			// a..c made 3, deleting b: b=2 at 4 cannot have been created
			// at 2.
			name: "an event created before a delete of its key that elimination shows",
			h: (&kvh{}).put(0, 0, 0.035, "b", "1", 0, 0).put(4, 0.032, 0.074, "b", "2", 0, 4).
				op(2, 0.006, 0.2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				watch(9, 0.026, 0.09, etcdop.WatchRequest{Key: "b", PrevKV: true}, resp(4, withPrev(wput("b", "2", 2, 4, 2), kv("b", "1", 2, 2, 1)))),
			valid: false, then: "all valid (miss)",
		},
		{
			// Only the revoke of lease 7, which only a had, can have made
			// 4: b, put at 3 without a lease, is still there.
			name: "a serializable read leaving out a key a revoke of another key's lease cannot have deleted",
			h: sget(grant(&kvh{}).put(1, 0.2, 0.3, "a", "1", 7, 2).put(2, 0.3, 0.4, "b", "1", 0, 3).
				op(3, 0.5, 2, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil), 4, 0.6, 0.7, "b", 4),
			valid: false, then: "all valid (miss)",
		},
		{
			// The watch of a..c from 2 says, with its progress at 4, that
			// nothing changed a or b over 2 to 4; c=2 made 3, and only
			// c=1 and b=3 can have made 2 and 4, one each: b=3 made one
			// of them, and the watch lost its event.
			name: "a watch's progress over two revisions only one write outside its keys can have made",
			h: (&kvh{}).put(0, 0, 0.033, "c", "1", 0, 0).put(2, 0.012, 0.033, "c", "2", 0, 3).put(3, 0.027, 0.2, "b", "3", 0, 0).
				watch(9, 0.029, 0.029, etcdop.WatchRequest{Key: "a", End: "c", Rev: 2, PrevKV: true}, etcdop.WatchResponse{Revision: 4, Progress: true}),
			valid: false, then: "all valid (miss)",
		},
		{
			// A delete that found no key made no revision: only the two
			// puts of unknown outcome can have made 2 and 3, and nothing
			// 4 by 0.049 s.
			name: "a watch's progress at a revision only a delete that found nothing can have made",
			h: (&kvh{}).del(1, 0.014, 0.030, "c", 0, 1).put(5, 0.039, 0.2, "c", "2", 0, 0).put(4, 0.040, 0.2, "b", "1", 0, 0).
				watch(9, 0.032, 0.049, etcdop.WatchRequest{Key: "a", Progress: true}, etcdop.WatchResponse{Revision: 4, Progress: true}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The watch shows b=2 put at 2: only the put of b=2 can have
			// made 2, and it was sent after the read showed 2.
			name: "a serializable read at a revision whose one maker was sent after it",
			h: sget((&kvh{}).put(0, 0, 0.020, "c", "3", 0, 0).put(4, 0.044, 0.2, "b", "2", 0, 0), 2, 0.006, 0.031, "a", 2).
				watch(9, 0.015, 0.064, etcdop.WatchRequest{Key: "b"}, resp(2, wput("b", "2", 2, 2, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// The delete of c that found nothing at 2 shows c absent
			// there: not c=3 but b=1 made 2, and the read of b at 2 left
			// it out.
			name: "a serializable read leaving out the key of the one put a delete that found nothing leaves",
			h: sget(grant(&kvh{}).put(1, 0.2, 0.5, "b", "1", 7, 0).put(2, 0.23, 0.33, "c", "3", 0, 0).del(4, 0.37, 0.69, "c", 0, 2),
				3, 0.24, 0.45, "b", 2),
			valid: false, then: "all valid (miss)",
		},
		{
			// The watch's delete of b at 3 says b was there at 2; the read
			// at 2 left it out.
			name: "a serializable read leaving out a key a watch's delete shows was there",
			h: (&kvh{}).put(0, 0.007, 0.010, "b", "2", 0, 0).put(2, 0.027, 0.033, "c", "3", 0, 0).
				op(3, 0.037, 0.2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				put(6, 0.060, 0.073, "c", "3", 0, 4).
				watch(9, 0.004, 0.042, etcdop.WatchRequest{Key: "b", Rev: 3}, resp(3, wdel("b", 3))).
				op(4, 0.045, 0.064, etcdop.FRangeSerializable, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}},
					&etcdop.KVResponse{Revision: 2, Member: "m2", Results: []etcdop.KVResult{{}}}),
			valid: false, then: "all valid (miss)",
		},
		{
			// a=1 created at 3 says a was absent at 2, so a=2 did not
			// make 2; the delete can make nothing before a put of a: no
			// write made 2 by 0.037 s.
			name: "a watch's progress at a revision a creation shows no write made",
			h: (&kvh{}).put(0, 0, 0.015, "a", "2", 0, 0).
				op(3, 0.016, 0.051, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				put(6, 0.062, 0.2, "a", "1", 0, 0).
				watch(7, 0.007, 0.037, etcdop.WatchRequest{Key: "a", Progress: true}, etcdop.WatchResponse{Revision: 2, Progress: true}).
				watch(8, 0.034, 0.081, etcdop.WatchRequest{Key: "a", End: "\x00", Rev: 3}, resp(3, wput("a", "1", 3, 3, 1))),
			valid: false, then: "all valid (miss)",
		},
		{
			// Only the revoke of lease 7, whose one key b is in the
			// watch's range, can have made 4: the watch's progress at 4
			// with no delete of b lost that event.
			name: "a watch's progress past a revision only a revoke of a watched key's lease can have made",
			h: func() *kvh {
				lb := wput("b", "1", 3, 3, 1)
				lb.KV.Lease = 7
				return (&kvh{}).put(2, 0.025, 0.033, "a", "3", 0, 2).
					op(0, 0, 0.012, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
					put(3, 0.031, 0.043, "b", "1", 7, 3).
					op(1, 0.013, 0.033, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil).
					watch(9, 0.004, 0.077, etcdop.WatchRequest{Key: "a", End: "c", Rev: 1, PrevKV: true, Progress: true},
						resp(2, wput("a", "3", 2, 2, 1)), resp(3, lb), etcdop.WatchResponse{Revision: 4, Progress: true})
			}(),
			valid: false, then: "all valid (miss)",
		},
		{
			// Only the delete of a..c can have made 4, and it would have
			// deleted b, which the read at 4 shows there since 2.
			name: "a serializable read keeping a key at a revision only a delete of its range can have made",
			h: (&kvh{}).put(0, 0.004, 0.030, "b", "3", 0, 2).put(1, 0.007, 0.042, "a", "2", 0, 3).
				op(2, 0.007, 0.2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
				op(3, 0.022, 0.043, etcdop.FRangeSerializable, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}},
					&etcdop.KVResponse{Revision: 4, Member: "m2", Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("b", "3", 2, 2, 1)}}}}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The revoke answered at 1 found lease 7 there, so the put on
			// it after failed and the second revoke found no lease: only
			// the put of c made a revision, 2.
			name: "a serializable read at a revision only writes on a lease a revoke ended can have made",
			h: sget((&kvh{}).op(0, 0, 0.015, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
				op(2, 0.023, 0.054, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 1}).
				put(3, 0.024, 0.057, "c", "1", 0, 2).put(5, 0.037, 0.079, "a", "2", 7, 0).
				op(7, 0.078, 0.103, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil), 6, 0.046, 0.085, "b", 3),
			valid: false, then: "all valid (miss)",
		},
		{
			// The read at 4 shows a on lease 7 since 2: the revoke of 7
			// made neither 3 nor 4, and only the put of c is left to.
			name: "a serializable read at a revision only a revoke of a lease a key it shows still has can have made",
			h: func() *kvh {
				a1 := kv("a", "1", 2, 2, 1)
				a1.Lease = 7
				return sget((&kvh{}).op(0, 0, 0.017, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
					put(1, 0.020, 0.036, "a", "1", 7, 2).put(3, 0.018, 0.061, "c", "2", 7, 0).
					op(5, 0.035, 0.078, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil), 4, 0.045, 0.051, "a", 4, a1)
			}(),
			valid: false, then: "all valid (miss)",
		},
		{
			// The linearizable read shows b=3 put at 2, the serializable
			// one at 3, with version 2: the one put of b=3 made both.
			name: "a serializable read and a linearizable one showing the one put of a value at two revisions",
			h: sget((&kvh{}).put(0, 0.001, 0.030, "b", "2", 0, 0).put(1, 0.013, 0.029, "b", "3", 0, 0).
				get(2, 0.019, 0.037, "a", "\x00", 2, kv("b", "3", 2, 2, 1)), 5, 0.055, 0.069, "b", 3, kv("b", "3", 2, 3, 2)),
			valid: false, then: "all valid (miss)",
		},
		{
			// The put of b, sent after c=3's answer at 2, made 3 at the
			// lowest, and the delete of b then 4: the read at 3, without
			// b, shows a revision no write made.
			name: "a serializable read at a revision only a delete of a key put after it can have made",
			h: (&kvh{}).put(0, 0.008, 0.017, "c", "3", 0, 2).put(4, 0.025, 0.2, "b", "2", 0, 0).
				op(5, 0.052, 0.2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "b"}}}, nil).
				op(6, 0.066, 0.085, etcdop.FRangeSerializable, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "\x00"}}},
					&etcdop.KVResponse{Revision: 3, Member: "m1", Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("c", "3", 2, 2, 1)}}}}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The delete of b found it at 4, which c=3 made: b was there
			// at 3 too, and the read at 3 left it out.
			name: "a serializable read leaving out a key a later delete found, through a revision that left it alone",
			h: sget((&kvh{}).put(1, 0.011, 0.043, "b", "3", 0, 0).put(2, 0.028, 0.030, "a", "1", 0, 0).
				put(6, 0.059, 0.072, "c", "3", 0, 4).del(7, 0.063, 0.081, "b", 1, 5), 5, 0.050, 0.085, "b", 3),
			valid: false, then: "all valid (miss)",
		},
		{
			// Lease 7 had a from 2, and no other write can have made 3:
			// the revoke answered at 3 made it, and was sent only at
			// 0.038 s, after the watch's progress at 3.
			name: "a watch's progress at a revision only a revoke sent after it can have made",
			h: (&kvh{}).op(0, 0, 0.018, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
				put(1, 0.019, 0.038, "a", "1", 7, 2).put(4, 0.029, 0.066, "c", "3", 0, 4).
				op(3, 0.038, 0.056, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}).
				watch(9, 0.025, 0.030, etcdop.WatchRequest{Key: "b", PrevKV: true}, etcdop.WatchResponse{Revision: 3, Progress: true}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The revoke was sent at the very time the read answered: it
			// can have deleted b at 3 by then.
			name: "a serializable read answered at the time a revoke that deleted its key was sent",
			h: sget((&kvh{}).op(0, 0.004, 0.011, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
				put(1, 0.012, 0.023, "b", "1", 7, 2).
				op(4, 0.049, 0.074, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 3}), 3, 0.035, 0.049, "b", 3),
			valid: true, then: "etcd-serializable invalid (false alarm, found past the first 100,000 histories)",
		},
		{
			// The delete of a..c, not the revoke, deleted a at 3: lease 7
			// lived on, and the put of a on it made 4.
			name: "a delete event a range delete or a revoke of unknown outcome can have made",
			h: func() *kvh {
				a3 := wput("a", "3", 2, 2, 1)
				a3.KV.Lease = 7
				a1 := wput("a", "1", 4, 4, 1)
				a1.KV.Lease = 7
				del := wdel("a", 3)
				prev := a3.KV
				del.Prev = &prev
				return (&kvh{}).op(0, 0.003, 0.013, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
					op(1, 0.014, 0.038, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil).
					put(4, 0.036, 0.068, "a", "3", 7, 2).
					op(7, 0.075, 0.097, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
					put(8, 0.075, 0.091, "a", "1", 7, 4).
					watch(9, 0.027, 0.130, etcdop.WatchRequest{Key: "a", End: "\x00", Rev: 1, PrevKV: true, Progress: true}, resp(2, a3), resp(3, del), resp(4, a1))
			}(),
			valid: true, then: "etcd-kv invalid (false alarm, found past the first 100,000 histories)",
		},
		{
			// c, the one key lease 7 had, was put again without a lease
			// at 3: the revoke of 7 deleted nothing, and nothing made 5.
			name: "a watch's progress at a revision only the revoke of a lease that no longer held a key can have made",
			h: (&kvh{}).op(0, 0, 0.012, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
				put(1, 0.013, 0.031, "c", "1", 7, 2).put(3, 0.032, 0.040, "c", "2", 0, 3).put(5, 0.054, 0.069, "a", "2", 0, 4).
				op(7, 0.058, 0.2, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, nil).
				watch(9, 0.054, 0.066, etcdop.WatchRequest{Key: "a", End: "c"}, etcdop.WatchResponse{Revision: 5, Progress: true}),
			valid: false, then: "all valid (miss)",
		},
		{
			// The delete of a found nothing, so the two puts made 2 and
			// 3; the read at 3 left a out, so b=1 made 3, and a=2 made 2:
			// a was there at 3, and the read is stale.
			name: "a serializable read leaving out a key only a second pass of elimination shows was put",
			h: sget((&kvh{}).put(4, 0.040, 0.050, "a", "2", 0, 0).put(2, 0.021, 0.047, "b", "1", 0, 0).del(6, 0.058, 0.071, "a", 0, 1),
				5, 0.047, 0.069, "a", 3),
			valid: false, then: "all valid (miss)",
		},
		{
			// a, put at 2, was certainly there when the delete of a..c
			// deleted one key at 3; b, whose put made no revision by
			// then, was not. So a went at 3, and the read at 3 that shows
			// it is stale.
			name: "a serializable read keeping the one key certainly there for a range delete that deleted one",
			h: (&kvh{}).put(1, 0, 0.01, "a", "1", 0, 2).put(2, 0.02, 0.03, "b", "1", 0, 0).
				op(3, 0.04, 0.05, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}},
					&etcdop.KVResponse{Revision: 3, Results: []etcdop.KVResult{{Deleted: 1}}}).
				op(4, 0.06, 0.07, etcdop.FRangeSerializable, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}},
					&etcdop.KVResponse{Revision: 3, Member: "m1", Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("a", "1", 2, 2, 1)}}}}),
			valid: false, then: "all valid (miss)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, got, err := judgeBoth(c.h.Ops)
			if err != nil {
				t.Fatal(err)
			}
			if o.Valid != c.valid {
				t.Fatalf("the oracle: valid %t (%s), expected %t", o.Valid, o.Why, c.valid)
			}
			agree := o.Valid == (combined(got) == analysis.Valid) && len(crashed(got)) == 0
			if !agree {
				t.Errorf("the checkers disagree with the oracle (valid %t %s): %s", o.Valid, o.Why, describeResults(got))
			}
			t.Logf("the oracle: valid %t %s; checkers agree: %t (when written: %s); %s", o.Valid, o.Why, agree, c.then, describeResults(got))
		})
	}
}
