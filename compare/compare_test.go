package compare

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/lock"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/runfolder"
)

// fakeRun writes a run folder: process 1 holds the lock from 1 s and is
// paused at 2 s; process 0 acquires at 4.5 s (failover 2.5 s), during the
// pause, and again at 9 s after it; the lock checker's figures are given.
func fakeRun(t *testing.T, root, name, workload, resource string, figures lock.Figures) string {
	dir := filepath.Join(root, name)
	os.MkdirAll(dir, 0o755)
	b, _ := json.Marshal(runfolder.Info{Plan: name, Target: "etcd", Workload: workload, Resource: resource, End: &runfolder.End{At: time.Now()}})
	os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(planYAML(workload, resource, "6s")), 0o644)
	rep := analysis.Report{Verdict: analysis.Invalid, Results: []analysis.Result{{Checker: "lock", Verdict: analysis.Invalid, Figures: figures}}}
	b, _ = json.Marshal(rep)
	os.WriteFile(filepath.Join(dir, "analysis.json"), b, 0o644)
	l, err := history.OpenLines(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	lock := history.MustValue(lockop.Value{Lock: "l"})
	for _, op := range []history.Op{
		{Time: at(0.9), Type: history.Invoke, Process: 1, F: lockop.FAcquire, Value: lock},
		{Time: at(1), Type: history.Ok, Process: 1, F: lockop.FAcquire, Value: lock},
		{Time: at(2), Type: history.Invoke, Process: history.Nemesis, F: "pause-start"},
		{Time: at(2), Type: history.Info, Process: history.Nemesis, F: "pause-start", Value: history.MustValue([]string{"c1"})},
		{Time: at(4.4), Type: history.Invoke, Process: 0, F: lockop.FAcquire, Value: lock},
		{Time: at(4.5), Type: history.Ok, Process: 0, F: lockop.FAcquire, Value: lock},
		{Time: at(8), Type: history.Invoke, Process: history.Nemesis, F: "pause-end", Value: history.MustValue([]string{"c1"})},
		{Time: at(8), Type: history.Info, Process: history.Nemesis, F: "pause-end", Value: history.MustValue([]string{"c1"})},
		{Time: at(8.7), Type: history.Invoke, Process: 0, F: lockop.FAcquire, Value: lock},
		{Time: at(9), Type: history.Ok, Process: 0, F: lockop.FAcquire, Value: lock},
		{Time: at(10), Type: history.Invoke, Process: 2, F: lockop.FAcquire, Value: lock},
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
	fenced := lock.Figures{StaleWritesRejected: 2, ExclusionViolations: 1, TokensSeen: 5, TokensStrictlyIncreasing: true}
	unfenced := lock.Figures{StaleWritesAccepted: 3, ExclusionViolations: 2, TokensSeen: 5, TokensStrictlyIncreasing: true}
	dirs := []string{
		fakeRun(t, root, "a", "etcd-lock", "fenced", fenced),
		fakeRun(t, root, "b", "etcd-lock", "unfenced", unfenced),
		fakeRun(t, root, "c", "etcd-lock", "fenced", fenced),
	}
	table, err := Build(dirs)
	if err != nil {
		t.Fatal(err)
	}
	rows := table.Rows
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
	if err := Write(out, "test", table); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	for _, want := range []string{"All 3 runs share one workload and fault schedule", "| etcd-lock on etcd | fenced | 2 / 2 | 0 / 2 | 2 / 2 | yes, strictly increasing | 0 / 4 | 2500 ms / 2500 ms (2) |", "[a](../a/report.html)", "| etcd-lock on etcd | unfenced | 1 / 1 | 1 / 1 |"} {
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

// planYAML is a run's plan.yaml as the runner writes it, with workload's
// kind and resource and the pause's duration as given.
func planYAML(workload, resource, pause string) string {
	return `name: p--` + workload + `-` + resource + `
description: ""
seed: 1
time_limit: 40s
target:
    kind: etcd
    nodes: 3
    version: ""
    image: ""
workload:
    kind: ` + workload + `
    clients: 3
    lease: 2s
    hold_min: 200ms
    hold_max: 800ms
    resource: ` + resource + `
    read_mode: ""
nemesis:
    - kind: pause
      target: holder
      count: 0
      nodes: []
      shape: ""
      offset: 0s
      clocks: ""
      strobe: 0s
      first_after: 3s
      interval: 10s
      duration: ` + pause + `
compare: null
`
}

// Runs of several schedules are never one row, and the table says what
// differs; runs that did not finish cleanly are left out and named.
func TestBuildSchedulesAndIncomplete(t *testing.T) {
	root := t.TempDir()
	stats := lock.Figures{ExclusionViolations: 1}
	a := fakeRun(t, root, "a", "etcd-lock", "fenced", stats)
	b := fakeRun(t, root, "b", "etcd-lock", "unfenced", stats) // another backend, the same schedule
	c := fakeRun(t, root, "c", "etcd-lock", "fenced", stats)
	os.WriteFile(filepath.Join(c, "plan.yaml"), []byte(planYAML("etcd-lock", "fenced", "4s")), 0o644)
	d := fakeRun(t, root, "d", "etcd-lock", "fenced", stats)
	os.Remove(filepath.Join(d, "plan.yaml"))
	killed := fakeRun(t, root, "killed", "etcd-lock", "fenced", stats)
	info, _ := json.Marshal(runfolder.Info{Plan: "killed", Target: "etcd", Workload: "etcd-lock", Resource: "fenced"})
	os.WriteFile(filepath.Join(killed, "run.json"), info, 0o644)
	failed := fakeRun(t, root, "failed", "etcd-lock", "fenced", stats)
	info, _ = json.Marshal(runfolder.Info{Plan: "failed", Target: "etcd", Workload: "etcd-lock", Resource: "fenced",
		End: &runfolder.End{At: time.Now(), Error: "clock-start [c4]: process 17 is already patched"}})
	os.WriteFile(filepath.Join(failed, "run.json"), info, 0o644)

	table, err := Build([]string{a, b, killed, c, failed, d})
	if err != nil {
		t.Fatal(err)
	}
	if table.Shared() {
		t.Error("runs of two schedules and one unknown are said to share one")
	}
	var got []string
	for _, r := range table.Rows {
		got = append(got, fmt.Sprintf("%s %s %d", r.backend(), r.Resource, len(r.Runs)))
	}
	want := []string{"etcd-lock on etcd (schedule A) fenced 1", "etcd-lock on etcd (schedule A) unfenced 1",
		"etcd-lock on etcd (schedule B) fenced 1", "etcd-lock on etcd (schedule unknown) fenced 1"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if len(table.Incomplete) != 2 || table.Incomplete[0].Run != killed || !strings.Contains(table.Incomplete[0].Why, "no end of the run recorded") ||
		table.Incomplete[1].Why != "clock-start [c4]: process 17 is already patched" {
		t.Errorf("left out %+v; want the killed and the failed run, with their reasons", table.Incomplete)
	}
	out := filepath.Join(root, "cmp")
	if err := Write(out, "test", table); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"compare.md", "compare.html"} {
		page, _ := os.ReadFile(filepath.Join(out, file))
		for _, want := range []string{"do not share one workload and fault schedule", "schedule A: a, b", "schedule B: c",
			"schedule unknown (no readable plan.yaml): d", "nemesis[0].duration: 6s in schedule A, 4s in schedule B",
			"killed", "failed", "incomplete: clock-start [c4]: process 17 is already patched"} {
			if !strings.Contains(string(page), want) {
				t.Errorf("%s lacks %q:\n%s", file, want, page)
			}
		}
		if strings.Contains(string(page), "share one workload and fault schedule (") {
			t.Errorf("%s keeps the claim that the runs share one schedule", file)
		}
	}
}

// TestVersionsAndSettings: runs of a register on two versions, one with a
// setting the others lack, make a row each, named by the version the
// servers reported and the setting that sets it apart, with their verdicts,
// findings and operations.
func TestVersionsAndSettings(t *testing.T) {
	root := t.TempDir()
	run := func(name, version string, config map[string]string, verdict analysis.Verdict, findings ...string) string {
		dir := filepath.Join(root, name)
		os.MkdirAll(dir, 0o755)
		b, _ := json.Marshal(runfolder.Info{Plan: name, Target: "zookeeper", Workload: "zookeeper-register", End: &runfolder.End{At: time.Now()},
			Servers: map[string]string{"n1": version, "n2": version}, Config: config})
		os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
		os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(planYAML("zookeeper-register", "", "6s")), 0o644)
		res := analysis.Result{Checker: "cas-register", Verdict: verdict}
		for _, f := range findings {
			res.Findings = append(res.Findings, analysis.Finding{Kind: f})
		}
		b, _ = json.Marshal(analysis.Report{Verdict: verdict, Results: []analysis.Result{res}})
		os.WriteFile(filepath.Join(dir, "analysis.json"), b, 0o644)
		l, err := history.OpenLines(filepath.Join(dir, "history.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for i, typ := range []history.Type{history.Invoke, history.Ok, history.Invoke, history.Info} {
			l.Write(history.Op{Time: time.Duration(i+1) * time.Second, Type: typ, Process: 0, F: registerop.FRead})
		}
		l.Close()
		return dir
	}
	old := map[string]string{"tickTime": "500"}
	dirs := []string{
		run("a", "3.4.13", old, analysis.Invalid, "nonlinearizable"),
		run("b", "3.9.3", old, analysis.Valid),
		run("c", "3.9.3", map[string]string{"tickTime": "500", "forceSync": "no"}, analysis.Invalid, "nonlinearizable", "nonlinearizable"),
		run("d", "3.4.13", old, analysis.Valid),
	}
	table, err := Build(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 3 || table.LockTable() {
		t.Fatalf("%d rows (lock table %v); want 3 of register runs", len(table.Rows), table.LockTable())
	}
	out := filepath.Join(root, "cmp")
	if err := Write(out, "versions", table); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	for _, want := range []string{
		"| zookeeper-register on zookeeper 3.4.13 | 1 / 2 | 0 / 2 | nonlinearizable ×1 | 2 / 0 / 2 | 0 |",
		"| zookeeper-register on zookeeper 3.9.3 | 0 / 1 | 0 / 1 | none |",
		"| zookeeper-register on zookeeper 3.9.3 (forceSync=no) | 1 / 1 | 0 / 1 | nonlinearizable ×2 |",
		"- zookeeper-register on zookeeper 3.9.3 (forceSync=no): [c](../c/report.html)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q:\n%s", want, md)
		}
	}
}

// A checker lists its first findings and counts the rest: the row says how
// many it did not list, rather than passing a capped count for a total.
func TestUnlistedFindings(t *testing.T) {
	r := &Row{Findings: map[string]int{}}
	listed := make([]analysis.Finding, 20)
	for i := range listed {
		listed[i].Kind = "lost-add"
	}
	rep := analysis.Report{Verdict: analysis.Invalid, Results: []analysis.Result{{Verdict: analysis.Invalid, Findings: listed, FindingsTotal: 57}}}
	r.add("run", rep, nil)
	if cell := r.cells(false)[4]; cell != "lost-add ×20, 37 more not listed" {
		t.Errorf("findings cell %q", cell)
	}
}

// A register's read mode belongs to its backend, as a lock's resource
// does: runs that differ in it alone share one schedule, and make a row
// each, named by it.
func TestReadModeIsTheBackends(t *testing.T) {
	root := t.TempDir()
	var runs []string
	for _, mode := range []string{"linearizable", "serializable"} {
		dir := fakeRun(t, root, mode, "etcd-register", "", lock.Figures{})
		plan := strings.Replace(planYAML("etcd-register", "", "6s"), `read_mode: ""`, "read_mode: "+mode, 1)
		if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, dir)
	}
	table, err := Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range table.Rows {
		got = append(got, r.backend())
	}
	want := []string{"etcd-register (reads linearizable) on etcd", "etcd-register (reads serializable) on etcd"}
	if !table.Shared() || !slices.Equal(got, want) {
		t.Errorf("shared %v, rows %q; want one schedule and rows %q", table.Shared(), got, want)
	}
}

// A register row measures every client operation: the latency of the ok
// ones, how many were ok among those that completed during a fault and
// outside one, and the ok rate in and out of faults, so that what the
// fault cost shows.
func TestRegisterLatencyAndFaultRates(t *testing.T) {
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	ops := []history.Op{
		{Time: at(0.9), Type: history.Invoke, Process: 0, F: registerop.FRead},
		{Time: at(1.0), Type: history.Ok, Process: 0, F: registerop.FRead},
		{Time: at(2), Type: history.Invoke, Process: history.Nemesis, F: "partition-start"},
		{Time: at(2), Type: history.Info, Process: history.Nemesis, F: "partition-start"},
		{Time: at(2.5), Type: history.Invoke, Process: 1, F: registerop.FRead},
		{Time: at(3.45), Type: history.Invoke, Process: 0, F: registerop.FWrite},
		{Time: at(3.5), Type: history.Ok, Process: 0, F: registerop.FWrite},
		{Time: at(3.6), Type: history.Info, Process: 1, F: registerop.FRead},
		{Time: at(4), Type: history.Invoke, Process: history.Nemesis, F: "partition-end"},
		{Time: at(4), Type: history.Info, Process: history.Nemesis, F: "partition-end"},
		{Time: at(4.5), Type: history.Invoke, Process: 1, F: registerop.FRead},
		{Time: at(4.51), Type: history.Ok, Process: 1, F: registerop.FRead},
		{Time: at(5), Type: history.Invoke, Process: 2, F: registerop.FWrite},
	}
	for i := range ops {
		ops[i].Index = i
	}
	r := &Row{Findings: map[string]int{}}
	r.add("run", analysis.Report{Verdict: analysis.Valid}, ops)
	if r.DuringFaultsOK != 1 || r.DuringFaults != 2 || r.OutsideFaultsOK != 2 || r.OutsideFaults != 2 {
		t.Errorf("during faults %d of %d, outside %d of %d; want 1 of 2, 2 of 2", r.DuringFaultsOK, r.DuringFaults, r.OutsideFaultsOK, r.OutsideFaults)
	}
	if r.FaultSeconds != 2 || r.Seconds != 5 {
		t.Errorf("%g s of faults in %g s; want 2 of 5", r.FaultSeconds, r.Seconds)
	}
	// 1 ok in the 2 s of the fault, 2 ok in the 3 s outside it.
	if during, outside := perSecond(r.DuringFaultsOK, r.FaultSeconds), perSecond(r.OutsideFaultsOK, r.Seconds-r.FaultSeconds); during != 0.5 || outside != 2.0/3 {
		t.Errorf("ok a second %g during faults, %g outside; want 0.5 and 0.67", during, outside)
	}
	cells := r.cells(false)
	if got := cells[len(cells)-2:]; !slices.Equal(got, []string{"50 ms / 100 ms", "0 / 1"}) {
		t.Errorf("latency and fault-rate cells %q", got)
	}
	if got := (&Row{OutsideFaultsOK: 30, Seconds: 10}).faultRates(); got != "no faults / 3" {
		t.Errorf("a row without faults: %q", got)
	}
	if len(cells) != len(columns(false)) {
		t.Errorf("%d cells under %d headings", len(cells), len(columns(false)))
	}
}

// Faults that overlap count once: the time some fault was in force (the
// windows in order of start, as history.FaultWindows gives them).
func TestFaultTime(t *testing.T) {
	w := func(a, b float64) history.FaultWindow {
		return history.FaultWindow{Start: time.Duration(a * float64(time.Second)), End: time.Duration(b * float64(time.Second))}
	}
	for _, c := range []struct {
		ws   []history.FaultWindow
		want time.Duration
	}{
		{nil, 0},
		{[]history.FaultWindow{w(1, 3), w(2, 5), w(7, 8)}, 5 * time.Second},
		{[]history.FaultWindow{w(1, 9), w(2, 3)}, 8 * time.Second},
	} {
		if got := faultTime(c.ws); got != c.want {
			t.Errorf("%v: %s, want %s", c.ws, got, c.want)
		}
	}
}

// storedRun copies one of the stored runs of cmd/chaos/testdata/runs
// (a redlock run with its history, no analysis) to root/name, as run on
// servers of version, judged by the lock checker with the findings given.
func storedRun(t *testing.T, root, stored, name, version string, findings ...string) string {
	t.Helper()
	src := filepath.Join("..", "cmd", "chaos", "testdata", "runs", stored)
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"run.json", "history.jsonl", "resource.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, file), b, 0o644)
	}
	f := runfolder.Folder(dir)
	if err := f.UpdateInfo(func(i *runfolder.Info) { i.Servers = map[string]string{"n1": version} }); err != nil {
		t.Fatal(err)
	}
	res := analysis.Result{Checker: "lock", Verdict: analysis.Valid, FindingsTotal: len(findings), Figures: lock.Figures{StaleWritesAccepted: len(findings)}}
	for _, k := range findings {
		res.Findings = append(res.Findings, analysis.Finding{Kind: k})
		res.Verdict = analysis.Invalid
	}
	if err := f.WriteAnalysis(runfolder.Analysis{Report: analysis.Report{Verdict: res.Verdict, Results: []analysis.Result{res}}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compare.html draws, from the runs' analyses and histories, the share of
// runs with findings and the findings per run, a square per run linked to
// its report, the latency of ok operations (p50, p95, p99, each kind of
// operation under the row's), and the share of operations ok during faults
// and outside them; each chart's row names link to the table's rows.
func TestChartsOnStoredRuns(t *testing.T) {
	root := t.TempDir()
	dirs := []string{
		storedRun(t, root, "stale", "old-stale", "7.0.15", "stale-write", "stale-write"),
		storedRun(t, root, "clean", "new-clean", "7.2.4"),
		storedRun(t, root, "stale", "new-stale", "7.2.4", "stale-write"),
	}
	table, err := Build(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || !table.LockTable() {
		t.Fatalf("%d rows (lock table %v); want 2 of lock runs", len(table.Rows), table.LockTable())
	}
	if r := table.Rows[1]; !slices.Equal(r.RunFindings, []int{0, 1}) || r.RunsWithFindings() != 1 || len(r.LatencyByF["release"]) != 3 {
		t.Errorf("row of 7.2.4: findings by run %v, latencies by f %v", r.RunFindings, r.LatencyByF)
	}
	out := filepath.Join(root, "compare", "x")
	if err := Write(out, "charts", table); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "compare.html"))
	page := string(b)
	if n := strings.Count(page, `<svg class="chart"`); n != 5 {
		t.Errorf("%d charts; want 5", n)
	}
	for _, want := range []string{
		`<h2 id="chart-findings">Runs with findings</h2>`,
		`<h2 id="chart-latency">Latency of ok operations</h2>`,
		`<h2 id="chart-availability">Operations completed ok, during faults and outside them</h2>`,
		// anomaly rate: runs with findings, findings per run
		"1 of 1 run (100%)", "1 of 2 runs (50%)", "2 per run (2 findings in 1 run)", "0.5 per run (1 finding in 2 runs)",
		// the runs, each linked to its report, and the rows to the table
		`<a class="run" href="../../old-stale/report.html">`, `<a class="run" href="../../new-clean/report.html">`,
		`fill="` + colValid + `"><title>new-clean: valid, 0 findings</title>`,
		`<tr id="row-2">`, `<a href="#row-2">`,
		// latency: acquisitions, then each other kind of operation
		"acquire, waiting included", ">release</text>", ">write</text>", "10 ms / 10 ms / 10 ms (2)", "10 ms / 10 ms / 10 ms (4)",
		// acquisitions ok: the stale run's pause from 0.5 s to 5.5 s saw a
		// failed and an ok one; the clean run had no fault.
		">during faults</text>", "50% ok (1 of 2)", "100% ok (1 of 1)", "75% ok (3 of 4)",
		// the table still links the runs
		`href="../../new-stale/report.html"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
	for _, no := range []string{"<script", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), no) {
			t.Errorf("compare.html has %q: it must open offline, alone", no)
		}
	}
}

func TestAxes(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.2: 2, 17: 20, 50: 50, 51: 100} {
		if got := niceMax(v); got != want {
			t.Errorf("niceMax(%g) = %g, want %g", v, got, want)
		}
	}
	lo, hi, ticks := logAxis([]time.Duration{3 * time.Millisecond, 2 * time.Second})
	if lo != float64(time.Millisecond) || hi != float64(10*time.Second) || len(ticks) != 5 || ticks[0].label != "1 ms" || ticks[4].label != "10 s" {
		t.Errorf("log axis %g-%g, ticks %v", lo, hi, ticks)
	}
	if f := logFrac(float64(100*time.Millisecond), lo, hi); f != 0.5 {
		t.Errorf("100 ms at %g of 1 ms-10 s; want 0.5", f)
	}
	if _, _, ticks := logAxis([]time.Duration{5 * time.Millisecond, 40 * time.Millisecond}); len(ticks) != 7 || ticks[1].label != "2 ms" || ticks[6].label != "100 ms" {
		t.Errorf("a log axis of two decades: ticks %v", ticks)
	}
}
