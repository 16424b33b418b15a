package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
	"github.com/chaos-testing/chaos/runner/runtest"

	_ "github.com/chaos-testing/chaos/plugins" // every plug-in, as the command line has them
)

// These tests start real Redis, client and resource containers. They need
// a Docker Engine and mmdebstrap (scripts/setup installs it); -short skips them.

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// loadPlan is the plan file name, cut to limit, with seed.
func loadPlan(t *testing.T, name string, limit time.Duration, seed int64) *plans.Plan {
	t.Helper()
	p := runtest.Plan(t, filepath.Join("..", "plans", name), limit)
	p.Seed = seed
	return p
}

// bound is p bound as a run binds it (its defaults filled: the target's
// size, ...), failing t if it does not bind.
func bound(t *testing.T, p *plans.Plan) *bind.Plan {
	t.Helper()
	b, err := bind.Bind(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A short version of plans/redlock-pause.yaml: one holder pause of 5 s
// against a 2 s lease must yield a stale write accepted, with its proof.
func TestRedlockPauseFindsStaleWrite(t *testing.T) {
	cli := testenv.Docker(t)
	rep, dir := runtest.Run(t, loadPlan(t, "redlock-pause.yaml", 14*time.Second, 1))
	if rep.Verdict != analysis.Invalid {
		t.Fatalf("verdict %s, want invalid: %+v", rep.Verdict, rep.Results)
	}
	var stale *analysis.Finding
	for _, f := range rep.Results[0].Findings {
		if f.Kind == "stale-write" {
			stale = &f
			break
		}
	}
	if stale == nil {
		t.Fatalf("no stale-write finding: %+v", rep.Results[0].Findings)
	}
	if len(stale.Ops) < 4 || len(stale.ResourceLines) != 2 {
		t.Errorf("stale write finding lacks its proof: %+v", stale)
	}
	ops, trunc, err := history.Read(filepath.Join(dir, "history.jsonl"))
	if err != nil || trunc != nil {
		t.Fatalf("history: %v %v", err, trunc)
	}
	if !hasNemesisOp(ops, "pause-start") || !hasNemesisOp(ops, "pause-end") {
		t.Error("the pause is not in the history")
	}
	for _, name := range []string{"n1.log", "c0.log", "resource.log"} {
		if _, err := os.Stat(filepath.Join(dir, "logs", name)); err != nil {
			t.Errorf("container log not saved: %v", err)
		}
	}
	assertNothingLeft(t, cli, runID(t, dir), nil)
	if info, err := runfolder.Folder(dir).ReadInfo(); err != nil || info.End == nil || info.Incomplete() != "" {
		t.Errorf("run.json of a clean run: end %+v (%v); want an end record without an error", info.End, err)
	}
	assertVersions(t, dir, 5, "github.com/go-redsync/redsync/v4", "github.com/redis/go-redis/v9")
}

// assertVersions checks that run.json in dir records the version each of
// the nodes reported, and those of the client libraries given.
func assertVersions(t *testing.T, dir string, nodes int, libraries ...string) {
	t.Helper()
	info, err := runfolder.Folder(dir).ReadInfo()
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Servers) != nodes {
		t.Errorf("run.json: server versions %v, want one for each of %d nodes", info.Servers, nodes)
	}
	for n, v := range info.Servers {
		if v == "" || strings.HasPrefix(v, "unknown") || !strings.ContainsAny(v, "0123456789") {
			t.Errorf("run.json: %s reported version %q", n, v)
		}
	}
	for _, l := range libraries {
		if v := info.Versions[l]; !strings.HasPrefix(v, "v") {
			t.Errorf("run.json: client library %s at version %q", l, v)
		}
	}
	t.Logf("servers %v; libraries %v", info.Servers, info.Versions)
}

// Short versions of the negative controls of registers and of etcd's
// store with revisions: etcd and ZooKeeper under mixed partitions, kills
// and pauses must not raise a false alarm, and every fault must be in the
// history and healed.
// ZooKeeper's plan reads through a quorum check (read_mode checked), so
// that its pauses of the leader cannot show ZOOKEEPER-1675's stale reads.
func TestShortNegativeControls(t *testing.T) {
	cli := testenv.Docker(t)
	for _, plan := range []string{"etcd-register-mixed.yaml", "etcd-kv-mixed.yaml", "zookeeper-register-partition.yaml"} {
		t.Run(plan, func(t *testing.T) {
			p := loadPlan(t, plan, 30*time.Second, 3)
			rep, dir := runtest.Run(t, p)
			if rep.Verdict != analysis.Valid {
				t.Fatalf("verdict %s, want valid: %+v", rep.Verdict, rep.Results)
			}
			ops, _, err := history.Read(filepath.Join(dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"partition-start", "partition-end", "kill-start", "kill-end", "pause-start", "pause-end"} {
				if !hasNemesisOp(ops, f) {
					t.Errorf("no %s in the history", f)
				}
			}
			if rep.Ops < 1000 {
				t.Errorf("only %d history entries: the clients did little", rep.Ops)
			}
			assertVersions(t, dir, bound(t, p).Target.Nodes, map[string]string{"etcd": "go.etcd.io/etcd/client/v3", "zookeeper": "github.com/go-zookeeper/zk"}[p.Target.Kind])
			assertNothingLeft(t, cli, runID(t, dir), nil)
		})
	}
}

// Ctrl-C at a random moment: the run stops, leaves no container, network
// or stopped process behind, and its partial history can be checked.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	cli := testenv.Docker(t)
	o := runtest.Options(t, loadPlan(t, "redlock-pause.yaml", 60*time.Second, 2))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt at a random moment once clients are at work: before,
	// during or after the first pause.
	stopAfter := rand.N(7 * time.Second)
	pids := make(chan []int, 1)
	go func() {
		for !historyStarted(o.Results) {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(stopAfter)
		pids <- runPIDs(t, cli, o.Results)
		cancel()
	}()
	t.Logf("interrupting %s after the first operation", stopAfter)
	rep, dir, err := runner.Run(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("run error %v, want interrupted", err)
	}
	assertNothingLeft(t, cli, runID(t, dir), <-pids)
	again, aerr := runner.Analyze(context.Background(), dir, nil)
	if aerr != nil {
		t.Fatalf("check of the partial history: %v", aerr)
	}
	if again.Ops == 0 || again.Ops != rep.Ops {
		t.Errorf("partial history: %d entries at the end of the run, %d on a second read", rep.Ops, again.Ops)
	}
	// However valid the history so far, the run is not.
	info, ierr := runfolder.Folder(dir).ReadInfo()
	if ierr != nil || info.End == nil || !strings.Contains(info.End.Error, "interrupted") {
		t.Errorf("run.json's end record %+v (%v); want one with the interruption", info.End, ierr)
	}
	if rep.Verdict == analysis.Valid || again.Verdict == analysis.Valid {
		t.Errorf("an interrupted run judged %s, then %s; want it never valid", rep.Verdict, again.Verdict)
	}
}

func historyStarted(results string) bool {
	hs, _ := filepath.Glob(filepath.Join(results, "*", "*", "history.jsonl"))
	for _, h := range hs {
		if st, err := os.Stat(h); err == nil && st.Size() > 0 {
			return true
		}
	}
	return false
}

func hasNemesisOp(ops []history.Op, f string) bool {
	for _, op := range ops {
		if op.Process == history.Nemesis && op.F == f {
			return true
		}
	}
	return false
}

func runID(t *testing.T, dir string) string {
	t.Helper()
	var info runfolder.Info
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err == nil {
		err = json.Unmarshal(b, &info)
	}
	if err != nil || info.RunID == "" {
		t.Fatalf("run.json: %v", err)
	}
	return info.RunID
}

// runPIDs finds the host PIDs of the running containers of the one run
// under results.
func runPIDs(t *testing.T, cli *client.Client, results string) []int {
	matches, _ := filepath.Glob(filepath.Join(results, "*", "*", "run.json"))
	if len(matches) != 1 {
		t.Errorf("expected one run under %s, found %v", results, matches)
		return nil
	}
	id := runID(t, filepath.Dir(matches[0]))
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", containers.LabelRun+"="+id))})
	if err != nil {
		t.Error(err)
		return nil
	}
	var pids []int
	for _, c := range cs {
		info, err := cli.ContainerInspect(context.Background(), c.ID)
		if err == nil && info.State.Pid > 0 {
			pids = append(pids, info.State.Pid)
		}
	}
	return pids
}

func assertNothingLeft(t *testing.T, cli *client.Client, id string, pids []int) {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", containers.LabelRun+"="+id))
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil || len(cs) > 0 {
		t.Errorf("containers left by run %s: %d (%v)", id, len(cs), err)
	}
	nets, err := cli.NetworkList(context.Background(), network.ListOptions{Filters: f})
	if err != nil || len(nets) > 0 {
		t.Errorf("networks left by run %s: %d (%v)", id, len(nets), err)
	}
	// A run's folder of mount points goes only once nothing is mounted
	// there.
	if _, err := os.Stat(filepath.Join(disks.Root, id)); !os.IsNotExist(err) {
		t.Errorf("disks of run %s still mounted, or their mount points left (%v)", id, err)
	}
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil {
			t.Errorf("process %d of the run still exists: %s", pid, stat)
		}
	}
}
