package txn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	_ "github.com/chaos-testing/chaos/analysis/txn"
	"github.com/chaos-testing/chaos/internal/testenv"
	_ "github.com/chaos-testing/chaos/targets/etcd"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestEtcdSerializablePlan runs the shipped positive control, cut to its
// first two partitions: list-append transactions whose reads are
// serializable, on members cut off in turn, must be caught by Elle's
// check as cycles that need real-time order (a transaction that began
// after another committed and missed its appends), each finding naming
// its transactions.
func TestEtcdSerializablePlan(t *testing.T) {
	testenv.Docker(t)
	rep, _ := testenv.RunPlan(t, testenv.Plan(t, filepath.Join("..", "..", "plans", "etcd-list-append-serializable.yaml"), 30*time.Second))
	r := rep.Results[0]
	t.Logf("%s: %s, stats %v, notes %q", r.Checker, r.Verdict, r.Stats, r.Notes)
	if r.Checker != "list-append" || r.Verdict != analysis.Invalid {
		t.Fatalf("%s: %s; want list-append invalid", r.Checker, r.Verdict)
	}
	realtime := false
	for _, f := range r.Findings {
		realtime = realtime || strings.HasSuffix(f.Kind, "-realtime")
		if len(f.Ops) < 2 || !strings.Contains(f.Explanation, "T1") {
			t.Errorf("%s: %q with %d ops; want the transactions named", f.Kind, f.Explanation, len(f.Ops))
		}
	}
	if !realtime {
		t.Errorf("no finding among the first %d needs real-time order; want stale reads caught as -realtime cycles", len(r.Findings))
	}
}
