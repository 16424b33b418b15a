package lock

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// hist builds lock histories.
type hist struct{ analysistest.History }

// acquire adds a successful acquire and returns the index of its ok.
func (h *hist) acquire(proc int, inv, ok float64, session int, token *int64) int {
	h.Entry(inv, proc, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
	return h.Entry(ok, proc, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: session, Token: token})
}

// write adds a write and its completion and returns their indices.
func (h *hist) write(proc int, inv, done float64, typ history.Type, value string, session int, token *int64) (int, int) {
	v := lockop.WriteValue{Key: "k", Value: value, Session: session, Token: token}
	return h.Entry(inv, proc, history.Invoke, lockop.FWrite, v), h.Entry(done, proc, typ, lockop.FWrite, v)
}

// release adds a release and its completion and returns the invoke's index.
func (h *hist) release(proc int, inv, done float64, typ history.Type, session int) int {
	i := h.Entry(inv, proc, history.Invoke, lockop.FRelease, lockop.Value{Lock: "l", Session: session})
	h.Entry(done, proc, typ, lockop.FRelease, lockop.Value{Lock: "l", Session: session})
	return i
}

func tok(n int64) *int64 { return &n }

func accepted(line, client, session int, value string, ok bool) history.ResourceEntry {
	return history.ResourceEntry{Line: line, Client: client, Key: "k", Value: value, Session: session, Accepted: ok}
}

func check(t *testing.T, h *hist, res []history.ResourceEntry, mode string) analysis.Result {
	t.Helper()
	r := Checker{}.Check(context.Background(), analysis.Input{History: h.Ops, Resource: res, ResourceMode: mode})
	for _, f := range r.Findings[:min(len(r.Findings), 3)] {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	return r
}

func TestLockCleanSequential(t *testing.T) {
	h := &hist{}
	for s := 1; s <= 3; s++ {
		for p := range 3 {
			base := float64(s*10 + p*3)
			h.acquire(p, base, base+0.1, s, nil)
			h.write(p, base+0.2, base+0.3, history.Ok, "v", s, nil)
			h.release(p, base+0.4, base+0.5, history.Ok, s)
		}
	}
	r := check(t, h, nil, "")
	if r.Verdict != analysis.Valid || r.FindingsTotal != 0 {
		t.Fatalf("verdict %s, %d findings; want valid, none", r.Verdict, r.FindingsTotal)
	}
	if r.Stats["acquires_ok"] != 9 || r.Stats["holds"] != 9 || r.Stats["writes_ok"] != 9 {
		t.Errorf("stats %v", r.Stats)
	}
	if got := r.Stats["hold_time_max_s"].(float64); got < 0.299 || got > 0.301 {
		t.Errorf("hold_time_max_s = %v, want 0.3 (ok to release invoke)", got)
	}
}

// redlockPause: p0 acquires, is paused past its lease, p1 acquires, writes
// and releases; p0 resumes, its write is accepted, its release fails. Entries
// are listed slightly out of time order across processes, as in a real file.
func redlockPause(t0, t1 *int64) (h *hist, ix map[string]int) {
	h, ix = &hist{}, map[string]int{}
	ix["p0acq"] = h.acquire(0, 1.0, 1.01, 1, t0)
	h.Entry(1.5, history.Nemesis, history.Info, "pause-start", map[string]int{"process": 0})
	ix["p1acq"] = h.acquire(1, 11.5, 11.51, 1, t1)
	h.Entry(20.0, history.Nemesis, history.Info, "pause-end", map[string]int{"process": 0})
	ix["p1w"], ix["p1wok"] = h.write(1, 11.6, 11.61, history.Ok, "p1-1", 1, t1)
	ix["p1rel"] = h.release(1, 11.7, 11.71, history.Ok, 1)
	ix["p0w"], ix["p0wok"] = h.write(0, 20.01, 20.02, history.Ok, "p0-1", 1, t0)
	ix["p0rel"] = h.release(0, 20.03, 20.04, history.Fail, 1)
	return h, ix
}

func TestLockRedlockPause(t *testing.T) {
	h, ix := redlockPause(nil, nil)
	res := []history.ResourceEntry{accepted(1, 1, 1, "p1-1", true), accepted(2, 0, 1, "p0-1", true)}
	for _, tc := range []struct {
		name      string
		res       []history.ResourceEntry
		wantLines []int
	}{
		{"resource log", res, []int{1, 2}},
		{"history only", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, h, tc.res, "unfenced")
			if r.Verdict != analysis.Invalid || r.FindingsTotal != 2 {
				t.Fatalf("verdict %s, %d findings; want invalid, 2", r.Verdict, r.FindingsTotal)
			}
			me := analysistest.FindingsOf(r, "mutual-exclusion")
			want := []int{ix["p0acq"], ix["p0rel"], ix["p1acq"], ix["p1rel"]}
			if len(me) != 1 || !slices.Equal(analysistest.Indices(me[0].Ops), want) {
				t.Errorf("mutual-exclusion findings %+v; want one naming %v", me, want)
			}
			sw := analysistest.FindingsOf(r, "stale-write")
			want = []int{ix["p0acq"], ix["p1acq"], ix["p1w"], ix["p1wok"], ix["p0w"], ix["p0wok"]}
			if len(sw) != 1 || !slices.Equal(analysistest.Indices(sw[0].Ops), want) || !slices.Equal(sw[0].ResourceLines, tc.wantLines) {
				t.Fatalf("stale-write findings %+v; want one naming %v, lines %v", sw, want, tc.wantLines)
			}
			if !strings.Contains(sw[0].Explanation, "p0") || !strings.Contains(sw[0].Explanation, "11.510s") {
				t.Errorf("explanation %q lacks process or time", sw[0].Explanation)
			}
			if r.Stats["stale_writes_accepted"] != 1 || r.Stats["mutual_exclusion_violations"] != 1 {
				t.Errorf("stats %v", r.Stats)
			}
			if f, ok := analysis.FiguresOf[Figures](r); !ok || f.StaleWritesAccepted != 1 || f.ExclusionViolations != 1 || f.Holds != r.Stats["holds"] {
				t.Errorf("figures %+v, want those of stats %v", f, r.Stats)
			}
		})
	}
}

// A write delayed in the network reaches the resource after the next holder
// has written; the holds themselves never overlap.
func TestLockDelayedWrite(t *testing.T) {
	h := &hist{}
	h.acquire(0, 1.0, 1.01, 1, tok(33))
	h.write(0, 1.5, 2.0, history.Info, "p0-1", 1, tok(33)) // timed out, still in flight
	h.release(0, 2.0, 2.01, history.Ok, 1)
	h.acquire(1, 2.5, 2.51, 1, tok(34))
	h.write(1, 2.6, 2.61, history.Ok, "p1-1", 1, tok(34))
	h.release(1, 2.7, 2.71, history.Ok, 1)
	for _, tc := range []struct {
		mode                   string
		p0Accepted, p0First    bool
		wantVerdict            analysis.Verdict
		wantStale, wantRejects int
	}{
		{"fenced", false, false, analysis.Valid, 0, 1},
		{"unfenced", true, false, analysis.Invalid, 1, 0},
		{"unfenced, in time", true, true, analysis.Valid, 0, 0}, // p0's write landed before p1's
	} {
		t.Run(tc.mode, func(t *testing.T) {
			res := []history.ResourceEntry{accepted(1, 1, 1, "p1-1", true), accepted(2, 0, 1, "p0-1", tc.p0Accepted)}
			if tc.p0First {
				res = []history.ResourceEntry{accepted(1, 0, 1, "p0-1", true), accepted(2, 1, 1, "p1-1", true)}
			}
			r := check(t, h, res, tc.mode)
			if r.Verdict != tc.wantVerdict || len(analysistest.FindingsOf(r, "stale-write")) != tc.wantStale || len(analysistest.FindingsOf(r, "mutual-exclusion")) != 0 {
				t.Errorf("verdict %s, findings %+v; want %s with %d stale writes", r.Verdict, r.Findings, tc.wantVerdict, tc.wantStale)
			}
			if r.Stats["stale_writes_rejected"] != tc.wantRejects || r.Stats["tokens_seen"] != 2 {
				t.Errorf("stats %v", r.Stats)
			}
			if f, ok := analysis.FiguresOf[Figures](r); !ok || f.StaleWritesRejected != tc.wantRejects || f.TokensSeen != 2 || f.TokensStrictlyIncreasing != (r.Stats["tokens_strictly_increasing"] == true) {
				t.Errorf("figures %+v, want those of stats %v", f, r.Stats)
			}
		})
	}
}

func TestLockOverlapWithoutWrites(t *testing.T) {
	h := &hist{}
	a0 := h.acquire(0, 1, 1.1, 1, nil)
	a1 := h.acquire(1, 2, 2.1, 1, nil)
	r1 := h.release(1, 3, 3.1, history.Ok, 1)
	r0 := h.release(0, 4, 4.1, history.Fail, 1)
	h.acquire(2, 5, 5.1, 1, nil)
	h.Entry(9, 2, history.Invoke, lockop.FWrite, lockop.WriteValue{Key: "k", Value: "p2-1", Session: 1})
	r := check(t, h, nil, "")
	if r.Verdict != analysis.Invalid || r.FindingsTotal != 1 || len(analysistest.FindingsOf(r, "mutual-exclusion")) != 1 {
		t.Fatalf("verdict %s, findings %+v; want one mutual-exclusion", r.Verdict, r.Findings)
	}
	if got, want := analysistest.Indices(r.Findings[0].Ops), []int{a0, r0, a1, r1}; !slices.Equal(got, want) {
		t.Errorf("finding names %v, want %v", got, want)
	}
	// p2 never released: its hold lasts until its last entry (5.1s to 9s).
	if got := r.Stats["hold_time_max_s"].(float64); got < 3.899 || got > 3.901 {
		t.Errorf("hold_time_max_s = %v, want 3.9 (p2)", got)
	}
}

func TestLockInvokeWithoutCompletionIsNoHold(t *testing.T) {
	h := &hist{}
	h.acquire(0, 1, 1.1, 1, nil)
	h.Entry(1.5, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"}) // p1's last entry
	h.write(0, 2, 2.1, history.Ok, "p0-1", 1, nil)
	h.release(0, 3, 3.1, history.Ok, 1)
	r := check(t, h, nil, "")
	if r.Verdict != analysis.Valid || r.Stats["holds"] != 1 {
		t.Fatalf("verdict %s, findings %+v, stats %v; want valid with one hold", r.Verdict, r.Findings, r.Stats)
	}
	if r.Stats["acquires_attempted"] != 2 || r.Stats["acquires_info"] != 1 {
		t.Errorf("stats %v: an unfinished acquire counts as attempted with unknown outcome", r.Stats)
	}
}

func TestLockNoSuccessfulAcquire(t *testing.T) {
	h := &hist{}
	h.Entry(1, 0, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
	h.Entry(1.1, 0, history.Fail, lockop.FAcquire, lockop.Value{Lock: "l"})
	h.Entry(2, 1, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
	h.Entry(3, 1, history.Info, lockop.FAcquire, lockop.Value{Lock: "l"})
	r := check(t, h, nil, "")
	if r.Verdict != analysis.Unknown || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "no acquire succeeded") }) {
		t.Errorf("verdict %s, notes %q; want unknown saying no acquire succeeded", r.Verdict, r.Notes)
	}
}

func TestLockFencedWithoutTokenNote(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token *int64
		mode  string
		want  bool
	}{
		{"fenced, no token", nil, "fenced", true},
		{"fenced, token", tok(7), "fenced", false},
		{"unfenced, no token", nil, "unfenced", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hist{}
			h.acquire(0, 1, 1.1, 1, tc.token)
			h.write(0, 2, 2.1, history.Ok, "p0-1", 1, tc.token)
			h.release(0, 3, 3.1, history.Ok, 1)
			r := check(t, h, []history.ResourceEntry{accepted(1, 0, 1, "p0-1", true)}, tc.mode)
			got := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "no fencing token") })
			if got != tc.want || r.Verdict != analysis.Valid {
				t.Errorf("verdict %s, notes %q; want valid, note %v", r.Verdict, r.Notes, tc.want)
			}
		})
	}
}

// Every finding is listed, and counted by kind; under a cap
// (--max-findings) only the cap is listed, and the counts stay exact.
func TestLockFindingsCapped(t *testing.T) {
	h := &hist{}
	h.acquire(0, 0, 0.1, 1, nil) // p0 never releases: every other hold overlaps it
	for p := 1; p <= 25; p++ {
		h.acquire(p, float64(p), float64(p)+0.1, 1, nil)
		h.release(p, float64(p)+0.5, float64(p)+0.6, history.Ok, 1)
	}
	h.release(0, 100, 100.1, history.Fail, 1)
	for _, limit := range []int{0, 10} {
		analysis.FindingsCap = limit
		r := check(t, h, nil, "")
		want := 25
		if limit > 0 {
			want = limit
		}
		if r.FindingsTotal != 25 || len(r.Findings) != want || r.Stats["mutual_exclusion_violations"] != 25 || r.Kinds["mutual-exclusion"] != 25 {
			t.Errorf("cap %d: total %d, listed %d, by kind %v; want 25, %d, mutual-exclusion 25", limit, r.FindingsTotal, len(r.Findings), r.Kinds, want)
		}
	}
	analysis.FindingsCap = 0
}

// TestRunNamesResults: Run names each result after its checker, in the
// order given, and the report's verdict is the worst of theirs.
func TestRunNamesResults(t *testing.T) {
	rep := analysis.Run(context.Background(), []analysis.Checker{Checker{}, SplitBrain}, analysis.Input{})
	if len(rep.Results) != 2 || rep.Results[0].Checker != "lock" || rep.Results[1].Checker != "split-brain" {
		t.Fatalf("results %+v; want lock then split-brain", rep.Results)
	}
	if want := analysis.Worst(rep.Results[0].Verdict, rep.Results[1].Verdict); rep.Verdict != want {
		t.Errorf("verdict %s, want the worst of the results', %s", rep.Verdict, want)
	}
}
