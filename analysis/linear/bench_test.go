package linear

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/simhistory"
)

// BenchmarkRegister1M checks a generated linearizable history of 1,000,000
// register operations (2,000,000 entries) on 1,000 keys from 10 clients with
// the cas-register checker. It reports the peak live heap, sampled during
// the check, the heap the history alone takes, and the memory the runtime
// got from the OS.
func BenchmarkRegister1M(b *testing.B) {
	ops := genRegisterRun(1_000_000, 1000, 10)
	checker, _ := analysis.Checkers.Lookup("cas-register")
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base) // the history itself, before the check
	peak, stop := sampleHeap()
	b.ResetTimer()
	var r analysis.Result
	for range b.N {
		r = checker.Check(context.Background(), analysis.Input{History: ops})
	}
	b.StopTimer()
	if r.Verdict != analysis.Valid {
		b.Fatalf("verdict %s, expected valid; notes %q, findings %d", r.Verdict, r.Notes, r.FindingsTotal)
	}
	stop()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(base[0].Value.Uint64())/(1<<20), "history-MiB")
	b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
	b.Logf("%d entries: %v", len(ops), r.Stats)
}

// sampleHeap records the largest live heap (heap objects) seen every 10ms
// until stop is called.
func sampleHeap() (*uint64, func()) {
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return &peak, func() { close(done); wg.Wait() }
}

// genRegisterRun is simhistory.Register's history, in memory.
func genRegisterRun(n, keys, clients int) []history.Op {
	ops := make([]history.Op, 0, 2*n)
	simhistory.Register(n, keys, clients, 0, func(op history.Op) { ops = append(ops, op) })
	return ops
}

// TestGenRegisterRun checks the generator on a small run: the history is
// well-formed and linearizable, as it is built to be.
func TestGenRegisterRun(t *testing.T) {
	ops := genRegisterRun(20_000, 50, 10)
	if len(ops) != 40_000 {
		t.Fatalf("%d entries, expected 40000", len(ops))
	}
	r := analysistest.RunChecker(t, "cas-register", analysis.Input{History: ops})
	if r.Verdict != analysis.Valid || r.Stats["open"] == 0 || r.Stats["dropped_fail"] == 0 {
		t.Fatalf("verdict %s, stats %v: expected valid, with info and fail ops", r.Verdict, r.Stats)
	}
}

// Porcupine's etcd model and parser, from its porcupine_test.go.
