package runner_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
)

func TestWriteIndex(t *testing.T) {
	results := t.TempDir()
	yes, no := true, false
	mk := func(plan, stamp, target, expect string, met *bool, rep *analysis.Report, started time.Time, servers ...string) {
		dir := filepath.Join(results, plan, stamp)
		os.MkdirAll(dir, 0o755)
		info := runfolder.Info{Plan: plan, Seed: 3, Started: started, Target: target, Workload: target + "-lock", Expect: expect, AsExpected: met,
			Versions: map[string]string{"chaos": "v0.3.0 (abc123)"}, Servers: map[string]string{}}
		for i, v := range servers {
			info.Servers[string(rune('a'+i))] = v
		}
		if rep != nil {
			info.End = &runfolder.End{At: started.Add(90 * time.Second)}
		}
		b, _ := json.Marshal(info)
		os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
		if rep != nil {
			b, _ = json.Marshal(rep)
			os.WriteFile(filepath.Join(dir, "analysis.json"), b, 0o644)
		}
	}
	finding := func(kind string) analysis.Finding { return analysis.Finding{Kind: kind} }
	stale := &analysis.Report{Verdict: analysis.Invalid, Results: []analysis.Result{
		{Checker: "lock", Verdict: analysis.Invalid, FindingsTotal: 16, Findings: []analysis.Finding{finding("stale-write"), finding("two-holders"), finding("stale-write")}},
		{Checker: "stats", Verdict: analysis.Valid},
	}}
	valid := &analysis.Report{Verdict: analysis.Valid, Results: []analysis.Result{{Checker: "cas-register", Verdict: analysis.Valid}}}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	mk("redlock-pause", "a", "redis", "invalid", &yes, stale, t0, "7.0.15", "7.0.15", "7.0.15")
	mk("etcd-register-mixed", "b", "etcd", "valid", &yes, valid, t0.Add(time.Hour), "3.6.6", "3.5.2")
	mk("zookeeper-lock-pause", "c", "zookeeper", "", nil, nil, t0.Add(2*time.Hour)) // killed before its end and its analysis
	mk("redlock-pause", "d", "redis", "invalid", &no, valid, t0.Add(3*time.Hour), "7.0.15")
	os.MkdirAll(filepath.Join(results, "latest"), 0o755) // not a run
	if err := runner.WriteIndex(results); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(results, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	list, rates, ok := strings.Cut(page, "<h2>Verdicts by plan</h2>")
	if !ok {
		t.Fatalf("index has no verdicts by plan:\n%s", page)
	}
	_, list, _ = strings.Cut(list, "<tbody>")
	redlock2, zk, etcd, redlock := strings.Index(list, "redlock-pause/d/"), strings.Index(list, "zookeeper-lock-pause"), strings.Index(list, "etcd-register-mixed"), strings.Index(list, "redlock-pause/a/")
	if redlock2 < 0 || zk < redlock2 || etcd < zk || redlock < etcd {
		t.Errorf("runs missing or not newest first (%d, %d, %d, %d)", redlock2, zk, etcd, redlock)
	}
	for _, want := range []string{
		`href="redlock-pause/a/report.html"`, `href="redlock-pause/a/summary.md"`, `href="redlock-pause/a/"`,
		`class="verdict invalid"`, `class="verdict valid"`, "incomplete, not analyzed", "incomplete: no end of the run recorded", "4 runs, newest first",
		// result against the expectation, findings by kind, duration, target and versions
		`<span class="verdict as-expected">as expected</span>`, `<span class="verdict unexpected">unexpected</span>`,
		"<li>lock: stale-write ×2, two-holders ×1 (16 in all, 13 not listed)</li>", "1m30s",
		"redis 7.0.15<br><small>chaos v0.3.0 (abc123)</small>", "etcd 3.5.2, 3.6.6<br>",
		// filters: a row carries what they filter on; the selects list each value once
		`<tr data-plan="redlock-pause" data-target="redis" data-verdict="invalid" data-result="as expected">`,
		`<tr data-plan="redlock-pause" data-target="redis" data-verdict="valid" data-result="unexpected">`,
		`<tr data-plan="zookeeper-lock-pause" data-target="zookeeper" data-verdict="incomplete, not analyzed" data-result="–">`,
		`<select name="result"><option value="">all</option><option>as expected</option><option>unexpected</option><option value="–">no expectation</option></select>`,
		`<select name="plan"><option value="">all</option><option>etcd-register-mixed</option><option>redlock-pause</option><option>zookeeper-lock-pause</option></select>`,
		`<select name="target"><option value="">all</option><option>etcd</option><option>redis</option><option>zookeeper</option></select>`,
		`<option>valid</option>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	if strings.Count(list, "<li>") != 1 || strings.Contains(list, "stats:") {
		t.Errorf("findings listed for runs or checkers without any")
	}
	// Without a script the filters stay hidden and every run is listed.
	if !strings.Contains(page, `<div id="filters" hidden>`) || strings.Count(list, "<tr ") != 4 {
		t.Errorf("the filters are not hidden until a script shows them, or rows are missing")
	}
	for _, want := range []string{
		`<td>redlock-pause</td><td class="n">2</td><td class="n">1 (50%)</td><td class="n">1 (50%)</td><td class="n">0 (0%)</td>` + "\n" + `<td class="n">1 of 2</td>`,
		`<td>zookeeper-lock-pause</td><td class="n">1</td><td class="n">0 (0%)</td><td class="n">0 (0%)</td><td class="n">1 (100%)</td>` + "\n" + `<td class="n">–</td>`,
	} {
		if !strings.Contains(rates, want) {
			t.Errorf("verdicts by plan lack %q:\n%s", want, rates)
		}
	}
	// One run is one run.
	os.RemoveAll(filepath.Join(results, "redlock-pause"))
	os.RemoveAll(filepath.Join(results, "etcd-register-mixed"))
	if err := runner.WriteIndex(results); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(results, "index.html"))
	if !strings.Contains(string(b), "<p>1 run, newest first.</p>") {
		t.Errorf("one run is not counted as one")
	}
}
