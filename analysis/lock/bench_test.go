package lock

import (
	"context"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/simhistory"
)

// genLockRun is simhistory.Lock's run, in memory, and its pauses.
func genLockRun(n int) (analysis.Input, int) {
	in := analysis.Input{ResourceMode: "unfenced"}
	pauses := simhistory.Lock(n, func(op history.Op) { in.History = append(in.History, op) },
		func(e history.ResourceEntry) { in.Resource = append(in.Resource, e) })
	return in, pauses
}

func BenchmarkLockChecker1M(b *testing.B) {
	in, pauses := genLockRun(1_000_000)
	var r analysis.Result
	n := 0
	for b.Loop() { // generation above is outside the timer
		r = Checker{}.Check(context.Background(), in)
		n++
	}
	if r.Verdict != analysis.Invalid || r.Stats["mutual_exclusion_violations"] != pauses || r.Stats["stale_writes_accepted"] != pauses {
		b.Fatalf("verdict %s, stats %v; want invalid with %d overlaps and stale writes", r.Verdict, r.Stats, pauses)
	}
	b.ReportMetric(float64(n*len(in.History))/b.Elapsed().Seconds(), "entries/s")
}

// The generator's run must be judged as built: every pause found, nothing else.
func TestGenLockRun(t *testing.T) {
	in, pauses := genLockRun(200_000)
	for i, op := range in.History {
		if op.Index != i {
			t.Fatalf("entry %d has index %d", i, op.Index)
		}
	}
	r := Checker{}.Check(context.Background(), in)
	if pauses == 0 || r.FindingsTotal != 2*pauses || r.Stats["stale_writes_accepted"] != pauses {
		t.Errorf("%d pauses; verdict %s, %d findings, stats %v", pauses, r.Verdict, r.FindingsTotal, r.Stats)
	}
}
