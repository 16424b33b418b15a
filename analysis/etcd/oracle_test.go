package etcd

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/linear"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// TestOracleEtcdOrder cross-checks the etcd-kv model's check by revision
// order against porcupine's search with the same model, on random small
// histories of concurrent operations: answers drawn from a true store at
// random linearization points, one answer in two then altered (a
// revision, a value, a branch, a count).
func TestOracleEtcdOrder(t *testing.T) {
	n := analysistest.OracleN(t, 10000)
	start := time.Now()
	tally := map[string]int{}
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 0xe7cd))
		h, altered := randomEtcdHistory(rng)
		spec, err := prepareEtcd(analysis.Input{History: h})
		if err != nil {
			t.Fatal(err)
		}
		sc := linear.ScanHistory(h, etcdKVModel(), spec)
		if sc.Bad.N > 0 {
			t.Fatalf("history %d: %v", i, sc.Bad.First)
		}
		f, decided := spec.Direct(h, sc.Parts[0])
		if !decided {
			tally["left to porcupine"]++
			continue
		}
		legal := porcupine.CheckOperations(spec.Model, sc.Parts[0].Ops)
		if !altered && !legal {
			t.Fatalf("history %d: answers drawn from a true store, yet illegal\n%s", i, dumpOps(h))
		}
		if legal != (f == nil) {
			t.Fatalf("history %d (rand.NewPCG(%d, 0xe7cd)): by revision order %v, porcupine legal %t\n%s", i, i, f, legal, dumpOps(h))
		}
		tally[map[bool]string{true: "valid", false: "invalid"}[legal]]++
	}
	t.Logf("%d histories agree in %s: %v", n, time.Since(start).Round(time.Millisecond), tally)
}

// randomEtcdHistory draws a lease grant and up to 8 operations on two
// keys, each its own process, linearized in order at points 10 apart, each
// invoked up to 25 before its point and completed up to 25 after it;
// altered says whether an answer was altered.
func randomEtcdHistory(rng *rand.Rand) (h []history.Op, altered bool) {
	s := newEtcdState(1, map[string]etcdKey{}, map[int64]bool{})
	type timed struct {
		at  time.Duration
		op  history.Op
		seq int
	}
	var entries []timed
	n := 1 + rng.IntN(8)
	alter := -1
	if rng.IntN(2) == 0 {
		alter = 1 + rng.IntN(n)
	}
	for i := range n + 1 {
		key := []string{"a", "b"}[rng.IntN(2)]
		var f string
		var req etcdop.KVRequest
		kind := rng.IntN(6)
		if i == 0 {
			kind = -1
		}
		switch kind {
		case -1:
			f, req = etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 600}
		case 0:
			f, req = etcdop.FPut, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: fmt.Sprint(i)}}}
		case 1:
			f, req = etcdop.FDelete, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FDelete, Key: key}}}
		case 2:
			f, req = etcdop.FRange, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: "a", End: "c"}}}
		case 3:
			f, req = etcdop.FKVTxn, etcdop.KVRequest{
				If:   []etcdop.KVCompare{{Key: key, Target: etcdop.CompareCreate, Rev: int64(rng.IntN(2) * int(s.rev))}},
				Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: fmt.Sprint(i)}},
				Else: []etcdop.KVOp{{F: etcdop.FRange, Key: key}},
			}
		case 4:
			// Several operations on both keys, without conditions.
			other := map[string]string{"a": "b", "b": "a"}[key]
			second := []etcdop.KVOp{{F: etcdop.FRange, Key: other}, {F: etcdop.FDelete, Key: other}, {F: etcdop.FPut, Key: other, Value: fmt.Sprint(-i)}}[rng.IntN(3)]
			f, req = etcdop.FKVTxn, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: fmt.Sprint(i)}, second}}
		default:
			f, req = etcdop.FPut, etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: fmt.Sprint(i), Lease: 7}}}
		}
		var resp *etcdop.KVResponse
		if f == etcdop.FLeaseGrant {
			resp = &etcdop.KVResponse{Revision: s.rev, Lease: 7}
			s = newEtcdState(s.rev, s.keys, map[int64]bool{7: true})
		} else {
			resp = etcdAnswer(s, f, &req)
			s = etcdApply(s, f, &req)
		}
		if i == alter {
			altered = true
			switch rng.IntN(3) {
			case 0:
				resp.Revision += int64(rng.IntN(3)) - 1
			case 1:
				resp.Succeeded = !resp.Succeeded
			default:
				if len(resp.Results) > 0 && len(resp.Results[0].KVs) > 0 {
					resp.Results[0].KVs = resp.Results[0].KVs[1:]
				} else if len(resp.Results) > 0 {
					resp.Results[0].Deleted = 1 - resp.Results[0].Deleted
				}
			}
		}
		point := time.Duration(100 + 10*i)
		inv := history.Op{Time: point - time.Duration(rng.IntN(26)), Type: history.Invoke, Process: i, F: f, Value: history.MustValue(req)}
		done := history.Op{Time: point + time.Duration(rng.IntN(26)), Type: history.Ok, Process: i, F: f, Value: history.MustValue(resp)}
		entries = append(entries, timed{inv.Time, inv, 2 * i}, timed{done.Time, done, 2*i + 1})
	}
	// Line order is time order here; the checkers read times, not lines.
	for i := range entries {
		for j := i + 1; j < len(entries); j++ {
			if entries[j].at < entries[i].at || entries[j].at == entries[i].at && entries[j].seq < entries[i].seq {
				entries[i], entries[j] = entries[j], entries[i]
			}
		}
	}
	h = make([]history.Op, len(entries))
	for i, e := range entries {
		h[i] = e.op
		h[i].Index = i
	}
	return h, altered
}

// etcdAnswer is what etcd answers f on store s; etcdApply the store after.
func etcdAnswer(s *etcdState, f string, req *etcdop.KVRequest) *etcdop.KVResponse {
	next := etcdApply(s, f, req)
	ops := req.Then
	succeeded := true
	for _, c := range req.If {
		succeeded = succeeded && s.holds(c)
	}
	if !succeeded {
		ops = req.Else
	}
	_, results, _ := s.apply(ops)
	return &etcdop.KVResponse{Revision: next.rev, Succeeded: succeeded, Results: results}
}

func etcdApply(s *etcdState, f string, req *etcdop.KVRequest) *etcdState {
	ok, next := etcdStep(s, etcdIn{f: f, req: req}, etcdOut{})
	if !ok {
		panic("a step of unknown outcome is always legal")
	}
	return next
}

func dumpOps(h []history.Op) string {
	s := ""
	for _, o := range h {
		s += o.String() + "\n"
	}
	return s
}
