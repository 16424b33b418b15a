package nemesis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/cluster"
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

// Nodes: the victims are host processes, not a cluster's nodes.
func (e *procEnv) Nodes(bool) []cluster.Node                         { return nil }
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
	w := NewWorld(env, nil)
	for _, strobe := range []time.Duration{0, 20 * time.Millisecond} {
		f := clockOn(20*time.Second, "realtime", strobe)
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

// TestClockCheck: a clock fault's Check, as its binding runs it, names
// the field at fault.
func TestClockCheck(t *testing.T) {
	for _, c := range []struct {
		target string
		params ClockParams
		want   string
	}{
		{"nodes", ClockParams{}, "offset"},
		{"nodes", ClockParams{Offset: plans.Duration{Duration: time.Second}, Clocks: "tai"}, "clocks"},
		{"nodes", ClockParams{Offset: plans.Duration{Duration: time.Second}, Strobe: plans.Duration{Duration: time.Millisecond}}, "strobe"},
		{"nodes", ClockParams{Offset: plans.Duration{Duration: time.Second}, Strobe: plans.Duration{Duration: 5 * time.Second}}, "strobe"},
		{"resource", ClockParams{Offset: plans.Duration{Duration: time.Second}}, "target"},
	} {
		s := plans.Schedule{Target: c.target, Duration: plans.Duration{Duration: 5 * time.Second}}
		_, err := bind("clock", s, &c.params, Setting{})
		if fe, ok := errors.AsType[*plans.FieldError](err); !ok || fe.Field != c.want {
			t.Errorf("%s %+v: %v; want an error about %s", c.target, c.params, err, c.want)
		}
	}
}

// TestVictimsAmongNodesGiven: a fault with nodes picks only among them.
func TestVictimsAmongNodesGiven(t *testing.T) {
	env := &procEnv{pids: map[string]int{"n1": 1, "n2": 2, "n3": 3, "n4": 4, "n5": 5}}
	for seed := range uint64(20) {
		vs := pickVictims(context.Background(), NewWorld(env, nil), plans.Schedule{Target: "nodes", Count: 2, Nodes: []string{"n4", "n5"}}, rand.New(rand.NewPCG(seed, 0)))
		if got := names(vs); len(got) != 2 || !slices.Contains(got, "n4") || !slices.Contains(got, "n5") {
			t.Fatalf("seed %d: victims %v; want n4 and n5", seed, got)
		}
	}
}

// TestLeaderAmongNodesGiven: a fault on the leader with nodes hits the
// leader only while it is one of them, and nothing while another leads.
func TestLeaderAmongNodesGiven(t *testing.T) {
	c := newFakeCluster(3, 0)
	c.roles["leader"] = []string{"n1"}
	f := plans.Schedule{Target: "leader", Nodes: []string{"n2", "n3"}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if vs := pickVictims(ctx, NewWorld(c, c.target()), f, rand.New(rand.NewPCG(1, 0))); len(vs) != 0 {
		t.Fatalf("leader n1, nodes n2 and n3: victims %v; want none", names(vs))
	}
	c.roles["leader"] = []string{"n3"}
	if got := names(pickVictims(context.Background(), NewWorld(c, c.target()), f, rand.New(rand.NewPCG(1, 0)))); !slices.Equal(got, []string{"n3"}) {
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
	on := func(node string) plans.Schedule {
		return plans.Schedule{Target: "nodes", Count: 1, Nodes: []string{node}, Duration: plans.Duration{Duration: time.Minute}, Interval: plans.Duration{Duration: time.Minute}}
	}
	set := Setting{Nodes: 2}
	faults := []*Fault{
		bindFault(t, "clock", on("n1"), &ClockParams{Offset: plans.Duration{Duration: time.Minute}, Clocks: "all"}, set),
		bindFault(t, "clock", on("n2"), &ClockParams{Offset: plans.Duration{Duration: -time.Minute}, Clocks: "realtime", Strobe: plans.Duration{Duration: 10 * time.Millisecond}}, set),
	}
	s := NewSchedule(env, nil, h, faults, 1)
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
	w := NewWorld(env, nil)
	in, err := Clock{}.Start(context.Background(), w, clockOn(20*time.Second, "realtime", 0), rand.New(rand.NewPCG(1, 1)))
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

// clockOn is a clock fault on one node, lasting a minute, as Clock.Start
// takes it.
func clockOn(offset time.Duration, clocks string, strobe time.Duration) Entry[ClockParams] {
	return Entry[ClockParams]{Kind: "clock", Schedule: plans.Schedule{Target: "nodes", Count: 1, Duration: plans.Duration{Duration: time.Minute}},
		Params: ClockParams{Offset: plans.Duration{Duration: offset}, Clocks: clocks, Strobe: plans.Duration{Duration: strobe}}}
}

// clockFaults starts clock faults on r, its one victim, in order.
func clockFaults(t *testing.T, r *clockReader, faults ...Entry[ClockParams]) (*World, []Injected) {
	t.Helper()
	w := NewWorld(&procEnv{pids: map[string]int{"n1": r.pid}}, nil)
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
	clock := func(role, clocks string, offset time.Duration) *Fault {
		return bindFault(t, "clock", plans.Schedule{Target: role}, &ClockParams{Clocks: clocks, Offset: plans.Duration{Duration: offset}}, Setting{})
	}
	faults := []*Fault{
		clock("clients", "all", 28*time.Second),
		clock("holder", "all", 21*time.Second),
		clock("clients", "all", -40*time.Second), // heals forward
		clock("clients", "realtime", time.Hour),  // no timer
		clock("nodes", "all", time.Hour),         // not a client
		bindFault(t, "pause", plans.Schedule{Target: "clients"}, nil, Setting{}),
	}
	if got := LateTimers(faults); got != 49*time.Second {
		t.Errorf("LateTimers = %s, want 49s", got)
	}
}
