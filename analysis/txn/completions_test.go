package txn

import (
	"testing"

	"github.com/chaos-testing/chaos/history"
)

// done adds a completion with no invocation, as Elle's own tests and many
// users' files write histories.
func (h *hist) done(p int, at float64, typ history.Type, steps ...step) int {
	return h.add(p, at, typ, encodeSteps(steps, typ == history.Ok))
}

// A history of completions only is judged as Elle judges it: each ok
// completion is a committed transaction. Here T1 appends 1 to x and reads
// y's 1, T2 appends 1 to y and reads x's 1: a G1c cycle (wr both ways).
func TestCompletionsOnly(t *testing.T) {
	var h hist
	h.done(0, 1, history.Ok, appendTo("x", 1), readList("y", 1))
	h.done(1, 2, history.Ok, appendTo("y", 1), readList("x", 1))
	expectKinds(t, run(t, "list-append", &h), "G1c")
}

// Real-time edges come only from what is there: a completion with no
// invocation is not known to follow anything, so nothing precedes it in
// real time; it precedes the transactions invoked after it. Elle's
// realtime-graph links each completed transaction to the completions of
// later invocations.
func TestCompletionsRealtime(t *testing.T) {
	var h hist
	// T1 reads x empty, alone: it may have run before T2's append, which
	// has no invocation, so no stale read.
	h.done(0, 1, history.Ok, appendTo("x", 1))
	h.tx(1, 0, 2, history.Ok, readList("x"))
	expectKinds(t, run(t, "list-append", &h))
	// T3 is invoked after T1's completion and reads x empty: stale
	// (G-single-item-realtime, as Elle says).
	h.tx(2, 3, 4, history.Ok, readList("x"))
	expectKinds(t, run(t, "list-append", &h), "G-single-item-realtime")
}
