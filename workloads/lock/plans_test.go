package lock

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	_ "github.com/chaos-testing/chaos/analysis/lock"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/runner/runtest"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// lockResult is the lock checker's result of a plan's run.
type lockResult struct{ *analysis.Result }

// stat is the count k of the result's stats: an int as the checker made
// it, a float64 once read back from JSON, 0 when absent.
func (r lockResult) stat(k string) int {
	switch v := r.Stats[k].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// testPausePlans runs, end to end and each in a subtest named after it, a
// shipped pause plan with fencing and its twin without, cut to limit.
// check tests a run's report and lock result; then, fenced, the resource
// must have rejected stale writes and accepted none, and unfenced have
// accepted some.
func testPausePlans(t *testing.T, fenced, unfenced string, limit time.Duration, check func(*testing.T, analysis.Report, lockResult)) {
	testenv.Docker(t)
	for _, c := range []struct {
		plan   string
		fenced bool
	}{{fenced, true}, {unfenced, false}} {
		t.Run(c.plan, func(t *testing.T) {
			rep, res := runLockPlan(t, c.plan, limit)
			check(t, rep, res)
			accepted, rejected := res.stat("stale_writes_accepted"), res.stat("stale_writes_rejected")
			if c.fenced {
				if accepted != 0 || rejected == 0 {
					t.Errorf("fenced: %d stale writes accepted, %d rejected; want none accepted and some rejected", accepted, rejected)
				}
			} else if accepted == 0 {
				t.Error("unfenced: no stale write accepted")
			}
		})
	}
}

// runLockPlan runs the shipped plan name, cut to limit, and returns its
// report and its lock checker's result, whose stats, notes and first
// findings it logs.
func runLockPlan(t *testing.T, name string, limit time.Duration) (analysis.Report, lockResult) {
	t.Helper()
	rep, _ := runtest.Run(t, runtest.Plan(t, filepath.Join("..", "..", "plans", name), limit))
	i := slices.IndexFunc(rep.Results, func(r analysis.Result) bool { return r.Checker == "lock" })
	if i < 0 {
		t.Fatalf("no lock checker result: %+v", rep.Results)
	}
	res := lockResult{&rep.Results[i]}
	var stats []string
	for _, k := range slices.Sorted(maps.Keys(res.Stats)) {
		stats = append(stats, fmt.Sprintf("%s %v", k, res.Stats[k]))
	}
	t.Logf("verdict %s; %s", rep.Verdict, strings.Join(stats, ", "))
	for _, n := range res.Notes {
		t.Logf("note: %s", n)
	}
	for _, f := range res.Findings[:min(len(res.Findings), 2)] {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	return rep, res
}
