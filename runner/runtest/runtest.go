// Package runtest runs whole plans end to end for the integration tests
// of any package: each run's results in a folder of the test's own, the
// chaos binary that client containers run, the run's output in the test's
// log. It stands above the runner, so that the packages the runner is
// made of can still test themselves through it.
package runtest

import (
	"context"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
)

// Plan loads the plan file at path and cuts its time limit to limit (0
// keeps the plan's).
func Plan(t testing.TB, path string, limit time.Duration) *plans.Plan {
	t.Helper()
	var sets []plans.Override
	if limit > 0 {
		sets = append(sets, plans.Override{Path: "time_limit", Value: limit.String()})
	}
	p, err := plans.Load(path, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Options are the runner's options for p: results in a directory of t's
// own, the chaos binary, and the run's output in t's log.
func Options(t testing.TB, p *plans.Plan) runner.Options {
	t.Helper()
	return runner.Options{Plan: p, Results: t.TempDir(), Binary: testenv.ChaosBinary(t), Out: testenv.Log(t)}
}

// Run runs p to its end and returns the report and the run's results
// directory; a run that fails fails t.
func Run(t testing.TB, p *plans.Plan) (analysis.Report, string) {
	t.Helper()
	rep, dir, err := runner.Run(context.Background(), Options(t, p))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep, dir
}
