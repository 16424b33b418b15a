package oracle

import (
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// RandomMutexHistory draws a small history for the mutex model: 1 to 4
// processes and at most 8 operations, each process mostly alternating
// acquire and release (sometimes not), each operation ending ok, fail, info
// or never (the process's last). Values are shaped as the EDN reader or
// chaos's lock workload make them: none at all, or a lockop.Value
// naming one lock or, now and then, one of two. Lines are out of time order
// across processes as in the lock oracle's RandomLockHistory; or, as in an
// EDN file, in order with each entry's time its position.
func RandomMutexHistory(r randhistory.Rand) []history.Op {
	procs := 1 + r.IntN(4)
	budget := 1 + r.IntN(8)
	locks := randhistory.OneOf(r, nil, []string{"l"}, []string{"l", "m"})
	lines := make([][]history.Op, procs)
	clocks := make([]time.Duration, procs)
	holding := make([]bool, procs)
	done := make([]bool, procs) // stopped with an operation never completed
	for p := range clocks {
		clocks[p] = time.Duration(r.IntN(3)) * randhistory.Tick
	}
	emit := func(p int, typ history.Type, f string, v any) {
		clocks[p] += time.Duration(r.IntN(3)) * randhistory.Tick
		op := history.Op{Time: clocks[p], Type: typ, Process: p, F: f}
		if v != nil {
			op.Value = history.MustValue(v)
		}
		lines[p] = append(lines[p], op)
	}
	for range budget {
		p := r.IntN(procs)
		if done[p] {
			continue
		}
		f := lockop.FAcquire
		if holding[p] != (r.IntN(5) == 0) {
			f = lockop.FRelease
		}
		var v any
		if locks != nil {
			v = lockop.Value{Lock: randhistory.OneOf(r, locks...)}
		}
		emit(p, history.Invoke, f, v)
		out := randhistory.AnyOutcome(r)
		if out == "" {
			done[p] = true
			continue
		}
		emit(p, out, f, v)
		if out == history.Ok {
			holding[p] = f == lockop.FAcquire
		}
	}
	h := randhistory.InterleavedOrLate(r, lines)
	if r.IntN(4) == 0 { // an EDN file: real time is file order
		h = randhistory.InTimeOrder(h)
		for i := range h {
			h[i].Time = time.Duration(i)
		}
	}
	return h
}
