package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/runner"
)

// fakeRun writes a run folder: process 1 holds the lock from 1 s and is
// paused at 2 s; process 0 acquires at 4.5 s (failover 2.5 s), during the
// pause, and again at 9 s after it; the lock checker's stats are given.
func fakeRun(t *testing.T, root, name, workload, resource string, stats map[string]any) string {
	dir := filepath.Join(root, name)
	os.MkdirAll(dir, 0o755)
	b, _ := json.Marshal(runner.RunInfo{Plan: name, Target: "etcd", Workload: workload, Resource: resource})
	os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
	rep := analysis.Report{Verdict: analysis.Invalid, Results: []analysis.Result{{Checker: "lock", Verdict: analysis.Invalid, Stats: stats}}}
	b, _ = json.Marshal(rep)
	os.WriteFile(filepath.Join(dir, "analysis.json"), b, 0o644)
	l, err := history.OpenLines(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	lock := history.MustValue(history.LockValue{Lock: "l"})
	for _, op := range []history.Op{
		{Time: at(0.9), Type: history.Invoke, Process: 1, F: history.FAcquire, Value: lock},
		{Time: at(1), Type: history.Ok, Process: 1, F: history.FAcquire, Value: lock},
		{Time: at(2), Type: history.Invoke, Process: history.Nemesis, F: "pause-start"},
		{Time: at(2), Type: history.Info, Process: history.Nemesis, F: "pause-start", Value: history.MustValue([]string{"c1"})},
		{Time: at(4.4), Type: history.Invoke, Process: 0, F: history.FAcquire, Value: lock},
		{Time: at(4.5), Type: history.Ok, Process: 0, F: history.FAcquire, Value: lock},
		{Time: at(8), Type: history.Invoke, Process: history.Nemesis, F: "pause-end", Value: history.MustValue([]string{"c1"})},
		{Time: at(8), Type: history.Info, Process: history.Nemesis, F: "pause-end", Value: history.MustValue([]string{"c1"})},
		{Time: at(8.7), Type: history.Invoke, Process: 0, F: history.FAcquire, Value: lock},
		{Time: at(9), Type: history.Ok, Process: 0, F: history.FAcquire, Value: lock},
		{Time: at(10), Type: history.Invoke, Process: 2, F: history.FAcquire, Value: lock},
	} {
		if err := l.Write(op); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	return dir
}

func TestBuildAndWrite(t *testing.T) {
	root := t.TempDir()
	fenced := map[string]any{"stale_writes_accepted": 0, "stale_writes_rejected": 2, "mutual_exclusion_violations": 1, "tokens_seen": 5, "tokens_strictly_increasing": true}
	unfenced := map[string]any{"stale_writes_accepted": 3, "stale_writes_rejected": 0, "mutual_exclusion_violations": 2, "tokens_seen": 5, "tokens_strictly_increasing": true}
	dirs := []string{
		fakeRun(t, root, "a", "etcd-lock", "fenced", fenced),
		fakeRun(t, root, "b", "etcd-lock", "unfenced", unfenced),
		fakeRun(t, root, "c", "etcd-lock", "fenced", fenced),
	}
	rows, err := Build(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows; want fenced and unfenced", len(rows))
	}
	f := rows[0]
	if f.Resource != "fenced" || len(f.Runs) != 2 || f.StaleRuns != 0 || f.StaleRejected != 4 || f.TwoHolderRuns != 2 || !f.Tokens || !f.TokensIncreasing {
		t.Errorf("fenced row: %+v", f)
	}
	if len(f.Failover) != 2 || f.Failover[0] != 2500*time.Millisecond {
		t.Errorf("failovers %v; want 2.5s per run", f.Failover)
	}
	if f.Acquisitions != 6 || f.DuringFaults != 2 || f.DuringFaultsOK != 2 {
		t.Errorf("acquisitions %d, during faults %d/%d", f.Acquisitions, f.DuringFaultsOK, f.DuringFaults)
	}
	if u := rows[1]; u.StaleRuns != 1 || u.StaleAccepted != 3 {
		t.Errorf("unfenced row: %+v", u)
	}
	out := filepath.Join(root, "cmp")
	if err := Write(out, "test", rows); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	for _, want := range []string{"| etcd-lock on etcd | fenced | 0 / 2 | 2 / 2 | yes, strictly increasing | 0 / 4 | 2500 ms / 2500 ms (2) |", "[a](../a/report.html)", "| etcd-lock on etcd | unfenced | 1 / 1 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q:\n%s", want, md)
		}
	}
	html, _ := os.ReadFile(filepath.Join(out, "compare.html"))
	if !strings.Contains(string(html), `href="../a/report.html"`) {
		t.Errorf("compare.html does not link the runs")
	}
	if _, err := Build([]string{filepath.Join(root, "missing")}); err == nil {
		t.Error("a folder that is not a run was accepted")
	}
}
