package set

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	_ "github.com/chaos-testing/chaos/analysis/primaries"
	_ "github.com/chaos-testing/chaos/analysis/set"
	_ "github.com/chaos-testing/chaos/analysis/stream"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/runner/runtest"
	_ "github.com/chaos-testing/chaos/targets/nats"
	_ "github.com/chaos-testing/chaos/targets/redis"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestSentinelPartitionPlan runs the shipped Sentinel plan, cut to the end
// of its partition and a few seconds more, and checks that it finds what
// Jepsen found in 2013: two primaries taking writes, and acknowledged
// adds lost once the old primary is demoted.
func TestSentinelPartitionPlan(t *testing.T) {
	testenv.Docker(t)
	rep, _ := runtest.Run(t, runtest.Plan(t, filepath.Join("..", "..", "plans", "redis-sentinel-partition.yaml"), 36*time.Second))
	results := map[string]analysis.Result{}
	for _, r := range rep.Results {
		results[r.Checker] = r
		t.Logf("%s: %s, stats %v, notes %q", r.Checker, r.Verdict, r.Stats, r.Notes)
		for _, f := range r.Findings[:min(len(r.Findings), 2)] {
			t.Logf("%s: %s", f.Kind, f.Explanation)
		}
	}
	set, primaries := results["set"], results["primaries"]
	if set.Verdict != analysis.Invalid || set.Stats["lost"] == 0 {
		t.Errorf("set: %s with %v lost adds; want acknowledged adds lost", set.Verdict, set.Stats["lost"])
	}
	if primaries.Verdict != analysis.Invalid || primaries.Findings[0].Kind != "two-primaries" {
		t.Errorf("primaries: %s; want two primaries at once", primaries.Verdict)
	}
}

// TestNATSStreamLostToKills runs the shipped NATS 2.10.22 plan, cut to 12
// s, and checks that it finds what Jepsen found: every server killed just
// after the stream's creation, and the whole stream gone after the
// restart, every acknowledged message with it.
func TestNATSStreamLostToKills(t *testing.T) {
	testenv.Docker(t)
	rep, _ := runtest.Run(t, runtest.Plan(t, filepath.Join("..", "..", "plans", "nats-stream-kill.yaml"), 12*time.Second))
	var set analysis.Result
	for _, r := range rep.Results {
		t.Logf("%s: %s, stats %v, notes %q", r.Checker, r.Verdict, r.Stats, r.Notes)
		if r.Checker == "set" {
			set = r
		}
	}
	if set.Verdict != analysis.Invalid || set.Stats["lost"] == 0 || set.Stats["lost"] != set.Stats["acknowledged"] {
		t.Errorf("set: %s, %v of %v acknowledged adds lost; want every one lost with the stream", set.Verdict, set.Stats["lost"], set.Stats["acknowledged"])
	}
}
