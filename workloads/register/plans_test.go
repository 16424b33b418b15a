package register_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/runner/runtest"
	_ "github.com/chaos-testing/chaos/targets/etcd"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestEtcdClientRetryPlan: the shipped plan, whole (its four strobe
// windows: cut to three, it once passed on CI with 57 retries), must show
// the etcd client sending writes again after a server with a fast clock
// cancelled them, and the register history that this breaks. A retried
// write breaks the history only when another write came between its two
// applications, which most runs see and some do not (CI once ran the
// plan's seed with 77 retries and a valid history): a second seed runs
// when the first found nothing.
func TestEtcdClientRetryPlan(t *testing.T) {
	testenv.Docker(t)
	p := runtest.Plan(t, filepath.Join("..", "..", "plans", "etcd-client-retry-clock.yaml"), 0)
	for try := range 2 {
		rep, dir := runtest.Run(t, p)
		if retried := retriedWrites(t, dir); retried == 0 {
			t.Fatalf("seed %d: no client log names a write retried after a Canceled or DeadlineExceeded answer", p.Seed)
		} else {
			t.Logf("seed %d: writes the client sent again after a cancellation: %d", p.Seed, retried)
		}
		r := rep.Results[0]
		if r.Verdict == analysis.Invalid {
			for _, f := range r.Findings[:min(len(r.Findings), 2)] {
				t.Logf("%s: %s", f.Kind, f.Explanation)
			}
			return
		}
		t.Logf("seed %d: cas-register %s (%v)", p.Seed, r.Verdict, r.Notes)
		if try == 1 {
			t.Errorf("cas-register valid with seeds %d and %d; want the retried writes to break linearizability", p.Seed-1, p.Seed)
		}
		p.Seed++
	}
}

// retriedWrites counts the writes the clients' logs in run folder dir say
// the etcd client sent again after a Canceled or DeadlineExceeded answer.
func retriedWrites(t *testing.T, dir string) int {
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
	return retried
}

// TestTrafficShaped: a plan's mix and rate reach the clients: writes only,
// at no more than the rate each, and values and keys as given.
func TestTrafficShaped(t *testing.T) {
	testenv.Docker(t)
	const plan = `name: traffic
time_limit: 6s
recovery: 2s
target: {kind: etcd}
workload:
  kind: etcd-register
  clients: 2
  mix: {read: 0, write: 1, cas: 0}
  rate: 20
  values: 2
  keys: 1
`
	path := filepath.Join(t.TempDir(), "traffic.yaml")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, dir := runtest.Run(t, runtest.Plan(t, path, 0))
	ops, _, err := history.Read(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	invoked := map[int]int{}
	first, last := map[int]time.Duration{}, map[int]time.Duration{}
	keys := map[string]bool{}
	for _, op := range ops {
		if op.Process < 0 || op.Type != history.Invoke {
			continue
		}
		var v registerop.Value
		if op.F != registerop.FWrite || json.Unmarshal(op.Value, &v) != nil || (string(v.Value) != "0" && string(v.Value) != "1") {
			t.Fatalf("%+v: want writes of 0 or 1 only", op)
		}
		if invoked[op.Process] == 0 {
			first[op.Process] = op.Time
		}
		invoked[op.Process]++
		last[op.Process] = op.Time
		keys[v.Key] = true
	}
	// At 20 a second: no more than one every 50 ms from each client's
	// first, and through 6 s and 2 s of recovery, well over 100. The pacer
	// keeps to a schedule set when the first operation was paced, and that
	// operation's invocation may be stamped a little later: one more is
	// allowed for that.
	for p, n := range invoked {
		if span := last[p] - first[p]; n > int(span/(50*time.Millisecond))+2 || n < 100 {
			t.Errorf("client %d sent %d writes in %s at 20 a second", p, n, span)
		}
	}
	if last := ops[len(ops)-1].Time; last < 7500*time.Millisecond {
		t.Errorf("the last operation at %s: the clients did not go on through the 2 s of recovery after the 6 s", last)
	}
	// One key in each 5 s period of the run's clock that the writes span:
	// the clock starts before the cluster is ready, so the writes may
	// reach into a third period. A key is drawn just before its write is
	// stamped, so the first may belong to the period before.
	const period = 5 * time.Second
	from, to := slices.Min(slices.Collect(maps.Values(first))), slices.Max(slices.Collect(maps.Values(last)))
	periods := int(to/period-(from-100*time.Millisecond)/period) + 1
	if len(invoked) != 2 || len(keys) > periods {
		t.Errorf("writes by %v on keys %v from %s to %s; want both clients, and one key in each of the %d periods", invoked, keys, from, to, periods)
	}
	if rep.Verdict != analysis.Valid {
		t.Errorf("verdict %s: %+v", rep.Verdict, rep.Results)
	}
}
