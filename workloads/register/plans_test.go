package register_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/internal/testenv"
	_ "github.com/chaos-testing/chaos/targets/etcd"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestEtcdClientRetryPlan: the shipped plan, cut to three strobe windows,
// must show the etcd client sending writes again after a server with a
// fast clock cancelled them, and the register history that this breaks.
func TestEtcdClientRetryPlan(t *testing.T) {
	testenv.Docker(t)
	rep, dir := testenv.RunPlan(t, testenv.Plan(t, filepath.Join("..", "..", "plans", "etcd-client-retry-clock.yaml"), 40*time.Second))
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "c*.log"))
	retried := 0
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "retrying of unary invoker failed") &&
				(strings.Contains(line, "KV/Put") || strings.Contains(line, "KV/Txn")) &&
				(strings.Contains(line, "code = Canceled") || strings.Contains(line, "code = DeadlineExceeded")) {
				retried++
			}
		}
	}
	t.Logf("writes the client sent again after a cancellation: %d", retried)
	if retried == 0 {
		t.Error("no client log names a write retried after a Canceled or DeadlineExceeded answer")
	}
	r := rep.Results[0]
	if r.Verdict != analysis.Invalid {
		t.Errorf("cas-register: %s (%v); want the retried writes to break linearizability", r.Verdict, r.Notes)
	}
	for _, f := range r.Findings[:min(len(r.Findings), 2)] {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
}
