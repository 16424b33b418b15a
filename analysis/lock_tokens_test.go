package analysis

import (
	"slices"
	"testing"

	"github.com/chaos-testing/chaos/history"
)

func TestTokensIncreasing(t *testing.T) {
	h := &hist{}
	for s, tk := range []int64{3, 7, 12} {
		at := float64(s)
		h.acquire(s%2, at, at+0.1, s+1, tok(tk))
		h.release(s%2, at+0.5, at+0.6, history.Ok, s+1)
	}
	r := check(t, h, nil, "fenced")
	if len(findingsOf(r, "token-order")) != 0 || r.Stats["tokens_strictly_increasing"] != true || r.Stats["tokens_seen"] != 3 {
		t.Fatalf("increasing tokens: findings %v, stats %v", r.Findings, r.Stats)
	}
}

func TestTokenNotGreaterThanAnEarlierGrant(t *testing.T) {
	h := &hist{}
	a := h.acquire(0, 0, 0.1, 1, tok(9))
	h.release(0, 0.5, 0.6, history.Ok, 1)
	h.add(1.0, 1, history.Invoke, history.FAcquire, history.LockValue{Lock: "l"})
	b := h.add(1.1, 1, history.Ok, history.FAcquire, history.LockValue{Lock: "l", Session: 1, Token: tok(9)})
	r := check(t, h, nil, "fenced")
	fs := findingsOf(r, "token-order")
	if len(fs) != 1 || r.Verdict != Invalid || r.Stats["tokens_strictly_increasing"] != false {
		t.Fatalf("repeated token: findings %v, verdict %s, stats %v", r.Findings, r.Verdict, r.Stats)
	}
	if got := opIndices(fs[0].Ops); !slices.Contains(got, a) || !slices.Contains(got, b) {
		t.Errorf("finding names %v; want both grants #%d and #%d", got, a, b)
	}
}

// A grant observed late (its holder was paused with the answer in flight)
// overlaps the newer grant in time: its lower token is no anomaly of the
// lock service, only of the holder's belief, which mutual exclusion judges.
func TestOverlappingGrantsAreNotCompared(t *testing.T) {
	h := &hist{}
	h.add(0, 0, history.Invoke, history.FAcquire, history.LockValue{Lock: "l"})
	h.acquire(1, 1, 1.1, 1, tok(8))
	h.release(1, 1.5, 1.6, history.Ok, 1)
	h.add(5, 0, history.Ok, history.FAcquire, history.LockValue{Lock: "l", Session: 1, Token: tok(5)})
	r := check(t, h, nil, "fenced")
	if len(findingsOf(r, "token-order")) != 0 || r.Stats["tokens_strictly_increasing"] != true {
		t.Fatalf("late-observed grant: findings %v, stats %v", r.Findings, r.Stats)
	}
}
