// Line orders for generated histories. chaos judges its own histories by
// their recorded times, never by the order of their lines, so a generator
// writes the lines in an order that may differ from the order of times;
// each process's entries stay in its own order, as a process writes them
// one after another.

package randhistory

import (
	"cmp"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// Tick is the grain of generated times: coarse, so that entries of
// different processes often share an instant.
const Tick = time.Millisecond

// Interleave writes the processes' entries (lines[p] is one process's, in
// its order; it may be empty) into one history, taking each next entry
// from a process drawn from those with entries left, so that the order
// across processes is anything. Index is the line number.
func Interleave(r Rand, lines [][]history.Op) []history.Op {
	next := make([]int, len(lines))
	var h []history.Op
	for {
		var open []int // processes with entries left
		for p, l := range lines {
			if next[p] < len(l) {
				open = append(open, p)
			}
		}
		if len(open) == 0 {
			return numbered(h)
		}
		p := OneOf(r, open...)
		h = append(h, lines[p][next[p]])
		next[p]++
	}
}

// WrittenLate writes each entry 0 to 3 ticks after its time, as a process
// descheduled between stamping an entry and writing it would, and never
// before an earlier entry of its process. Entries written at one instant
// go in a random order of precedence of their processes. Index is the line
// number.
func WrittenLate(r Rand, lines [][]history.Op) []history.Op {
	type late struct {
		op              history.Op
		written         time.Duration
		rank, proc, seq int
	}
	var ls []late
	for p, l := range lines {
		var prev time.Duration
		rank := r.IntN(4)
		for i, op := range l {
			prev = max(prev, op.Time+time.Duration(r.IntN(4))*Tick)
			ls = append(ls, late{op, prev, rank, p, i})
		}
	}
	slices.SortFunc(ls, func(a, b late) int {
		return cmp.Or(cmp.Compare(a.written, b.written), cmp.Compare(a.rank, b.rank), cmp.Compare(a.proc, b.proc), cmp.Compare(a.seq, b.seq))
	})
	var h []history.Op
	for _, l := range ls {
		h = append(h, l.op)
	}
	return numbered(h)
}

// InterleavedOrLate is, at even odds, Interleave or WrittenLate.
func InterleavedOrLate(r Rand, lines [][]history.Op) []history.Op {
	if r.IntN(2) == 0 {
		return Interleave(r, lines)
	}
	return WrittenLate(r, lines)
}

// InTimeOrder sorts h by time, stably, so that each process's entries,
// whose times never decrease, keep their order. Index is the line number.
func InTimeOrder(h []history.Op) []history.Op {
	slices.SortStableFunc(h, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
	return numbered(h)
}

// numbered sets each entry's Index to its line number.
func numbered(h []history.Op) []history.Op {
	for i := range h {
		h[i].Index = i
	}
	return h
}
