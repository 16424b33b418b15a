package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planYAML is a run's plan.yaml with the pause lasting pause.
func planYAML(pause string) string {
	return `name: redlock-test
seed: 1
time_limit: 40s
target: {kind: redis, nodes: 5}
workload: {kind: redlock, clients: 3, lease: 2s, hold_min: 200ms, hold_max: 800ms, resource: unfenced}
nemesis:
  - {kind: pause, target: holder, first_after: 3s, interval: 10s, duration: ` + pause + `}
`
}

// analyzedRun is a checked copy of the testdata run named from, with
// plan.yaml and run.json's end record (nil: none) as given.
func analyzedRun(t *testing.T, root, name, from, plan string, end any) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "runs", from))); err != nil {
		t.Fatal(err)
	}
	setEnd(t, dir, end)
	if plan != "" {
		writeFile(t, filepath.Join(dir, "plan.yaml"), plan)
	}
	capture(t, func() {
		if _, err := dispatch([]string{"check", dir}); err != nil {
			t.Fatal(err)
		}
	})
	return dir
}

// chaos compare DIR... claims that its rows share one workload and fault
// schedule only when the runs' plans say so, names what differs when they
// do not, and counts a run that did not finish cleanly as neither clean nor
// anything else.
func TestCompareStoredRuns(t *testing.T) {
	root := t.TempDir()
	end := map[string]any{"at": "2026-11-30T11:17:05Z"}
	compare := func(dirs ...string) string {
		t.Helper()
		var code int
		var err error
		out := capture(t, func() {
			code, err = dispatch(append([]string{"compare", "--results", filepath.Join(root, "results")}, dirs...))
		})
		if err != nil || code != exitValid {
			t.Fatalf("compare: %d, %v\n%s", code, err, out)
		}
		return out
	}
	same1 := analyzedRun(t, root, "same1", "clean", planYAML("6s"), end)
	same2 := analyzedRun(t, root, "same2", "stale", planYAML("6s"), end)
	other := analyzedRun(t, root, "other", "clean", planYAML("4s"), end)
	killed := analyzedRun(t, root, "killed", "clean", planYAML("6s"), nil)
	noPlan := analyzedRun(t, root, "noplan", "clean", "", end)

	t.Run("one schedule", func(t *testing.T) {
		out := compare(same1, same2)
		if !strings.Contains(out, "All 2 runs share one workload and fault schedule") || strings.Contains(out, "do not share") {
			t.Errorf("runs of one plan: the output does not say they share it:\n%s", out)
		}
		if !strings.Contains(out, "| redlock on redis | unfenced | 1 / 2 |") {
			t.Errorf("the two runs are not one row:\n%s", out)
		}
	})
	t.Run("two schedules", func(t *testing.T) {
		out := compare(same1, same2, other)
		for _, want := range []string{"do not share one workload and fault schedule",
			"nemesis[0].duration: 6s in schedule A, 4s in schedule B",
			"schedule A: same1, same2", "schedule B: other",
			"| redlock on redis (schedule A) | unfenced | 1 / 2 |", "| redlock on redis (schedule B) | unfenced | 0 / 1 |"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "All 3 runs share") {
			t.Errorf("the claim is kept for runs of different schedules:\n%s", out)
		}
	})
	t.Run("no plan.yaml", func(t *testing.T) {
		out := compare(same1, noPlan)
		if !strings.Contains(out, "not known to share one workload and fault schedule") || !strings.Contains(out, "schedule unknown (no readable plan.yaml): noplan") {
			t.Errorf("a run whose plan is unknown is taken to share the others':\n%s", out)
		}
	})
	t.Run("incomplete run", func(t *testing.T) {
		out := compare(same1, killed)
		if !strings.Contains(out, "| redlock on redis | unfenced | 0 / 1 |") {
			t.Errorf("the incomplete run is counted as a clean one:\n%s", out)
		}
		if !strings.Contains(out, "killed") || !strings.Contains(out, "no end of the run recorded") {
			t.Errorf("the incomplete run left out is not named with its reason:\n%s", out)
		}
	})
}
