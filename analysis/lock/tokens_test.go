package lock

import (
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

func TestTokensIncreasing(t *testing.T) {
	h := &hist{}
	for s, tk := range []int64{3, 7, 12} {
		at := float64(s)
		h.acquire(s%2, at, at+0.1, s+1, tok(tk))
		h.release(s%2, at+0.5, at+0.6, history.Ok, s+1)
	}
	r := check(t, h, nil, "fenced")
	if len(analysistest.FindingsOf(r, "token-order")) != 0 || r.Stats["tokens_strictly_increasing"] != true || r.Stats["tokens_seen"] != 3 {
		t.Fatalf("increasing tokens: findings %v, stats %v", r.Findings, r.Stats)
	}
}

func TestTokenNotGreaterThanAnEarlierGrant(t *testing.T) {
	h := &hist{}
	a := h.acquire(0, 0, 0.1, 1, tok(9))
	h.release(0, 0.5, 0.6, history.Ok, 1)
	h.Entry(1.0, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
	b := h.Entry(1.1, 1, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: 1, Token: tok(9)})
	r := check(t, h, nil, "fenced")
	fs := analysistest.FindingsOf(r, "token-order")
	if len(fs) != 1 || r.Verdict != analysis.Invalid || r.Stats["tokens_strictly_increasing"] != false {
		t.Fatalf("repeated token: findings %v, verdict %s, stats %v", r.Findings, r.Verdict, r.Stats)
	}
	if got := analysistest.Indices(fs[0].Ops); !slices.Contains(got, a) || !slices.Contains(got, b) {
		t.Errorf("finding names %v; want both grants #%d and #%d", got, a, b)
	}
}

// A grant observed late (its holder was paused with the answer in flight)
// overlaps the newer grant in time: its lower token is no anomaly of the
// lock service, only of the holder's belief, which mutual exclusion judges.
func TestOverlappingGrantsAreNotCompared(t *testing.T) {
	h := &hist{}
	h.Entry(0, 0, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
	h.acquire(1, 1, 1.1, 1, tok(8))
	h.release(1, 1.5, 1.6, history.Ok, 1)
	h.Entry(5, 0, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: 1, Token: tok(5)})
	r := check(t, h, nil, "fenced")
	if len(analysistest.FindingsOf(r, "token-order")) != 0 || r.Stats["tokens_strictly_increasing"] != true {
		t.Fatalf("late-observed grant: findings %v, stats %v", r.Findings, r.Stats)
	}
}

// etcd create revisions and ZooKeeper sequence numbers name one grant each:
// two grants with one token are a finding even when they overlap in time.
func TestEqualTokensOfOverlappingGrants(t *testing.T) {
	h := &hist{}
	a := h.acquire(0, 0, 0.1, 1, tok(9))
	h.Entry(0.05, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
	h.release(0, 0.5, 0.6, history.Ok, 1)
	b := h.Entry(0.2, 1, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: 1, Token: tok(9)})
	r := check(t, h, nil, "fenced")
	fs := analysistest.FindingsOf(r, "token-order")
	if len(fs) != 1 || r.Verdict != analysis.Invalid || r.Stats["tokens_strictly_increasing"] != false {
		t.Fatalf("one token for two overlapping grants: findings %v, verdict %s, stats %v", r.Findings, r.Verdict, r.Stats)
	}
	if got := analysistest.Indices(fs[0].Ops); !slices.Contains(got, a) || !slices.Contains(got, b) || !strings.Contains(fs[0].Explanation, "same token") {
		t.Errorf("finding %q names %v; want both grants #%d and #%d, and the same token", fs[0].Explanation, got, a, b)
	}
}

// One grant reported twice (the same process and session, with its token)
// is not two grants, however much later the second report comes, and even
// when a higher token was granted in between.
func TestGrantReportedTwice(t *testing.T) {
	h := &hist{}
	h.acquire(0, 0, 0.1, 1, tok(5))
	h.release(0, 0.5, 0.6, history.Ok, 1)
	h.acquire(1, 1, 1.1, 1, tok(7))
	h.release(1, 1.5, 1.6, history.Ok, 1)
	h.acquire(0, 2, 2.1, 1, tok(5))
	h.release(0, 2.5, 2.6, history.Ok, 1)
	r := check(t, h, nil, "fenced")
	if r.Verdict != analysis.Valid || r.Stats["tokens_seen"] != 2 {
		t.Fatalf("a grant reported twice: findings %v, stats %v", r.Findings, r.Stats)
	}
}
