package etcd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// served is the input of a history that does not hold the writes before
// it: the store began at revision 9.
func served(h *kvh) analysis.Input {
	return analysis.Input{History: h.Ops, Initial: json.RawMessage(`{"revision": 9}`)}
}

// sread adds an ok serializable read of member at rev over [t1, t2].
func (h *kvh) sread(proc int, t1, t2 float64, member string, rev int64) *kvh {
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a"}}}
	return h.op(proc, t1, t2, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: rev, Member: member, Results: []etcdop.KVResult{{}}})
}

func TestSerializableRevisionWentBack(t *testing.T) {
	h := (&kvh{}).sread(0, 0, 1, "m1", 7).sread(1, 2, 3, "m1", 5)
	r := analysistest.RunChecker(t, "etcd-serializable", served(h))
	if r.Verdict != analysis.Invalid || len(r.Findings) != 1 || r.Findings[0].Kind != "revision-went-back" || len(r.Findings[0].Ops) != 4 {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
	// The same, the later read's lines written first: times decide.
	late := &kvh{}
	late.sread(1, 2, 3, "m1", 5).sread(0, 0, 1, "m1", 7)
	if r := analysistest.RunChecker(t, "etcd-serializable", served(late)); r.Verdict != analysis.Invalid {
		t.Fatalf("lines out of time order: %s", r.Verdict)
	}
}

func TestSerializableKept(t *testing.T) {
	for name, h := range map[string]*kvh{
		"stale but never back":     (&kvh{}).sread(0, 0, 1, "m1", 5).sread(1, 2, 3, "m1", 5).sread(0, 4, 5, "m1", 9),
		"concurrent reads":         (&kvh{}).sread(0, 0, 3, "m1", 7).sread(1, 1, 2, "m1", 5),
		"two members, two clocks":  (&kvh{}).sread(0, 0, 1, "m1", 7).sread(1, 2, 3, "m2", 5),
		"no serializable read yet": &kvh{},
	} {
		t.Run(name, func(t *testing.T) {
			if r := analysistest.RunChecker(t, "etcd-serializable", served(h)); r.Verdict != analysis.Valid {
				t.Fatalf("got %s %+v", r.Verdict, r.Findings)
			}
		})
	}
}

func TestDivergentReads(t *testing.T) {
	h := &kvh{}
	h.get(0, 0, 1, "a", "", 5, kv("a", "1", 2, 5, 3))
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a"}}}
	h.op(1, 2, 3, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 5, Member: "m2", Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("a", "0", 2, 4, 2)}}}})
	r := analysistest.RunChecker(t, "etcd-serializable", served(h))
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "divergent-reads" || len(r.Findings[0].Ops) != 4 {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
	// The same keys at another revision may differ; other keys are another range.
	ok := &kvh{}
	ok.get(0, 0, 1, "a", "", 5, kv("a", "1", 2, 5, 3)).get(1, 2, 3, "a", "", 6, kv("a", "2", 2, 6, 4)).get(1, 4, 5, "b", "c", 5)
	if r := analysistest.RunChecker(t, "etcd-serializable", served(ok)); r.Verdict != analysis.Valid {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
}

// A read is served from one member's store at the revision in its header,
// and is judged against what else is known of the store at that revision
// (issue 35, item 4; each case failed before).
func TestReadAtItsRevision(t *testing.T) {
	sget := func(h *kvh, proc int, t1, t2 float64, key, end string, rev int64, kvs ...etcdop.KV) *kvh {
		req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: key, End: end}}}
		return h.op(proc, t1, t2, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: rev, Member: "m2", Results: []etcdop.KVResult{{KVs: kvs}}})
	}
	for kind, h := range map[string]*kvh{
		"read-from-future": sget(&kvh{}, 0, 0, 1, "a", "", 3, kv("a", "1", 2, 5, 2)),
		"stale-at-revision": sget((&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "a", "2", 0, 3),
			0, 3, 4, "a", "", 4, kv("a", "1", 2, 2, 1)),
		"missing-at-revision": sget((&kvh{}).get(1, 0, 1, "a", "", 5, kv("a", "3", 2, 5, 3)),
			0, 2, 3, "a", "c", 4),
		"divergent-reads": sget((&kvh{}).get(1, 0, 1, "a", "", 4, kv("a", "1", 2, 2, 1)),
			0, 2, 3, "a", "c", 4),
	} {
		t.Run(kind, func(t *testing.T) {
			r := analysistest.RunChecker(t, "etcd-serializable", served(h))
			if r.Verdict != analysis.Invalid || r.Findings[0].Kind != kind || len(r.Findings[0].Ops) < 2 {
				t.Fatalf("got %s %+v, expected %s", r.Verdict, r.Findings, kind)
			}
		})
	}
	for name, h := range map[string]*kvh{
		"stale, at its revision": sget((&kvh{}).put(1, 0, 1, "a", "1", 0, 2).put(1, 1, 2, "a", "2", 0, 3),
			0, 3, 4, "a", "", 2, kv("a", "1", 2, 2, 1)),
		"a key gone by an unknown delete": sget((&kvh{}).put(1, 0, 1, "a", "1", 0, 2).
			op(1, 1, 2, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a"}}}, nil),
			0, 3, 4, "a", "c", 3),
		"a list and a get that agree": sget((&kvh{}).get(1, 0, 1, "a", "", 4, kv("a", "1", 2, 2, 1)),
			0, 2, 3, "a", "c", 4, kv("a", "1", 2, 2, 1), kv("b", "1", 4, 4, 1)),
	} {
		t.Run(name, func(t *testing.T) {
			if r := analysistest.RunChecker(t, "etcd-serializable", served(h)); r.Verdict != analysis.Valid {
				t.Fatalf("got %s %+v", r.Verdict, r.Findings)
			}
		})
	}
}

// Elimination: revision 2 can only be the put of b's, the only write sent
// before the put of c answered 3; a read at 3 that leaves b out, with no
// delete of b sent, says b was never put by then: so no write made
// revision 2.
func TestReadAtItsRevisionByElimination(t *testing.T) {
	h := (&kvh{}).put(1, 0.43, 0.85, "b", "1", 0, 0).put(2, 0.19, 0.48, "c", "3", 0, 3)
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}}
	h.op(0, 0.38, 0.49, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 3, Member: "m2", Results: []etcdop.KVResult{{}}})
	r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "revision-never-made" || len(r.Findings[0].Ops) != 4 {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
}

// Elimination: revision 3 can only have been made by the range delete of
// a..c, which nothing put a key in: no write can have made it, so the
// serializable read that answered it is from no store.
func TestReadAtARevisionNobodyMade(t *testing.T) {
	h := (&kvh{}).op(0, 0, 0.018, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}, &etcdop.KVResponse{Revision: 1, Lease: 7}).
		put(1, 0.019, 0.023, "c", "2", 7, 2).
		op(3, 0.021, 0.062, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil)
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "b"}}}
	h.op(2, 0.018, 0.040, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 3, Member: "m1", Results: []etcdop.KVResult{{}}})
	r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Invalid || !slices.ContainsFunc(r.Findings, func(f analysis.Finding) bool { return f.Kind == "revision-never-made" }) {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
}

// A revision is there only after the write that made it was sent: a
// serializable read at revision 3, answered before the put that made 3
// was sent, read from no store (the range delete over a..c, sent before,
// deletes nothing: a and b were never put). Sent before the read's
// answer, the put leaves nothing to find.
func TestReadBeforeItsRevisionsWrite(t *testing.T) {
	read := func(putSent float64) *kvh {
		h := (&kvh{}).put(1, 0.019, 0.023, "c", "2", 0, 2).
			op(3, 0.021, 0.062, etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: "a", End: "c"}}}, nil).
			put(4, putSent, 0.056, "a", "1", 0, 3)
		req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "b"}}}
		return h.op(2, 0.018, 0.040, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 3, Member: "m1", Results: []etcdop.KVResult{{}}})
	}
	r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: read(0.045).Ops})
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "revision-never-made" || len(r.Findings[0].Ops) != 4 ||
		!strings.Contains(r.Findings[0].Explanation, "made revision 3 and was sent only at 0.045s") {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
	if r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: read(0.030).Ops}); r.Verdict != analysis.Valid {
		t.Fatalf("the put sent before the read's answer: got %s %+v", r.Verdict, r.Findings)
	}
}

// A read that shows a key left as it was rules out, for those revisions,
// the writes that could only have written it: at revision 5, b still has
// the value of revision 2, so the unknown put of b made neither 4 nor 5,
// and the unknown put of c alone cannot have made both. With a third
// unknown write, of d, it can have.
func TestReadShowsKeysLeftAsTheyWere(t *testing.T) {
	read := func(more bool) *kvh {
		h := (&kvh{}).put(1, 0.010, 0.026, "b", "2", 0, 2).put(3, 0.025, 0.063, "a", "2", 0, 3).
			put(4, 0.050, 0.066, "c", "2", 0, 0).put(5, 0.049, 0.084, "b", "3", 0, 0)
		if more {
			h.put(7, 0.051, 0.090, "d", "1", 0, 0)
		}
		req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}}
		return h.op(6, 0.060, 0.072, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 5, Member: "m1",
			Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("a", "2", 3, 3, 1), kv("b", "2", 2, 2, 1)}}}})
	}
	r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: read(false).Ops})
	if r.Verdict != analysis.Invalid || r.Findings[0].Kind != "revision-never-made" ||
		!strings.Contains(r.Findings[0].Explanation, "p6's range-serializable (#") {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
	if r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: read(true).Ops}); r.Verdict != analysis.Valid {
		t.Fatalf("with a put of d: got %s %+v", r.Verdict, r.Findings)
	}
}

// A read's key that only a write credited with another revision can have
// made is the read's phantom-key, not a watch's finding.
func TestReadSoleMakerKind(t *testing.T) {
	h := (&kvh{}).put(1, 0, 1, "c", "1", 0, 2).put(2, 0, 9, "a", "1", 0, 0)
	req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a"}}}
	h.op(3, 2, 3, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 3, Member: "m1", Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("a", "1", 3, 3, 1)}}}})
	h.op(4, 4, 5, etcdop.FRangeSerializable, req, &etcdop.KVResponse{Revision: 4, Member: "m2", Results: []etcdop.KVResult{{KVs: []etcdop.KV{kv("a", "1", 4, 4, 1)}}}})
	r := analysistest.RunChecker(t, "etcd-serializable", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Invalid || !slices.ContainsFunc(r.Findings, func(f analysis.Finding) bool { return f.Kind == "phantom-key" }) ||
		slices.ContainsFunc(r.Findings, func(f analysis.Finding) bool { return strings.HasPrefix(f.Kind, "watch-") }) {
		t.Fatalf("got %s %+v", r.Verdict, r.Findings)
	}
}
