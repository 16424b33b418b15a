package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
)

// cleanPlan keeps a clock fault on its one node for the whole run.
const cleanPlan = `name: %s
seed: 1
time_limit: 90s
target: {kind: redis, nodes: 1}
workload: {kind: redis-single-lock, clients: 1, lease: 2s, hold_min: 100ms, hold_max: 500ms, resource: unfenced}
nemesis:
  - {kind: clock, target: nodes, offset: 30s, first_after: 500ms, interval: 80s, duration: 80s}
`

// TestCleanJudgesHarnessesAlike runs two harnesses, each with a clock
// fault in force, kills one with SIGKILL and leaves it unreaped (a zombie,
// as under a shell that has not waited yet), and runs chaos clean at once:
// the dead harness's run goes, containers and patch alike, and the live
// one's stays, containers and patch alike. (chaos clean used to judge the
// zombie's run in progress, and restore its patched process all the same.)
func TestCleanJudgesHarnessesAlike(t *testing.T) {
	cli := testenv.Docker(t)
	chaos := testenv.ChaosBinary(t)
	dead := startHarness(t, chaos, "clean-dead")
	live := startHarness(t, chaos, "clean-live")
	deadRun, livePatch := runOf(t, dead), patchOf(t, live.Process.Pid)
	patchOf(t, dead.Process.Pid)
	deadPIDs := runPIDs(t, cli, filepath.Dir(filepath.Dir(deadRun)))

	if err := dead.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitZombie(t, dead.Process.Pid)
	out, err := exec.Command(chaos, "clean").CombinedOutput()
	t.Logf("chaos clean: %s", strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("chaos clean: %v", err)
	}
	dead.Wait()
	assertNothingLeft(t, cli, runID(t, deadRun), deadPIDs)
	if ps := patchesOwnedBy(t, dead.Process.Pid); len(ps) > 0 {
		t.Errorf("processes the dead harness patched are still patched: %v", ps)
	}

	if ps := patchesOwnedBy(t, live.Process.Pid); !slices.Contains(ps, livePatch) {
		t.Errorf("the live harness's patched process %d was restored (patched now: %v)", livePatch, ps)
	}
	liveRun := runOf(t, live)
	if n := containersOf(t, cli, runID(t, liveRun)); n != 3 {
		t.Errorf("the live run has %d containers after chaos clean, want its 3", n)
	}
	// The live run ends as an interrupted run does, and takes its own away.
	live.Process.Signal(syscall.SIGINT)
	live.Wait()
	assertNothingLeft(t, cli, runID(t, liveRun), nil)
	if ps := patchesOwnedBy(t, live.Process.Pid); len(ps) > 0 {
		t.Errorf("still patched after the live run ended: %v", ps)
	}
}

// startHarness starts chaos run of cleanPlan named name, with results of
// its own, and waits until its clock fault is in force.
func startHarness(t *testing.T, chaos, name string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	plan := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(plan, []byte(fmt.Sprintf(cleanPlan, name)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chaos, "run", "--results", filepath.Join(dir, "results"), plan)
	cmd.Stdout, cmd.Stderr = testenv.Log(t), testenv.Log(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
			exec.Command(chaos, "clean").Run()
		}
	})
	return cmd
}

// runOf is the folder of the one run of harness cmd.
func runOf(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	results := cmd.Args[len(cmd.Args)-2]
	for range 600 {
		if m, _ := filepath.Glob(filepath.Join(results, "*", "*", "run.json")); len(m) == 1 {
			return filepath.Dir(m[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no run under %s after 60s", results)
	return ""
}

// patchOf waits until harness pid has patched a process, and returns it.
func patchOf(t *testing.T, pid int) int {
	t.Helper()
	for range 1200 {
		if ps := patchesOwnedBy(t, pid); len(ps) > 0 {
			return ps[0]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("harness %d patched nothing in 2 minutes", pid)
	return 0
}

// patchesOwnedBy lists the processes patched by harness pid.
func patchesOwnedBy(t *testing.T, pid int) []int {
	t.Helper()
	found, err := vdsoclock.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, p := range found {
		if strings.HasPrefix(p.Owner, fmt.Sprintf("%d:", pid)) {
			out = append(out, p.Pid)
		}
	}
	return out
}

// waitZombie waits until process pid has died, unreaped.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for range 1000 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("harness %d is not a zombie 1s after SIGKILL", pid)
}

func containersOf(t *testing.T, cli *client.Client, runID string) int {
	t.Helper()
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", containers.LabelRun+"="+runID))})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}
