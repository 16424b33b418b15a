package etcd

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/linear"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// BenchmarkEtcdKV100k checks one history of 100,000 puts and gets on 10
// keys, about five in flight at once, answers drawn from a true store:
// with the etcd-kv model (revisions; decided by revision order) and, on
// the same operations seen as registers, with porcupine's cas-register
// model, key by key. Run with -benchtime 1x: each iteration is a check.
func BenchmarkEtcdKV100k(b *testing.B) {
	kvOps, regOps := etcdPutGetHistory(rand.New(rand.NewPCG(1, 2)), 100000, 10)
	for _, c := range []struct {
		name, checker string
		ops           []history.Op
	}{{"etcd-kv", "etcd-kv", kvOps}, {"register", "cas-register", regOps}} {
		b.Run(c.name, func(b *testing.B) {
			chk, _ := analysis.Checkers.Lookup(c.checker)
			lc := chk.(linear.Checker)
			lc.TimeLimit = 10 * time.Minute
			for range b.N {
				if r := lc.Check(context.Background(), analysis.Input{History: c.ops}); r.Verdict != analysis.Valid {
					b.Fatalf("%s: %s %v", c.checker, r.Verdict, r.Notes)
				}
			}
		})
	}
}

// etcdPutGetHistory draws n puts and single-key gets, linearized at points
// 10 apart, each invoked and completed up to 25 from its point, as the
// etcd-kv workload records them and as register operations.
func etcdPutGetHistory(rng *rand.Rand, n, keys int) (kv, reg []history.Op) {
	s := newEtcdState(1, map[string]etcdKey{}, map[int64]bool{})
	type timed struct{ kv, reg history.Op }
	var entries []timed
	for i := range n {
		key := fmt.Sprintf("k%d", rng.IntN(keys))
		f, rf := etcdop.FPut, registerop.FWrite
		req := etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: fmt.Sprint(i)}}}
		rv := registerop.Value{Key: key, Value: json.RawMessage(fmt.Sprint(i))}
		if rng.IntN(2) == 0 {
			f, rf = etcdop.FRange, registerop.FRead
			req = etcdop.KVRequest{Then: []etcdop.KVOp{{F: etcdop.FRange, Key: key}}}
		}
		resp := etcdAnswer(s, f, &req)
		s = etcdApply(s, f, &req)
		done := rv
		if f == etcdop.FRange {
			rv.Value, done.Value = nil, json.RawMessage("null")
			if kvs := resp.Results[0].KVs; len(kvs) > 0 {
				done.Value = json.RawMessage(kvs[0].Value)
			}
		}
		point := time.Duration(100 + 10*i)
		call, ret := point-time.Duration(rng.IntN(26)), point+time.Duration(rng.IntN(26))
		entries = append(entries,
			timed{history.Op{Time: call, Type: history.Invoke, Process: i, F: f, Value: history.MustValue(req)},
				history.Op{Time: call, Type: history.Invoke, Process: i, F: rf, Value: history.MustValue(rv)}},
			timed{history.Op{Time: ret, Type: history.Ok, Process: i, F: f, Value: history.MustValue(resp)},
				history.Op{Time: ret, Type: history.Ok, Process: i, F: rf, Value: history.MustValue(done)}})
	}
	slices.SortStableFunc(entries, func(a, b timed) int { return int(a.kv.Time - b.kv.Time) })
	for i, e := range entries {
		e.kv.Index, e.reg.Index = i, i
		kv, reg = append(kv, e.kv), append(reg, e.reg)
	}
	return kv, reg
}
