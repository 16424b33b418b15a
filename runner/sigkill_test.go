package runner_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
)

// killPlan has a fault of every kind a run can leave behind: clients
// paused (SIGSTOP), a partition (iptables rules), a node killed, a
// node's clock patched, and a node's CPU limited (its container's cgroup
// quota: it goes with the container, so that chaos clean, removing the
// containers, leaves nothing of it), each lasting long enough to be in
// force when the harness dies.
const killPlan = `name: sigkill-test
seed: 1
time_limit: 30s
target: {kind: redis, nodes: 5}
workload: {kind: redlock, clients: 3, lease: 2s, hold_min: 200ms, hold_max: 800ms, resource: unfenced}
nemesis:
  - {kind: pause,     target: holder, first_after: 1s, interval: 6s, duration: 4s}
  - {kind: partition, shape: isolate-one, first_after: 2s, interval: 6s, duration: 4s}
  - {kind: clock,     target: nodes, offset: 30s, first_after: 1500ms, interval: 6s, duration: 4s}
  - {kind: kill,      target: nodes, first_after: 3s, interval: 6s, duration: 2s}
  - {kind: cpu,       target: nodes, cpus: 0.05, first_after: 500ms, interval: 6s, duration: 5s}
`

// diskKillPlan has the disk faults: the nodes' disks are mounted by the
// harness, and a power loss, a truncate, a hung disk holding operations
// or a crash point (pausing its node) is in force most of the time.
const diskKillPlan = `name: sigkill-disk-test
seed: 1
time_limit: 30s
target: {kind: etcd, nodes: 3}
workload: {kind: etcd-register, clients: 3}
nemesis:
  - {kind: power-loss, target: nodes, first_after: 1s, interval: 6s, duration: 4s}
  - {kind: truncate, class: wal, target: nodes, first_after: 3s, interval: 6s, duration: 2s}
  - {kind: disk-stall, target: nodes, first_after: 2s, interval: 6s, duration: 3s}
  - {kind: crash-point, target: nodes, ops: [fsync], nth: 3, action: pause, first_after: 1500ms, interval: 6s, duration: 3s}
`

// TestSIGKILLThenClean kills the harness (chaos run) with SIGKILL at a
// random moment of a real run, CHAOS_SIGKILL_ROUNDS times (default 1) for
// each plan (faults of every kind; disk faults), then runs chaos clean,
// and checks that the machine is as it was: no container, network,
// process or disk mount of the run, no process patched, and the history
// written so far readable by chaos check.
func TestSIGKILLThenClean(t *testing.T) {
	for name, yaml := range map[string]string{"faults": killPlan, "disks": diskKillPlan} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat("/dev/fuse"); name == "disks" && err != nil {
				t.Skipf("no FUSE here for the nodes' disks: %v", err)
			}
			sigkillThenClean(t, yaml)
		})
	}
}

func sigkillThenClean(t *testing.T, yaml string) {
	cli := testenv.Docker(t)
	chaos := testenv.ChaosBinary(t)
	plan := filepath.Join(t.TempDir(), "sigkill.yaml")
	if err := os.WriteFile(plan, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	rounds, _ := strconv.Atoi(os.Getenv("CHAOS_SIGKILL_ROUNDS"))
	for round := range max(rounds, 1) {
		results := t.TempDir()
		run := exec.Command(chaos, "run", "--results", results, plan)
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		for !historyStarted(results) {
			time.Sleep(50 * time.Millisecond)
		}
		after := rand.N(12 * time.Second)
		time.Sleep(after)
		pids := runPIDs(t, cli, results)
		run.Process.Signal(syscall.SIGKILL)
		matches, _ := filepath.Glob(filepath.Join(results, "*", "*", "run.json"))
		if len(matches) != 1 {
			t.Fatalf("round %d: runs under %s: %v", round, results, matches)
		}
		dir := filepath.Dir(matches[0])

		// Cleaned before the harness is waited for: one killed inside a
		// request to its own disk layer ends only once clean aborts it.
		out, err := exec.Command(chaos, "clean").CombinedOutput()
		if err != nil {
			t.Fatalf("round %d: chaos clean: %v\n%s", round, err, out)
		}
		run.Wait()
		t.Logf("round %d: killed %s after the first operation; chaos clean: %s", round, after, strings.TrimSpace(string(out)))
		assertNothingLeft(t, cli, runID(t, dir), pids)
		// Patches of runs in progress elsewhere on the machine are theirs;
		// any whose harness is gone, the killed one's included, must not be.
		patches, _ := vdsoclock.Scan()
		for _, p := range patches {
			if containers.HarnessGone(p.Owner) {
				t.Errorf("round %d: process %d still patched by the gone harness %s", round, p.Pid, p.Owner)
			}
		}
		check := exec.CommandContext(context.Background(), chaos, "check", dir)
		out, _ = check.CombinedOutput()
		// A killed run never passes: its history may show an anomaly
		// (exit 1), else it is incomplete (exit 2), and says so.
		if code := check.ProcessState.ExitCode(); code != 1 && code != 2 || !strings.Contains(string(out), "incomplete:") {
			t.Errorf("round %d: chaos check of the history left: exit %d, want 1 or 2 and \"incomplete:\"\n%s", round, code, out)
		}
	}
}
