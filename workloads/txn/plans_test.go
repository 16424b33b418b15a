package txn_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	_ "github.com/chaos-testing/chaos/analysis/txn"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner/runtest"
	_ "github.com/chaos-testing/chaos/targets/etcd"
	_ "github.com/chaos-testing/chaos/targets/nats"
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
	rep, _ := runtest.Run(t, runtest.Plan(t, filepath.Join("..", "..", "plans", "etcd-list-append-serializable.yaml"), 30*time.Second))
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

// TestNATSAtomicBatches runs the NATS list-append plan, cut to 20 s and
// to its kills (a cut or paused stream leader may answer beside the new
// one, which the plan finds): transactions commit as atomic batches and
// Elle finds no anomaly, and the stream enforces the batches' checks:
// some are refused because a key read had changed ("wrong last
// sequence"), which a batch without its checks would have stored.
func TestNATSAtomicBatches(t *testing.T) {
	testenv.Docker(t)
	p := runtest.Plan(t, filepath.Join("..", "..", "plans", "nats-list-append.yaml"), 20*time.Second)
	p.Nemesis = slices.DeleteFunc(p.Nemesis, func(f plans.Fault) bool { return f.Kind != "kill" })
	rep, dir := runtest.Run(t, p)
	r := rep.Results[0]
	t.Logf("%s: %s, stats %v", r.Checker, r.Verdict, r.Stats)
	if r.Checker != "list-append" || r.Verdict != analysis.Valid {
		t.Fatalf("%s: %s (%v); want list-append valid", r.Checker, r.Verdict, r.Findings)
	}
	if committed, _ := r.Stats["committed"].(int); committed < 50 {
		t.Errorf("%v transactions committed; want at least 50", r.Stats["committed"])
	}
	h, _, err := runfolder.Folder(dir).ReadHistory()
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, op := range h {
		if op.Type == history.Fail && strings.Contains(op.Error, "wrong last sequence") {
			refused++
		}
	}
	if refused == 0 {
		t.Error("no batch was refused on a changed key; want the checks enforced")
	}
}
