package nemesis_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
)

// CPULimit and SetCPULimit make nodeEnv a nemesis.CPUEnv, as the runner's
// env is.
func (e nodeEnv) CPULimit(ctx context.Context, p nemesis.Process) (containers.CPULimit, error) {
	return e.run.CPULimit(ctx, p.Container)
}

func (e nodeEnv) SetCPULimit(ctx context.Context, p nemesis.Process, l containers.CPULimit) error {
	return e.run.SetCPULimit(ctx, p.Container, l)
}

// TestCPUStarvesAndHealsExactly: a container that spins uses, each
// second, about the CPUs a cpu fault leaves it (at most 20% over, and
// at least half: a loaded machine may give it less); two faults
// overlapping leave it the fewer, and once both heal the container has
// its limit from before again, in the Engine and in its cgroup, and spins
// unhindered: more than either fault lets by.
func TestCPUStarvesAndHealsExactly(t *testing.T) {
	cli := testenv.Docker(t)
	ctx := context.Background()
	img, err := images.Ensure(ctx, cli, images.Node, testenv.Log(t))
	if err != nil {
		t.Fatal(err)
	}
	run := testenv.NewRun(t, cli, "cpustarve")
	c, err := run.Start(ctx, containers.Spec{Name: "n1", Role: "node", Image: img, Cmd: []string{"sh", "-c", "while :; do :; done"}})
	if err != nil {
		t.Fatal(err)
	}
	env := nodeEnv{run, cluster.Node{Container: c}}
	w := nemesis.NewWorld(env, nil)
	starve := func(cpus float64) func() {
		t.Helper()
		e := nemesis.Entry[nemesis.CPUParams]{Kind: "cpu", Schedule: plans.Schedule{Target: "nodes", Count: 1}, Params: nemesis.CPUParams{CPUs: cpus}}
		in, err := nemesis.CPU{}.Start(ctx, w, e, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cpu: %q", in.Targets)
		return func() {
			if err := (nemesis.CPU{}).Stop(ctx, w, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	within := func(what string, want float64) {
		t.Helper()
		got := cpusUsed(t, cli, c)
		t.Logf("%s: %.3f CPU used a second", what, got)
		if got > want*1.2 || got < want/2 {
			t.Errorf("%s: %.3f CPU used a second, want about %.2f", what, got, want)
		}
	}

	before, err := run.CPULimit(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cgroupBefore := cgroupCPU(t, run, c)
	free := cpusUsed(t, cli, c)
	t.Logf("unlimited: %.3f CPU used a second (limit %+v, cgroup %q)", free, before, cgroupBefore)
	// More than the 0.25 CPU fault lets by, 20% over included.
	const unhindered = 0.3
	if free < unhindered {
		t.Fatalf("the spinning container used %.3f CPU a second unlimited: the machine is too busy to tell a quota", free)
	}
	healQuarter := starve(0.25)
	within("0.25 CPU", 0.25)
	healTwentieth := starve(0.05)
	within("0.25 and 0.05 CPU", 0.05)
	healTwentieth()
	within("0.25 CPU again", 0.25)
	healQuarter()

	if after, err := run.CPULimit(ctx, c); err != nil || after != before {
		t.Errorf("limit after the heals: %+v (%v), want %+v as before", after, err, before)
	}
	if after := cgroupCPU(t, run, c); after != cgroupBefore {
		t.Errorf("cgroup after the heals: %q, want %q as before", after, cgroupBefore)
	}
	healed := cpusUsed(t, cli, c)
	t.Logf("healed: %.3f CPU used a second", healed)
	if healed < unhindered {
		t.Errorf("healed: %.3f CPU used a second, %.3f before", healed, free)
	}
}

// cpusUsed is the CPU time the container used each second over 2 s, as
// the Engine counts it (its cgroup's usage).
func cpusUsed(t *testing.T, cli *client.Client, c containers.Container) float64 {
	t.Helper()
	usage := func() (time.Time, uint64) {
		r, err := cli.ContainerStatsOneShot(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var s container.StatsResponse
		if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		return time.Now(), s.CPUStats.CPUUsage.TotalUsage
	}
	t0, u0 := usage()
	time.Sleep(2 * time.Second)
	t1, u1 := usage()
	return float64(u1-u0) / float64(t1.Sub(t0).Nanoseconds())
}

// cgroupCPU is the container's CPU quota and period as its cgroup has
// them, read inside it: cpu.max (cgroup v2) or cpu.cfs_quota_us and
// cpu.cfs_period_us (v1).
func cgroupCPU(t *testing.T, run *containers.Run, c containers.Container) string {
	t.Helper()
	out, err := run.Exec(context.Background(), c, "sh", "-c",
		"cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
