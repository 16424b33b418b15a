package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// genLockRun makes a deterministic lock run of exactly n history entries
// and its resource log: 10 clients taking turns, some acquires failing under
// contention, and every pauseEvery-th cycle a holder paused past its lease
// while another client takes the lock and writes, after which the paused
// one writes too (accepted: the resource is unfenced). It returns the run
// and how many such pauses it holds, each one overlap and one stale write.
func genLockRun(n int) (Input, int) {
	const (
		clients    = 10
		pauseEvery = 5000
		lease      = 10 * time.Second
	)
	rng := rand.New(rand.NewPCG(1, 2))
	ops := make([]history.Op, 0, n+16)
	var res []history.ResourceEntry
	sessions := make([]int, clients)
	var t time.Duration
	add := func(proc int, typ history.Type, f string, v any) {
		t += time.Duration(100+rng.IntN(900)) * time.Microsecond
		ops = append(ops, history.Op{Time: t, Type: typ, Process: proc, F: f, Value: history.MustValue(v)})
	}
	acquire := func(c int) int {
		add(c, history.Invoke, history.FAcquire, history.LockValue{Lock: "l"})
		sessions[c]++
		add(c, history.Ok, history.FAcquire, history.LockValue{Lock: "l", Session: sessions[c]})
		return sessions[c]
	}
	write := func(c, s int) {
		v := history.WriteValue{Key: "k", Value: fmt.Sprintf("c%d-%d", c, s), Session: s}
		add(c, history.Invoke, history.FWrite, v)
		res = append(res, history.ResourceEntry{Time: t, Client: c, Key: "k", Value: v.Value, Session: s, Accepted: true, Line: len(res) + 1})
		add(c, history.Ok, history.FWrite, v)
	}
	release := func(c, s int, typ history.Type) {
		add(c, history.Invoke, history.FRelease, history.LockValue{Lock: "l", Session: s})
		add(c, typ, history.FRelease, history.LockValue{Lock: "l", Session: s})
	}
	pauses := 0
	for cycle := 1; len(ops) < n; cycle++ {
		c := rng.IntN(clients)
		other := (c + 1 + rng.IntN(clients-1)) % clients
		s := acquire(c)
		if cycle%pauseEvery == 0 {
			pauses++
			add(history.Nemesis, history.Info, "pause-start", map[string]int{"process": c})
			t += lease
			s2 := acquire(other)
			write(other, s2)
			release(other, s2, history.Ok)
			add(history.Nemesis, history.Info, "pause-end", map[string]int{"process": c})
			write(c, s)
			release(c, s, history.Fail)
			continue
		}
		if rng.IntN(5) == 0 { // contention: another client is turned away
			add(other, history.Invoke, history.FAcquire, history.LockValue{Lock: "l"})
			add(other, history.Fail, history.FAcquire, history.LockValue{Lock: "l"})
		}
		write(c, s)
		release(c, s, history.Ok)
	}
	ops = ops[:n] // the cut leaves an unfinished cycle, as a stopped run does
	// Files are only roughly time-ordered across processes: swap a few
	// neighbours of different processes (each process's order is kept).
	for i := 1; i < len(ops); i++ {
		if ops[i].Process != ops[i-1].Process && rng.IntN(20) == 0 {
			ops[i], ops[i-1] = ops[i-1], ops[i]
		}
	}
	for i := range ops {
		ops[i].Index = i
	}
	return Input{History: ops, Resource: res, ResourceMode: "unfenced"}, pauses
}

func BenchmarkLockChecker1M(b *testing.B) {
	in, pauses := genLockRun(1_000_000)
	var r Result
	n := 0
	for b.Loop() { // generation above is outside the timer
		r = LockChecker{}.Check(context.Background(), in)
		n++
	}
	if r.Verdict != Invalid || r.Stats["mutual_exclusion_violations"] != pauses || r.Stats["stale_writes_accepted"] != pauses {
		b.Fatalf("verdict %s, stats %v; want invalid with %d overlaps and stale writes", r.Verdict, r.Stats, pauses)
	}
	b.ReportMetric(float64(n*len(in.History))/b.Elapsed().Seconds(), "entries/s")
}

// The generator's run must be judged as built: every pause found, nothing else.
func TestGenLockRun(t *testing.T) {
	in, pauses := genLockRun(200_000)
	r := LockChecker{}.Check(context.Background(), in)
	if pauses == 0 || r.FindingsTotal != 2*pauses || r.Stats["stale_writes_accepted"] != pauses {
		t.Errorf("%d pauses; verdict %s, %d findings, stats %v", pauses, r.Verdict, r.FindingsTotal, r.Stats)
	}
}
