package analysis

import (
	"container/heap"
	"context"
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// BenchmarkRegister1M checks a generated linearizable history of 1,000,000
// register operations (2,000,000 entries) on 1,000 keys from 10 clients with
// the cas-register checker. It reports the peak live heap, sampled during
// the check, the heap the history alone takes, and the memory the runtime
// got from the OS.
func BenchmarkRegister1M(b *testing.B) {
	ops := genRegisterRun(1_000_000, 1000, 10)
	checker, _ := Checkers.Lookup("cas-register")
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base) // the history itself, before the check
	peak, stop := sampleHeap()
	b.ResetTimer()
	var r Result
	for range b.N {
		r = checker.Check(context.Background(), Input{History: ops})
	}
	b.StopTimer()
	if r.Verdict != Valid {
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

// genRegisterRun simulates n operations of clients on a linearizable store
// (seeded, so always the same history): each takes effect at a random point
// between its invocation and completion. As in the register workload, the
// clients contend on 3 keys at a time, moving on every 3,000 operations, so
// every one of the keys gets a burst of ~n/keys operations. Cas is a fail
// when its compare does not match; 0.1% of writes and cases time out (info,
// taking effect or not at random) and the client is replaced by a new
// process, as Jepsen does; 0.1% of reads fail.
func genRegisterRun(n, keys, clients int) []history.Op {
	rng := rand.New(rand.NewPCG(1, 1))
	store := map[string]int{} // key -> value; absent if missing
	ops := make([]history.Op, 0, 2*n)
	q := &eventQueue{}
	type pending struct {
		f                   string
		v                   history.RegisterValue
		typ                 history.Type
		applyTime, doneTime time.Duration
	}
	inFlight := make([]pending, clients)
	procs := make([]int, clients)
	for c := range clients {
		procs[c] = c
		heap.Push(q, event{t: time.Duration(rng.IntN(1000)) * time.Microsecond, client: c})
	}
	started := 0
	emit := func(t time.Duration, c int, typ history.Type, f string, v history.RegisterValue) {
		ops = append(ops, history.Op{Index: len(ops), Time: t, Type: typ, Process: procs[c], F: f, Value: history.MustValue(v)})
	}
	num := func(v int) json.RawMessage { return json.RawMessage(strconv.Itoa(v)) }
	for q.Len() > 0 {
		e := heap.Pop(q).(event)
		c := e.client
		p := &inFlight[c]
		switch e.phase {
		case 0: // invoke
			if started == n {
				continue
			}
			burst := started / 3000
			key := "r" + strconv.Itoa((burst*3+rng.IntN(3))%keys)
			started++
			*p = pending{typ: history.Ok}
			switch r := rng.IntN(4); {
			case r < 2:
				p.f, p.v = history.FRead, history.RegisterValue{Key: key}
			case r == 2:
				p.f, p.v = history.FWrite, history.RegisterValue{Key: key, Value: num(rng.IntN(5))}
			default:
				p.f, p.v = history.FCas, history.RegisterValue{Key: key, From: num(rng.IntN(5)), To: num(rng.IntN(5))}
			}
			emit(e.t, c, history.Invoke, p.f, p.v)
			lat := time.Duration(500+rng.IntN(10_000)) * time.Microsecond
			p.applyTime = e.t + time.Duration(rng.Int64N(int64(lat)))
			p.doneTime = e.t + lat
			heap.Push(q, event{t: p.applyTime, client: c, phase: 1})
		case 1: // take effect
			cur, exists := store[p.v.Key]
			timedOut := p.f != history.FRead && rng.IntN(1000) == 0
			apply := !timedOut || rng.IntN(2) == 0
			switch p.f {
			case history.FRead:
				p.v.Value = json.RawMessage("null")
				if exists {
					p.v.Value = num(cur)
				}
				if rng.IntN(1000) == 0 {
					p.typ = history.Fail
				}
			case history.FWrite:
				if apply {
					store[p.v.Key], _ = strconv.Atoi(string(p.v.Value))
				}
			case history.FCas:
				from, _ := strconv.Atoi(string(p.v.From))
				switch {
				case !exists || cur != from:
					p.typ = history.Fail
				case apply:
					store[p.v.Key], _ = strconv.Atoi(string(p.v.To))
				}
			}
			if timedOut {
				p.typ = history.Info
			}
			heap.Push(q, event{t: p.doneTime, client: c, phase: 2})
		case 2: // complete
			emit(e.t, c, p.typ, p.f, p.v)
			if p.typ == history.Info {
				procs[c] += clients // the process is dead; a new one takes its place
			}
			heap.Push(q, event{t: e.t + time.Duration(rng.IntN(200))*time.Microsecond, client: c})
		}
	}
	return ops
}

type event struct {
	t      time.Duration
	client int
	phase  int // 0 invoke, 1 take effect, 2 complete
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].client < q[j].client
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// TestGenRegisterRun checks the generator on a small run: the history is
// well-formed and linearizable, as it is built to be.
func TestGenRegisterRun(t *testing.T) {
	ops := genRegisterRun(20_000, 50, 10)
	if len(ops) != 40_000 {
		t.Fatalf("%d entries, expected 40000", len(ops))
	}
	r := runChecker(t, "cas-register", Input{History: ops})
	if r.Verdict != Valid || r.Stats["open"] == 0 || r.Stats["dropped_fail"] == 0 {
		t.Fatalf("verdict %s, stats %v: expected valid, with info and fail ops", r.Verdict, r.Stats)
	}
}

// Porcupine's etcd model and parser, from its porcupine_test.go.
