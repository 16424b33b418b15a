package txn

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/txnop"
)

// simTxn is one transaction of a simulated run.
type simTxn struct {
	process          int
	inv, commit, end time.Duration
	outcome          history.Type
	steps            []step
}

// Simulated run parameters: like chaos's list-append workload, clients
// read or append (half and half) 1 to 4 times per transaction on the keys
// of the current key period.
const (
	simProcesses = 10
	simKeys      = 8
	simPeriod    = 50 * time.Millisecond
)

// genSimHistory simulates n list-append transactions by concurrent clients
// of a strict-serializable database: each takes effect atomically at a
// moment between its invocation and completion. Some fail (and take no
// effect), some time out (info: half of those took effect). A fraction
// stale of the reads then misses the last few appends, as from a lagging
// replica.
func genSimHistory(n int, seed uint64, stale float64) []history.Op {
	rng := rand.New(rand.NewPCG(seed, seed))
	txns := make([]simTxn, n)
	clock := make([]time.Duration, simProcesses)
	value := 0
	for i := range txns {
		p := i % simProcesses
		tx := &txns[i]
		tx.process = p
		tx.inv = clock[p] + time.Duration(rng.IntN(500))*time.Microsecond
		tx.commit = tx.inv + time.Duration(100+rng.IntN(2000))*time.Microsecond
		tx.end = tx.commit + time.Duration(100+rng.IntN(2000))*time.Microsecond
		clock[p] = tx.end + time.Microsecond
		switch x := rng.IntN(100); {
		case x < 3:
			tx.outcome = history.Fail
		case x < 5:
			tx.outcome = history.Info
		default:
			tx.outcome = history.Ok
		}
		period := int(tx.inv / simPeriod)
		for range 1 + rng.IntN(4) {
			k := period*simKeys + rng.IntN(simKeys)
			if rng.IntN(2) == 0 {
				value++
				tx.steps = append(tx.steps, appendTo(k, value))
			} else {
				tx.steps = append(tx.steps, step{f: "r", key: k})
			}
		}
	}
	// Run the transactions that take effect in commit order.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(txns[a].commit, txns[b].commit) })
	lists := map[int][]int{}
	for _, i := range order {
		tx := &txns[i]
		if tx.outcome == history.Fail || tx.outcome == history.Info && rng.IntN(2) == 0 {
			continue
		}
		for j, s := range tx.steps {
			k := s.key.(int)
			if s.f == "append" {
				lists[k] = append(lists[k], s.value.(int))
			} else {
				l := slices.Clip(lists[k])
				if rng.Float64() < stale {
					l = l[:max(0, len(l)-1-rng.IntN(3))]
				}
				tx.steps[j].value = l
			}
		}
	}
	ops := make([]history.Op, 0, 2*n)
	for _, tx := range txns {
		ops = append(ops, history.Op{Time: tx.inv, Type: history.Invoke, Process: tx.process, F: txnop.FTxn, Value: encodeSim(tx.steps, false)},
			history.Op{Time: tx.end, Type: tx.outcome, Process: tx.process, F: txnop.FTxn, Value: encodeSim(tx.steps, tx.outcome == history.Ok)})
	}
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}

// encodeSim writes steps as encodeSteps does, without reflection: a
// million transactions take a while to marshal.
func encodeSim(steps []step, done bool) []byte {
	b := []byte{'['}
	for i, s := range steps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `["`...)
		b = append(b, s.f...)
		b = append(b, `",`...)
		b = strconv.AppendInt(b, int64(s.key.(int)), 10)
		b = append(b, ',')
		switch v := s.value.(type) {
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case []int:
			if !done {
				b = append(b, "null"...)
				break
			}
			b = append(b, '[')
			for j, e := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(e), 10)
			}
			b = append(b, ']')
		default:
			b = append(b, "null"...)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// TestGeneratedHistoryValid: the simulated strict-serializable database's
// history holds no anomaly, and a stale read planted in it is caught.
func TestGeneratedHistoryValid(t *testing.T) {
	h := genSimHistory(20_000, 7, 0)
	r := ListAppend{}.Check(context.Background(), analysis.Input{History: h})
	if r.Verdict != analysis.Valid || r.FindingsTotal != 0 {
		t.Fatalf("verdict %s, anomalies %v, notes %q", r.Verdict, kinds(r), r.Notes)
	}
	t.Logf("stats %v", r.Stats)
	// Make a read that saw a long list see an empty one: it then missed
	// appends that completed before it began.
	for i := len(h) / 2; i < len(h); i++ {
		if op := &h[i]; op.Type == history.Ok && bytes.HasPrefix(op.Value, []byte(`[["r",`)) {
			steps, err := parseMops(op.Value, nil)
			if err != nil || len(steps) != 1 || bytes.Count(steps[0].value, []byte(",")) < 10 {
				continue
			}
			op.Value = []byte(`[["r",` + string(steps[0].key) + `,[]]]`)
			t.Logf("#%d now reads key %s as []", op.Index, steps[0].key)
			break
		}
	}
	r = ListAppend{}.Check(context.Background(), analysis.Input{History: h})
	if r.Verdict != analysis.Invalid {
		t.Fatalf("verdict %s, anomalies %v", r.Verdict, kinds(r))
	}
	t.Logf("anomalies %v", kinds(r))
}

// BenchmarkListAppend checks simulated valid histories of 10k, 100k and
// 1M transactions. peak-heap-MiB is the most heap in use while checking,
// history included (history-MiB of it).
func BenchmarkListAppend(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := genSimHistory(n, 1, 0)
			runtime.GC()
			base := heapInUse()
			peak := watchHeap()
			for b.Loop() {
				if r := (ListAppend{}).Check(context.Background(), analysis.Input{History: h}); r.Verdict != analysis.Valid {
					b.Fatalf("verdict %s: %v %q", r.Verdict, kinds(r), r.Notes)
				}
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(base)/(1<<20), "history-MiB")
		})
	}
}

func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// watchHeap samples the heap in use every millisecond until the returned
// function is called, which reports the most seen.
func watchHeap() func() uint64 {
	var (
		mu   sync.Mutex
		peak uint64
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			h := heapInUse()
			mu.Lock()
			peak = max(peak, h)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
