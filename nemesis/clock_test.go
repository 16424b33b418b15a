package nemesis

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
	"github.com/chaos-testing/chaos/plans"
)

// procEnv is an Env of host processes, each a victim named after its role.
type procEnv struct {
	mu   sync.Mutex
	pids map[string]int
	// successors take over from a victim whose process is gone, as a
	// restarted container's process does, from the second time its pid
	// is asked for (the Engine learns of a death a moment late).
	successors map[string]int
	asked      map[string]int
}

func (e *procEnv) Candidates(string) []Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ps []Process
	for name := range e.pids {
		ps = append(ps, Process{Name: name})
	}
	return ps
}
func (e *procEnv) Signal(context.Context, Process, string) error     { return nil }
func (e *procEnv) Restart(context.Context, Process) error            { return nil }
func (e *procEnv) NetExec(context.Context, Process, ...string) error { return nil }
func (e *procEnv) Address(p Process) string                          { return p.Name }
func (e *procEnv) HostPID(_ context.Context, p Process) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.asked == nil {
		e.asked = map[string]int{}
	}
	e.asked[p.Name]++
	if next, ok := e.successors[p.Name]; ok && e.asked[p.Name] > 1 && syscall.Kill(e.pids[p.Name], 0) == syscall.ESRCH {
		e.pids[p.Name] = next
		delete(e.successors, p.Name)
	}
	return e.pids[p.Name], nil
}

// sleeper starts a program that reads the clock through the vDSO now and
// then (sleep, from coreutils, in glibc's nanosleep: hardly), and ends it
// with the test.
func sleeper(t *testing.T) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("ptrace of another process needs root here")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until sleep runs its own program, with its own vDSO.
	for range 100 {
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe"); exe != "" && exe != mustExe(t) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd.Process.Pid
}

func mustExe(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func patchedNow(t *testing.T, pid int) bool {
	t.Helper()
	ok, err := vdsoclock.Patched(pid)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestClockPatchesAndHeals(t *testing.T) {
	env := &procEnv{pids: map[string]int{"n1": sleeper(t)}}
	for _, strobe := range []time.Duration{0, 20 * time.Millisecond} {
		f := plans.Fault{Kind: "clock", Target: "nodes", Count: 1, Offset: plans.Duration{Duration: 20 * time.Second},
			Clocks: "realtime", Strobe: plans.Duration{Duration: strobe}}
		in, err := Clock{}.Start(context.Background(), env, f, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("targets %q", in.Targets)
		if !patchedNow(t, env.pids["n1"]) {
			t.Fatal("not patched after Start")
		}
		time.Sleep(100 * time.Millisecond) // a few strobe flips
		// A kill restarted the victim: a new process, patched again.
		old := env.pids["n1"]
		env.mu.Lock()
		env.pids["n1"] = sleeper(t)
		env.mu.Unlock()
		if err := (Clock{}).Reinstall(context.Background(), env, in); err != nil {
			t.Fatal(err)
		}
		if !patchedNow(t, env.pids["n1"]) {
			t.Fatal("the restarted victim is not patched")
		}
		if patchedNow(t, old) {
			t.Fatal("the victim's old process is still patched")
		}
		for range 2 { // a heal, then the abort's
			if err := (Clock{}).Stop(context.Background(), env, in); err != nil {
				t.Fatal(err)
			}
		}
		if patchedNow(t, env.pids["n1"]) || patchedNow(t, old) {
			t.Fatal("still patched after Stop")
		}
	}
}

func TestClockCheckFault(t *testing.T) {
	for _, c := range []struct {
		f    plans.Fault
		want string
	}{
		{plans.Fault{Kind: "clock", Target: "nodes"}, "offset"},
		{plans.Fault{Kind: "clock", Target: "nodes", Offset: plans.Duration{Duration: time.Second}, Clocks: "tai"}, "clocks"},
		{plans.Fault{Kind: "clock", Target: "nodes", Offset: plans.Duration{Duration: time.Second}, Strobe: plans.Duration{Duration: time.Millisecond}}, "strobe"},
		{plans.Fault{Kind: "clock", Target: "nodes", Offset: plans.Duration{Duration: time.Second}, Strobe: plans.Duration{Duration: 5 * time.Second}}, "strobe"},
		{plans.Fault{Kind: "clock", Target: "resource", Offset: plans.Duration{Duration: time.Second}}, "target"},
	} {
		c.f.Duration = plans.Duration{Duration: 5 * time.Second}
		p := &plans.Plan{File: "p.yaml", Nemesis: []plans.Fault{c.f}}
		err := Clock{}.CheckFault(p, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error about %s", c.f, err, c.want)
		}
	}
}

// TestVictimsAmongNodesGiven: a fault with nodes picks only among them.
func TestVictimsAmongNodesGiven(t *testing.T) {
	env := &procEnv{pids: map[string]int{"n1": 1, "n2": 2, "n3": 3, "n4": 4, "n5": 5}}
	for seed := range uint64(20) {
		vs := pickVictims(context.Background(), env, plans.Fault{Target: "nodes", Count: 2, Nodes: []string{"n4", "n5"}}, rand.New(rand.NewPCG(seed, 0)))
		if got := names(vs); len(got) != 2 || !slices.Contains(got, "n4") || !slices.Contains(got, "n5") {
			t.Fatalf("seed %d: victims %v; want n4 and n5", seed, got)
		}
	}
}

// TestClockHealedWhenTheRunStops: a run that ends (its time limit, or an
// interrupt) in the middle of clock faults leaves no process patched.
func TestClockHealedWhenTheRunStops(t *testing.T) {
	env := &procEnv{pids: map[string]int{"n1": sleeper(t), "n2": sleeper(t)}}
	h, err := history.OpenAppender(filepath.Join(t.TempDir(), "history.jsonl"), history.NewClock(), history.Nemesis)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	faults := []plans.Fault{
		{Kind: "clock", Target: "nodes", Count: 1, Nodes: []string{"n1"}, Offset: plans.Duration{Duration: time.Minute}, Clocks: "all",
			Duration: plans.Duration{Duration: time.Minute}, Interval: plans.Duration{Duration: time.Minute}},
		{Kind: "clock", Target: "nodes", Count: 1, Nodes: []string{"n2"}, Offset: plans.Duration{Duration: -time.Minute}, Clocks: "realtime",
			Strobe: plans.Duration{Duration: 10 * time.Millisecond}, Duration: plans.Duration{Duration: time.Minute}, Interval: plans.Duration{Duration: time.Minute}},
	}
	s, err := NewSchedule(env, h, faults, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	go func() {
		// Both are patched while the run lasts.
		time.Sleep(200 * time.Millisecond)
		for name, pid := range env.pids {
			if ok, _ := vdsoclock.Patched(pid); !ok {
				t.Errorf("%s not patched during its fault", name)
			}
		}
	}()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for name, pid := range env.pids {
		if patchedNow(t, pid) {
			t.Errorf("%s still patched after the run", name)
		}
	}
}

// A victim killed as it is being patched (here: gone, though its pid is
// still given once) is not an error: its successor is patched instead.
func TestClockPatchesTheSuccessorOfAKilledVictim(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	next := sleeper(t)
	env := &procEnv{pids: map[string]int{"n1": gone.Process.Pid}, successors: map[string]int{"n1": next}}
	f := plans.Fault{Kind: "clock", Target: "nodes", Count: 1, Offset: plans.Duration{Duration: 20 * time.Second}, Clocks: "realtime"}
	in, err := Clock{}.Start(context.Background(), env, f, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !patchedNow(t, next) {
		t.Error("the successor is not patched")
	}
	if err := (Clock{}).Stop(context.Background(), env, in); err != nil || patchedNow(t, next) {
		t.Errorf("Stop: %v; still patched: %v", err, patchedNow(t, next))
	}
}
