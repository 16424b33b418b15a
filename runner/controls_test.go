package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/lock"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/runner"
	"github.com/chaos-testing/chaos/runner/runtest"
)

// control is a plan that must stay clean, and what clean means for it.
type control struct {
	plan string
	// unexpected lists a run's findings that a clean run has none of:
	// for registers every finding; for fenced locks, stale writes
	// accepted and tokens out of order (two holders at once is what any
	// lease allows, and what fencing is for).
	unexpected func(analysis.Report) []string
}

func anyFinding(rep analysis.Report) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Verdict != analysis.Valid {
			out = append(out, fmt.Sprintf("%s %s (%d findings)", r.Checker, r.Verdict, r.FindingsTotal))
		}
	}
	return out
}

func fencingBroken(rep analysis.Report) []string {
	var out []string
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Kind != "mutual-exclusion" {
				out = append(out, f.Kind+": "+f.Explanation)
			}
		}
		if f, ok := analysis.FiguresOf[lock.Figures](r); ok && f.StaleWritesAccepted > 0 {
			out = append(out, fmt.Sprintf("%d stale writes accepted", f.StaleWritesAccepted))
		}
	}
	return out
}

var controls = []control{
	{plan: "etcd-register-mixed.yaml", unexpected: anyFinding},
	{plan: "etcd-kv-mixed.yaml", unexpected: anyFinding},
	{plan: "zookeeper-register-partition.yaml", unexpected: anyFinding},
	{plan: "zookeeper-watch-partition.yaml", unexpected: anyFinding},
	{plan: "etcd-lock-pause.yaml", unexpected: fencingBroken},
	{plan: "zookeeper-lock-pause.yaml", unexpected: fencingBroken},
	{plan: "redlock-short-pause.yaml", unexpected: anyFinding},
}

// TestNegativeControlTable runs every negative control over
// CHAOS_CONTROL_SEEDS seeds (scripts/controls sets it; unset, the test is
// skipped: CI runs the short TestShortNegativeControls instead), each
// cut to CHAOS_CONTROL_LIMIT (default: the plan's), and prints a table of
// plan, seeds and findings. Every finding fails the test, named with its
// run folder (kept under results/controls), to be investigated to its
// operations.
func TestNegativeControlTable(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("CHAOS_CONTROL_SEEDS"))
	if seeds == 0 {
		t.Skip("CHAOS_CONTROL_SEEDS is not set (scripts/controls runs this)")
	}
	testenv.Docker(t)
	limit, _ := time.ParseDuration(os.Getenv("CHAOS_CONTROL_LIMIT"))
	var table strings.Builder
	fmt.Fprintf(&table, "%-36s %6s %6s  %s\n", "plan", "seeds", "clean", "findings")
	for _, c := range controls {
		clean := 0
		var found []string
		for seed := 1; seed <= seeds; seed++ {
			p := loadPlan(t, c.plan, limit, int64(seed))
			// The runs stay in results/controls: a finding must be
			// investigated to its operations after the test has ended.
			o := runtest.Options(t, p)
			o.Results = filepath.Join("..", "results", "controls")
			rep, dir, err := runner.Run(context.Background(), o)
			if err != nil {
				t.Fatalf("%s seed %d: %v", c.plan, seed, err)
			}
			if u := c.unexpected(rep); len(u) > 0 {
				found = append(found, fmt.Sprintf("seed %d (%s): %s", seed, dir, strings.Join(u, "; ")))
				t.Errorf("%s seed %d: %s (in %s)", c.plan, seed, strings.Join(u, "; "), dir)
			} else {
				clean++
			}
		}
		fmt.Fprintf(&table, "%-36s %6d %6d  %s\n", c.plan, seeds, clean, strings.Join(found, " | "))
	}
	t.Logf("negative controls:\n%s", table.String())
}
