package nemesis

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

	"github.com/chaos-testing/chaos/containers"
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

func (e *procEnv) Candidates(context.Context, string) []Process {
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
	w := NewWorld(env)
	for _, strobe := range []time.Duration{0, 20 * time.Millisecond} {
		f := plans.Fault{Kind: "clock", Target: "nodes", Count: 1, Spec: &ClockParams{Offset: plans.Duration{Duration: 20 * time.Second}, Clocks: "realtime", Strobe: plans.Duration{Duration: strobe}}}
		in, err := Clock{}.Start(context.Background(), w, f, rand.New(rand.NewPCG(1, 1)))
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
		if err := (Clock{}).Reinstall(context.Background(), w, in); err != nil {
			t.Fatal(err)
		}
		if !patchedNow(t, env.pids["n1"]) {
			t.Fatal("the restarted victim is not patched")
		}
		if patchedNow(t, old) {
			t.Fatal("the victim's old process is still patched")
		}
		for range 2 { // a heal, then the abort's
			if err := (Clock{}).Stop(context.Background(), w, in); err != nil {
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
		{plans.Fault{Kind: "clock", Target: "nodes", Spec: &ClockParams{}}, "offset"},
		{plans.Fault{Kind: "clock", Target: "nodes", Spec: &ClockParams{Offset: plans.Duration{Duration: time.Second}, Clocks: "tai"}}, "clocks"},
		{plans.Fault{Kind: "clock", Target: "nodes", Spec: &ClockParams{Offset: plans.Duration{Duration: time.Second}, Strobe: plans.Duration{Duration: time.Millisecond}}}, "strobe"},
		{plans.Fault{Kind: "clock", Target: "nodes", Spec: &ClockParams{Offset: plans.Duration{Duration: time.Second}, Strobe: plans.Duration{Duration: 5 * time.Second}}}, "strobe"},
		{plans.Fault{Kind: "clock", Target: "resource", Spec: &ClockParams{Offset: plans.Duration{Duration: time.Second}}}, "target"},
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
		vs := pickVictims(context.Background(), NewWorld(env), plans.Fault{Target: "nodes", Count: 2, Nodes: []string{"n4", "n5"}}, rand.New(rand.NewPCG(seed, 0)))
		if got := names(vs); len(got) != 2 || !slices.Contains(got, "n4") || !slices.Contains(got, "n5") {
			t.Fatalf("seed %d: victims %v; want n4 and n5", seed, got)
		}
	}
}

// leaderEnv names one of its processes leader.
type leaderEnv struct {
	procEnv
	leader string
}

func (e *leaderEnv) Candidates(ctx context.Context, role string) []Process {
	if role == "leader" {
		return []Process{{Name: e.leader}}
	}
	return e.procEnv.Candidates(ctx, role)
}

// TestLeaderAmongNodesGiven: a fault on the leader with nodes hits the
// leader only while it is one of them, and nothing while another leads.
func TestLeaderAmongNodesGiven(t *testing.T) {
	env := &leaderEnv{procEnv: procEnv{pids: map[string]int{"n1": 1, "n2": 2, "n3": 3}}, leader: "n1"}
	f := plans.Fault{Target: "leader", Nodes: []string{"n2", "n3"}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if vs := pickVictims(ctx, NewWorld(env), f, rand.New(rand.NewPCG(1, 0))); len(vs) != 0 {
		t.Fatalf("leader n1, nodes n2 and n3: victims %v; want none", names(vs))
	}
	env.leader = "n3"
	if got := names(pickVictims(context.Background(), NewWorld(env), f, rand.New(rand.NewPCG(1, 0)))); !slices.Equal(got, []string{"n3"}) {
		t.Fatalf("leader n3: victims %v; want [n3]", got)
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
		{Kind: "clock", Target: "nodes", Count: 1, Nodes: []string{"n1"}, Duration: plans.Duration{Duration: time.Minute}, Interval: plans.Duration{Duration: time.Minute}, Spec: &ClockParams{Offset: plans.Duration{Duration: time.Minute}, Clocks: "all"}},
		{Kind: "clock", Target: "nodes", Count: 1, Nodes: []string{"n2"}, Duration: plans.Duration{Duration: time.Minute}, Interval: plans.Duration{Duration: time.Minute}, Spec: &ClockParams{Offset: plans.Duration{Duration: -time.Minute}, Clocks: "realtime", Strobe: plans.Duration{Duration: 10 * time.Millisecond}}},
	}
	s, err := NewSchedule(env, h, faults, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	both := make(chan bool, 1)
	go func() {
		// Both are patched while the run lasts (a loaded machine may
		// take a while to patch them).
		for ctx.Err() == nil {
			n := 0
			for _, pid := range env.pids {
				if ok, _ := vdsoclock.Patched(pid); ok {
					n++
				}
			}
			if n == len(env.pids) {
				both <- true
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		both <- false
	}()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !<-both {
		t.Error("n1 and n2 were never patched at once during their faults")
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
	f := plans.Fault{Kind: "clock", Target: "nodes", Count: 1, Spec: &ClockParams{Offset: plans.Duration{Duration: 20 * time.Second}, Clocks: "realtime"}}
	w := NewWorld(env)
	in, err := Clock{}.Start(context.Background(), w, f, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !patchedNow(t, next) {
		t.Error("the successor is not patched")
	}
	if err := (Clock{}).Stop(context.Background(), w, in); err != nil || patchedNow(t, next) {
		t.Errorf("Stop: %v; still patched: %v", err, patchedNow(t, next))
	}
}

// clockReader is a process that answers each line on its stdin with its
// wall clock in seconds, read through the vDSO (bash's printf %()T calls
// time()).
type clockReader struct {
	pid int
	in  io.Writer
	out *bufio.Scanner
}

// readClock is the reader's bash script.
const readClock = `while read; do printf '%(%s)T\n' -1; done`

// startClockReader runs script in bash: readClock, or a script that
// becomes the reader later.
func startClockReader(t *testing.T, script string) *clockReader {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("ptrace of another process needs root here")
	}
	cmd := exec.Command("bash", "-c", script)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	for range 100 { // until bash runs its own program
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid)); exe != "" && exe != mustExe(t) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &clockReader{pid: cmd.Process.Pid, in: in, out: bufio.NewScanner(out)}
}

// skew is how far the reader's wall clock is from the truth, in whole
// seconds.
func (r *clockReader) skew(t *testing.T) int64 {
	t.Helper()
	fmt.Fprintln(r.in)
	if !r.out.Scan() {
		t.Fatalf("clock reader gone: %v", r.out.Err())
	}
	secs, err := strconv.ParseInt(r.out.Text(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return secs - time.Now().Unix()
}

func wantSkew(t *testing.T, r *clockReader, what string, want int64) {
	t.Helper()
	if got := r.skew(t); got < want-1 || got > want+1 {
		t.Errorf("%s: the clock is %ds off, want %ds", what, got, want)
	}
}

func clockOn(offset time.Duration, clocks string, strobe time.Duration) plans.Fault {
	return plans.Fault{Kind: "clock", Target: "nodes", Count: 1, Duration: plans.Duration{Duration: time.Minute}, Spec: &ClockParams{Offset: plans.Duration{Duration: offset}, Clocks: clocks, Strobe: plans.Duration{Duration: strobe}}}
}

// clockFaults starts clock faults on r, its one victim, in order.
func clockFaults(t *testing.T, r *clockReader, faults ...plans.Fault) (*World, []Injected) {
	t.Helper()
	w := NewWorld(&procEnv{pids: map[string]int{"n1": r.pid}})
	var ins []Injected
	for i, f := range faults {
		in, err := Clock{}.Start(context.Background(), w, f, plans.Rand(1, plans.FaultStream(i)))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return w, ins
}

func healClock(t *testing.T, w *World, in Injected) {
	t.Helper()
	if err := (Clock{}).Stop(context.Background(), w, in); err != nil {
		t.Fatal(err)
	}
}

// Clock faults on one process add up, each heal taking its own share out,
// on one patch that names this harness and goes with the last share. (A
// second fault on a process used to fail: "process ... is already
// patched".)
func TestClockSharesAddUp(t *testing.T) {
	r := startClockReader(t, readClock)
	w, in := clockFaults(t, r, clockOn(60*time.Second, "realtime", 0), clockOn(-20*time.Second, "all", 0))
	wantSkew(t, r, "+60s and -20s", 40)
	found, _ := vdsoclock.Scan()
	if i := slices.IndexFunc(found, func(p vdsoclock.Patch) bool { return p.Pid == r.pid }); i < 0 || found[i].Owner != containers.Harness() {
		t.Errorf("patches %+v: want %d owned by this harness (%s)", found, r.pid, containers.Harness())
	}
	healClock(t, w, in[0])
	wantSkew(t, r, "-20s left", -20)
	if !patchedNow(t, r.pid) {
		t.Fatal("the patch went with the first heal")
	}
	healClock(t, w, in[1])
	wantSkew(t, r, "both healed", 0)
	if patchedNow(t, r.pid) {
		t.Error("still patched after both heals")
	}
}

// A strobe and a bump on one process (the plan): while both are in
// force the clock is the bump plus the strobe's share of the moment, and
// once the strobe heals the bump alone.
func TestClockStrobeAndBumpCompose(t *testing.T) {
	r := startClockReader(t, readClock)
	w, in := clockFaults(t, r, clockOn(30*time.Second, "realtime", 20*time.Millisecond), clockOn(100*time.Second, "all", 0))
	seen := map[int64]bool{}
	for range 50 {
		s := r.skew(t)
		seen[(s+5)/10*10] = true // 100 or 130, give or take a second
		time.Sleep(5 * time.Millisecond)
	}
	if len(seen) != 2 || !seen[100] || !seen[130] {
		t.Errorf("clock offsets seen while strobed and bumped: %v, want 100 and 130", seen)
	}
	healClock(t, w, in[0])
	for range 5 {
		wantSkew(t, r, "the bump alone", 100)
		time.Sleep(20 * time.Millisecond)
	}
	healClock(t, w, in[1])
	wantSkew(t, r, "both healed", 0)
	if patchedNow(t, r.pid) {
		t.Error("still patched after both heals")
	}
}

// A victim that runs another program after its patch (a container's shell
// that execs its server, as ZooKeeper's does after a restart) loses the
// patch with its old program: the fault patches the new one.
func TestClockKeptAcrossExec(t *testing.T) {
	r := startClockReader(t, "read; exec bash -c \""+readClock+"\"")
	w, in := clockFaults(t, r, clockOn(60*time.Second, "realtime", 0))
	fmt.Fprintln(r.in) // the shell execs its "server"
	time.Sleep(3 * keepEvery)
	wantSkew(t, r, "after the exec", 60)
	healClock(t, w, in[0])
	wantSkew(t, r, "healed", 0)
	if patchedNow(t, r.pid) {
		t.Error("still patched after the heal")
	}
}

func TestLateTimers(t *testing.T) {
	faults := []plans.Fault{
		{Kind: "clock", Target: "clients", Spec: &ClockParams{Clocks: "all", Offset: plans.Duration{Duration: 28 * time.Second}}},
		{Kind: "clock", Target: "holder", Spec: &ClockParams{Clocks: "all", Offset: plans.Duration{Duration: 21 * time.Second}}},
		{Kind: "clock", Target: "clients", Spec: &ClockParams{Clocks: "all", Offset: plans.Duration{Duration: -40 * time.Second}}}, // heals forward
		{Kind: "clock", Target: "clients", Spec: &ClockParams{Clocks: "realtime", Offset: plans.Duration{Duration: time.Hour}}},    // no timer
		{Kind: "clock", Target: "nodes", Spec: &ClockParams{Clocks: "all", Offset: plans.Duration{Duration: time.Hour}}},           // not a client
		{Kind: "pause", Target: "clients"},
	}
	if got := LateTimers(faults); got != 49*time.Second {
		t.Errorf("LateTimers = %s, want 49s", got)
	}
}
