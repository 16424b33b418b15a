package lock

import (
	"context"
	"reflect"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
)

// TestRunStreamLockSameAsRun: a lock history given as a stream of
// operations, of which the checker keeps digests, gets the result it gets
// whole, findings' operations filled in whole by the further pass; with a
// resource log and without one.
func TestRunStreamLockSameAsRun(t *testing.T) {
	checkers := []analysis.Checker{Checker{}, analysis.StatsChecker{}}
	if !analysis.Streamable(checkers) {
		t.Fatal("lock and stats are not streamable")
	}
	in, pauses := genLockRun(100_000)
	for _, c := range []struct {
		name string
		in   analysis.Input
	}{
		{"resource log", in},
		{"history only", analysis.Input{History: in.History}},
	} {
		whole := analysis.Run(context.Background(), checkers, c.in)
		if whole.Verdict != analysis.Invalid || whole.Results[0].Stats["mutual_exclusion_violations"] != pauses {
			t.Fatalf("%s: whole: %s, %v; want invalid with %d overlaps", c.name, whole.Verdict, whole.Results[0].Stats, pauses)
		}
		for _, size := range []int{1, 500, 1 << 30} {
			streamIn := c.in
			streamIn.History = nil
			got, err := analysis.RunStream(context.Background(), checkers, streamIn, analysistest.Source(c.in.History), size)
			if err != nil {
				t.Fatal(err)
			}
			for i := range whole.Results {
				delete(whole.Results[i].Stats, "check_s")
				delete(got.Results[i].Stats, "check_s")
			}
			got.Took, whole.Took = 0, 0
			if !reflect.DeepEqual(got, whole) {
				t.Errorf("%s, batches of %d:\n%+v\nwhole:\n%+v", c.name, size, got, whole)
			}
		}
	}
}
