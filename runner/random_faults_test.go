package runner_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
	"github.com/chaos-testing/chaos/runner/runtest"
)

// TestRandomOverlappingFaults runs random plans of up to six overlapping
// faults of every kind (pause, kill, partition, clock, cpu) on every role
// (nodes, leader, clients, holder) on real etcd, ZooKeeper and Redis
// clusters: no run may end with a harness error. A run may find anomalies
// or leave the analysis undecided; that is the cluster's business, not
// the harness's.
//
// CHAOS_RANDOM_PLANS plans per backend (default 1), each drawn from seed
// CHAOS_RANDOM_SEED+i (default: drawn, and logged), running for
// CHAOS_RANDOM_LIMIT (default 20s), results and plan files under
// CHAOS_RANDOM_RESULTS (default: a temporary folder). A failure names the
// seed and the plan file, which `chaos run` runs again; the plan is in the
// log too. scripts/random-faults runs many.
func TestRandomOverlappingFaults(t *testing.T) {
	testenv.Docker(t)
	n := envInt(t, "CHAOS_RANDOM_PLANS", 1)
	base := int64(envInt(t, "CHAOS_RANDOM_SEED", rand.IntN(1_000_000)))
	limit := 20 * time.Second
	if s := os.Getenv("CHAOS_RANDOM_LIMIT"); s != "" {
		var err error
		if limit, err = time.ParseDuration(s); err != nil {
			t.Fatalf("CHAOS_RANDOM_LIMIT: %v", err)
		}
	}
	results := os.Getenv("CHAOS_RANDOM_RESULTS")
	if results == "" {
		results = t.TempDir()
	}
	t.Logf("%d plans per backend from seed %d, %s each, results in %s", n, base, limit, results)
	for _, backend := range []string{"etcd", "zookeeper", "redis"} {
		t.Run(backend, func(t *testing.T) {
			verdicts := map[string]int{}
			failed := 0
			for i := range n {
				seed := base + int64(i)
				verdict, ok := runRandomPlan(t, backend, seed, limit, results)
				verdicts[verdict]++
				if !ok {
					failed++
				}
			}
			t.Logf("%s: %d plans, %d harness errors; verdicts %v", backend, n, failed, verdicts)
		})
	}
}

// runRandomPlan draws one plan, writes it to a file and runs it: ok is
// false, and t fails, if the run ended with a harness error.
func runRandomPlan(t *testing.T, backend string, seed int64, limit time.Duration, results string) (verdict string, ok bool) {
	t.Helper()
	text := randomPlan(backend, seed, limit)
	file := filepath.Join(results, "plans", fmt.Sprintf("random-%s-%d.yaml", backend, seed))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, resolved, err := parseRandom(file, text)
	if err != nil {
		t.Fatalf("seed %d drew a plan chaos refuses: %v\n%s", seed, err, text)
	}
	o := runtest.Options(t, p)
	o.Results = filepath.Join(results, "runs")
	// Generous: a loaded machine starts clusters slowly. A run that takes
	// longer is interrupted, which counts as a harness error.
	ctx, cancel := context.WithTimeout(context.Background(), limit+10*time.Minute)
	defer cancel()
	began := time.Now()
	rep, dir, err := runner.Run(ctx, o)
	if err != nil {
		t.Errorf("seed %d: the run did not finish cleanly: %v\nplan %s (rerun: chaos run %s), results in %s:\n%s", seed, err, file, file, dir, text)
		return "harness error", false
	}
	t.Logf("seed %d: %s, %s in %s (%s)", seed, rep.Verdict, p.Workload.Kind, time.Since(began).Round(time.Second), faultSummary(resolved))
	return string(rep.Verdict), true
}

// parseRandom parses text, a plan drawn, and binds it as chaos run does;
// it returns the plan, and the plan as it runs (its faults' fields with
// their defaults), or why chaos refuses it.
func parseRandom(file, text string) (p, resolved *plans.Plan, err error) {
	if p, err = plans.Parse(file, []byte(text)); err != nil {
		return nil, nil, err
	}
	b, err := bind.Bind(p)
	if err != nil {
		return nil, nil, err
	}
	resolved, err = b.Resolved()
	return p, resolved, err
}

// faultSummary names the faults of p, a plan as it runs (parseRandom).
func faultSummary(p *plans.Plan) string {
	var fs []string
	for _, f := range p.Nemesis {
		fs = append(fs, kindOf(f))
	}
	return strings.Join(fs, ", ")
}

// kindOf is a fault's kind and its target, or its shape for a partition,
// of a fault as it runs (parseRandom), whose fields all are written out.
func kindOf(f plans.Fault) string {
	if f.Kind == "partition" {
		return f.Kind + " " + f.Params["shape"].Value
	}
	return f.Kind + " " + f.Target
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// randomPlan is a plan for backend (etcd, zookeeper or redis) drawn from
// seed: a workload that fits the target, and one to six faults legal for
// it, overlapping at random.
func randomPlan(backend string, seed int64, limit time.Duration) string {
	stream := fnv.New64a()
	stream.Write([]byte(backend)) // one seed draws different plans for each backend
	rng := rand.New(rand.NewPCG(uint64(seed), stream.Sum64()))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	const lock = "clients: 3, lease: 2s, hold_min: 200ms, hold_max: 800ms, resource: "
	var target, workload string
	nodes, clients := 3, 3
	leader := true
	switch backend {
	case "etcd", "zookeeper":
		nodes = []int{3, 5}[rng.IntN(2)]
		if rng.IntN(2) == 0 {
			workload = backend + "-lock, " + lock + pick("fenced", "unfenced")
		} else {
			clients = 4
			workload = backend + "-register, clients: 4, read_mode: " + map[string]string{"etcd": "linearizable", "zookeeper": "sync"}[backend]
		}
		target = backend
	case "redis":
		if rng.IntN(2) == 0 {
			target, nodes, leader = "redis", 5, false
			workload = "redlock, " + lock + "unfenced"
		} else {
			target = "redis-sentinel"
			workload = "redis-sentinel-set, clients: 3"
		}
	}
	roles := []string{"nodes", "clients"}
	if leader {
		roles = append(roles, "leader")
	}
	if strings.Contains(workload, "lock") {
		roles = append(roles, "holder")
	}
	nodeRoles := []string{"nodes"}
	if leader {
		nodeRoles = append(nodeRoles, "leader")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: random-%s-%d\nseed: %d\ntime_limit: %s\ntarget: {kind: %s, nodes: %d}\nworkload: {kind: %s}\nnemesis:\n",
		backend, seed, seed, limit, target, nodes, workload)
	for range 1 + rng.IntN(6) {
		duration := time.Duration(1+rng.IntN(6)) * time.Second
		first := time.Second + time.Duration(rng.Int64N(int64(limit/2)))
		first = min(first, limit-duration).Truncate(100 * time.Millisecond)
		interval := duration + time.Duration(rng.IntN(7))*time.Second
		kinds := []string{"pause", "kill", "partition", "clock", "cpu"}
		if leader {
			// A combined fault draws every kind that can draw its own,
			// packet faults among them, on nodes and the leader.
			kinds = append(kinds, "combined")
		}
		if target != "redis" { // its nodes keep no data directory
			kinds = append(kinds, "disk")
		}
		var what string
		switch kind := pick(kinds...); kind {
		case "combined":
			what = "kind: combined"
		case "pause", "clock", "cpu":
			role := roles[rng.IntN(len(roles))]
			what = fmt.Sprintf("kind: %s, target: %s, count: %d", kind, role, count(rng, role, nodes, clients))
			if kind == "clock" {
				offset := time.Duration(1+rng.IntN(30)) * time.Second * time.Duration(1-2*rng.IntN(2))
				what += fmt.Sprintf(", offset: %s, clocks: %s", offset, pick("realtime", "all"))
				if rng.IntN(2) == 0 {
					what += fmt.Sprintf(", strobe: %dms", 50+rng.IntN(int(min(duration, time.Second)/time.Millisecond)-50))
				}
			}
			if kind == "cpu" {
				what += ", cpus: " + pick("0.01", "0.05", "0.2")
			}
		case "disk":
			role := nodeRoles[rng.IntN(len(nodeRoles))]
			what = pick("kind: disk-slow, ops: [fsync], delay: 100ms, jitter: 50ms", "kind: disk-stall",
				"kind: disk-error, ops: [write], probability: 0.3", "kind: disk-full, free: 65536",
				fmt.Sprintf("kind: crash-point, ops: [%s], nth: %d, action: %s", pick("write", "fsync", "rename"), 1+rng.IntN(20), pick("kill", "power-loss", "pause")))
			what += fmt.Sprintf(", target: %s, count: %d", role, count(rng, role, nodes, clients))
		case "kill":
			role := nodeRoles[rng.IntN(len(nodeRoles))]
			what = fmt.Sprintf("kind: kill, target: %s, count: %d", role, count(rng, role, nodes, clients))
		case "partition":
			shapes := []string{"isolate-one", "halves", "bridge"}
			if leader {
				shapes = append(shapes, "isolate-leader")
			}
			if nodes >= 4 {
				shapes = append(shapes, "majorities-ring")
			}
			shape := shapes[rng.IntN(len(shapes))]
			what = "kind: partition, shape: " + shape
			if strings.HasPrefix(shape, "isolate-") {
				what += fmt.Sprintf(", count: %d", 1+rng.IntN(nodes/2))
			}
		}
		fmt.Fprintf(&b, "  - {%s, first_after: %s, interval: %s, duration: %s}\n", what, first, interval, duration)
	}
	return b.String()
}

// count is how many processes a fault on role hits: a leader or a holder
// is one; of the nodes or clients, one or two.
func count(rng *rand.Rand, role string, nodes, clients int) int {
	switch role {
	case "nodes":
		return 1 + rng.IntN(min(2, nodes))
	case "clients":
		return 1 + rng.IntN(min(2, clients))
	}
	return 1
}

// Every plan drawn is one chaos accepts, for every backend and many seeds:
// a refused plan would be a test that tests nothing.
func TestRandomPlansAreValid(t *testing.T) {
	kinds := map[string]bool{}
	for _, backend := range []string{"etcd", "zookeeper", "redis"} {
		for seed := range int64(300) {
			text := randomPlan(backend, seed, 20*time.Second)
			_, resolved, err := parseRandom("random.yaml", text)
			if err != nil {
				t.Fatalf("%s seed %d: %v\n%s", backend, seed, err, text)
			}
			for _, f := range resolved.Nemesis {
				kinds[kindOf(f)] = true
			}
		}
	}
	want := []string{"pause holder", "pause leader", "pause clients", "pause nodes", "kill leader", "kill nodes",
		"clock nodes", "clock leader", "clock clients", "clock holder", "cpu nodes", "cpu leader", "cpu clients", "cpu holder",
		"disk-slow nodes", "disk-stall leader", "disk-error nodes", "disk-full nodes", "crash-point nodes", "crash-point leader"}
	for _, shape := range nemesis.Shapes {
		want = append(want, "partition "+shape)
	}
	for _, w := range want {
		if !kinds[w] {
			t.Errorf("no plan drew %s", w)
		}
	}
}
