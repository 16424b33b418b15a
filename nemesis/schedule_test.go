package nemesis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/clock"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
)

// event is one thing a nemesis did to a process, as the fake env saw it.
type event struct {
	at     time.Time
	proc   string
	action string // a signal (STOP, CONT, KILL) or RESTART
}

// fakeEnv has fixed processes per role and records what is done to them.
// It hands out candidates in a fresh random order each time, as a live
// environment may: the schedule must not depend on that order.
type fakeEnv struct {
	roles     map[string][]string
	failSig   string        // a signal that fails
	healDelay time.Duration // how long CONT takes
	// onSignal, if set, changes roles as a signal lands (under mu).
	onSignal func(roles map[string][]string, p, sig string)

	mu     sync.Mutex
	events []event
	asked  map[string]int // Candidates calls per role
}

func newEnv(roles map[string][]string) *fakeEnv {
	return &fakeEnv{roles: roles, asked: map[string]int{}}
}

func (e *fakeEnv) Candidates(_ context.Context, role string) []nemesis.Process {
	e.mu.Lock()
	e.asked[role]++
	var ps []nemesis.Process
	for _, n := range e.roles[role] {
		ps = append(ps, nemesis.Process{Name: n})
	}
	e.mu.Unlock()
	rand.Shuffle(len(ps), func(a, b int) { ps[a], ps[b] = ps[b], ps[a] })
	return ps
}

func (e *fakeEnv) record(p nemesis.Process, action string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, event{time.Now(), p.Name, action})
	if e.onSignal != nil {
		e.onSignal(e.roles, p.Name, action)
	}
}

// Nodes are the processes of role nodes, as nodes of a cluster.
func (e *fakeEnv) Nodes(bool) []cluster.Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ns []cluster.Node
	for _, n := range e.roles["nodes"] {
		ns = append(ns, cluster.Node{Container: containers.Container{ID: n, Name: n}})
	}
	return ns
}

func (e *fakeEnv) Signal(_ context.Context, p nemesis.Process, sig string) error {
	e.record(p, sig)
	if sig == "CONT" {
		time.Sleep(e.healDelay)
	}
	if sig == e.failSig {
		return fmt.Errorf("cannot send %s to %s", sig, p.Name)
	}
	return nil
}

func (e *fakeEnv) Restart(_ context.Context, p nemesis.Process) error {
	e.record(p, "RESTART")
	return nil
}

func (e *fakeEnv) NetExec(context.Context, nemesis.Process, ...string) error {
	return errors.New("the fake env runs no commands")
}

func (e *fakeEnv) Address(p nemesis.Process) string { return p.Name }

func (e *fakeEnv) Events() []event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

func (e *fakeEnv) count(action string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if ev.action == action {
			n++
		}
	}
	return n
}

func (e *fakeEnv) Asked(role string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.asked[role]
}

var testRoles = map[string][]string{
	"nodes":   {"n1", "n2", "n3", "n4", "n5"},
	"clients": {"c0", "c1", "c2"},
}

func ms(n int) plans.Duration { return plans.Duration{Duration: time.Duration(n) * time.Millisecond} }

// every is a fault's schedule on a millisecond scale, one victim of role
// at a time.
func every(role string, firstAfter, interval, duration int) plans.Schedule {
	return plans.Schedule{Target: role, Count: 1, FirstAfter: ms(firstAfter), Interval: ms(interval), Duration: ms(duration)}
}

// fault is a fault of kind on schedule s, bound as a plan's fault is, on
// a target with testRoles' nodes and clients.
func fault(t *testing.T, kind string, s plans.Schedule) *nemesis.Fault {
	t.Helper()
	return nemesis.BindFault(t, kind, s, nil, nemesis.Setting{TargetKind: "fake", Nodes: len(testRoles["nodes"]), Clients: len(testRoles["clients"])})
}

// schedule makes a Schedule writing to a fresh history file. The faults
// ask nothing of the target (nil).
func schedule(t *testing.T, env nemesis.Env, faults []*nemesis.Fault, seed int64) (*nemesis.Schedule, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := history.OpenAppender(path, history.NewClock(), history.Nemesis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return nemesis.NewSchedule(env, nil, h, faults, seed), path
}

// runFor runs s until d has passed, and fails the test if Run does not
// return promptly after.
func runFor(t *testing.T, s *nemesis.Schedule, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d + 2*time.Second):
		t.Fatal("Run did not return within 2s of its context ending")
		return nil
	}
}

// runUntil runs s until env has seen n faults start (of action start),
// then cancels it and waits for Run to return.
func runUntil(t *testing.T, s *nemesis.Schedule, env *fakeEnv, n int, start string) {
	t.Helper()
	stop := runInBackground(t, s)
	deadline := time.Now().Add(10 * time.Second)
	for env.count(start) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d faults started in 10s, want %d", env.count(start), n)
		}
		time.Sleep(time.Millisecond)
	}
	stop(5 * time.Second)
}

// runInBackground starts running s. stop cancels the run and fails the
// test unless Run returns, without an error, within the time given.
func runInBackground(t *testing.T, s *nemesis.Schedule) (stop func(within time.Duration)) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return func(within time.Duration) {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(within):
			t.Fatalf("Run did not return within %s of cancellation", within)
		}
	}
}

func readOps(t *testing.T, path string) []history.Op {
	t.Helper()
	ops, trunc, err := history.Read(path)
	if err != nil || trunc != nil {
		t.Fatalf("history.Read: %v, %v", trunc, err)
	}
	for _, op := range ops {
		if op.Process != history.Nemesis {
			t.Errorf("op %s is not the nemesis's", op)
		}
	}
	return ops
}

func targets(t *testing.T, op history.Op) []string {
	t.Helper()
	var ts []string
	if len(op.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(op.Value, &ts); err != nil {
		t.Fatalf("op %s: value is not a list of targets: %v", op, err)
	}
	return ts
}

// recorded is one injected fault as the history tells it.
type recorded struct {
	victims []string
	start   time.Duration // of the start's invocation
	end     time.Duration // of the end's completion
}

// faultsIn checks the history is a sequence of start invoke+info, end
// invoke+info quadruples for one fault kind, and returns the faults.
func faultsIn(t *testing.T, ops []history.Op, kind string) []recorded {
	t.Helper()
	if len(ops)%4 != 0 {
		t.Fatalf("%d history entries; want start and end, each invoke+info, per fault:\n%s", len(ops), dump(ops))
	}
	var out []recorded
	for i := 0; i < len(ops); i += 4 {
		q := ops[i : i+4]
		for j, want := range []struct {
			typ history.Type
			f   string
		}{
			{history.Invoke, kind + "-start"}, {history.Info, kind + "-start"},
			{history.Invoke, kind + "-end"}, {history.Info, kind + "-end"},
		} {
			if q[j].Type != want.typ || q[j].F != want.f {
				t.Fatalf("entry %d is %s, want %s %s:\n%s", i+j, q[j], want.typ, want.f, dump(ops))
			}
			if q[j].Error != "" {
				t.Errorf("entry %s carries an error", q[j])
			}
		}
		victims := targets(t, q[1])
		if len(victims) == 0 {
			t.Fatalf("fault at entry %d hit nobody: %s", i, q[1])
		}
		if !slices.Equal(targets(t, q[2]), victims) || !slices.Equal(targets(t, q[3]), victims) {
			t.Errorf("fault at entry %d started on %v but ended on %v / %v", i, victims, targets(t, q[2]), targets(t, q[3]))
		}
		out = append(out, recorded{victims, q[0].Time, q[3].Time})
	}
	return out
}

func dump(ops []history.Op) string {
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintln(&b, "  ", op)
	}
	return b.String()
}

// pairs checks that each start action on a victim is followed by the heal
// action on that same victim before anything else happens, and returns the
// victims in order and how long each fault lasted.
func pairs(t *testing.T, evs []event, start, heal string) ([]string, []time.Duration) {
	t.Helper()
	if len(evs)%2 != 0 {
		t.Fatalf("%d env events, want %s/%s pairs: %v", len(evs), start, heal, evs)
	}
	var victims []string
	var lasted []time.Duration
	for i := 0; i < len(evs); i += 2 {
		s, h := evs[i], evs[i+1]
		if s.action != start || h.action != heal || s.proc != h.proc {
			t.Fatalf("events %d, %d are %s %s, %s %s; want %s then %s on one victim", i, i+1, s.action, s.proc, h.action, h.proc, start, heal)
		}
		victims = append(victims, s.proc)
		lasted = append(lasted, h.at.Sub(s.at))
	}
	return victims, lasted
}

// A fault every 60 ms lasting 20 ms, first after 10 ms, for 230 ms: four
// faults (at 10, 70, 130 and 190 ms), each started and healed on one victim
// and recorded in the history. (230 ms rather than 250: the fault due at
// 250 ms, the very moment the run ends, races the end and may be injected
// for an instant; TestScheduleStartsNothingAfterCancel is about that.)
func TestScheduleInjectsAndHeals(t *testing.T) {
	for _, tc := range []struct {
		kind, role  string
		start, heal string
	}{
		{"pause", "clients", "STOP", "CONT"},
		{"pause", "nodes", "STOP", "CONT"},
		{"kill", "nodes", "KILL", "RESTART"},
	} {
		t.Run(tc.kind+"/"+tc.role, func(t *testing.T) {
			env := newEnv(testRoles)
			s, path := schedule(t, env, []*nemesis.Fault{fault(t, tc.kind, every(tc.role, 10, 60, 20))}, 1)
			begin := time.Now()
			if err := runFor(t, s, 230*time.Millisecond); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if a := s.Active(); len(a) != 0 {
				t.Errorf("faults still active after Run: %v", a)
			}

			end := begin.Add(230 * time.Millisecond)
			evs := env.Events()
			victims, _ := pairs(t, evs, tc.start, tc.heal)
			// Faults are due at 10, 70, 130 and 190 ms. A loaded machine may
			// start them late, never early, and the end of the run may cut
			// the last one short. (Faults that start after the run ended
			// are TestScheduleStartsNothingAfterCancel's business.)
			started := 0
			for i, v := range victims {
				at, healed := evs[2*i].at, evs[2*i+1].at
				if at.Before(end) {
					started++
				}
				if !slices.Contains(testRoles[tc.role], v) {
					t.Errorf("fault %d hit %s, not one of the %s", i, v, tc.role)
				}
				due := time.Duration(10+60*i) * time.Millisecond
				if at.Sub(begin) < due {
					t.Errorf("fault %d began %s after Run, before it was due (%s)", i, at.Sub(begin), due)
				}
				if healed.Before(end) && healed.Sub(at) < 20*time.Millisecond {
					t.Errorf("fault %d lasted %s, less than its 20ms", i, healed.Sub(at))
				}
			}
			if started < 2 || started > 4 {
				t.Errorf("%d faults started in 230ms, want 4 (at least 2 on a loaded machine)", started)
			}

			faults := faultsIn(t, readOps(t, path), tc.kind)
			if len(faults) != len(victims) {
				t.Fatalf("history records %d faults, the env saw %d", len(faults), len(victims))
			}
			for i, f := range faults {
				if !slices.Equal(f.victims, []string{victims[i]}) {
					t.Errorf("history fault %d hit %v, the env saw %s", i, f.victims, victims[i])
				}
				if d := evs[2*i+1].at.Sub(evs[2*i].at); f.end-f.start < d {
					t.Errorf("history fault %d lasted %s, less than the %s the env saw", i, f.end-f.start, d)
				}
				if i > 0 && f.start < faults[i-1].end {
					t.Errorf("fault %d started before fault %d ended", i, i-1)
				}
			}
		})
	}
}

// Cancelling the run in the middle of a fault heals it before Run returns.
func TestScheduleHealsOnCancel(t *testing.T) {
	env := newEnv(testRoles)
	s, path := schedule(t, env, []*nemesis.Fault{fault(t, "pause", every("clients", 10, 10_000, 10_000))}, 1)
	stop := runInBackground(t, s)
	deadline := time.Now().Add(2 * time.Second)
	for len(env.Events()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no fault started within 2s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	victim := env.Events()[0].proc
	if a := s.Active(); !slices.Equal(a, []string{"pause " + victim}) {
		t.Errorf("Active() during the fault = %q, want [pause %s]", a, victim)
	}
	stop(2 * time.Second) // the fault lasts 10s: Run heals it, not waits it out
	evs := env.Events()
	if len(evs) != 2 || evs[0].action != "STOP" || evs[1].action != "CONT" || evs[1].proc != victim {
		t.Fatalf("env events %v, want STOP then CONT of %s", evs, victim)
	}
	if a := s.Active(); len(a) != 0 {
		t.Errorf("Active() after Run = %v", a)
	}
	faults := faultsIn(t, readOps(t, path), "pause")
	if len(faults) != 1 || !slices.Equal(faults[0].victims, []string{victim}) {
		t.Errorf("history records %+v, want one pause of %s, started and ended", faults, victim)
	}
	// Healing again has nothing left to do.
	if err := s.Heal(context.Background()); err != nil || len(env.Events()) != 2 {
		t.Errorf("second Heal: %v, events %v", err, env.Events())
	}
}

// Once the run is over, no fault starts: not even when the schedule has
// fallen behind (healing took longer than the interval) so that the next
// fault is already due at the moment the run ends. Each round cancels the
// run while a fault is in force and checks nothing started after.
func TestScheduleStartsNothingAfterCancel(t *testing.T) {
	const rounds = 10
	late := 0
	for range rounds {
		env := newEnv(testRoles)
		env.healDelay = 30 * time.Millisecond // longer than the interval
		s, path := schedule(t, env, []*nemesis.Fault{fault(t, "pause", every("clients", 1, 10, 5))}, 1)
		stop := runInBackground(t, s)
		for env.count("STOP") == 0 {
			time.Sleep(time.Millisecond)
		}
		cancelled := time.Now()
		stop(5 * time.Second)
		for _, e := range env.Events() {
			if e.action == "STOP" && e.at.After(cancelled) {
				late++
				break
			}
		}
		pairs(t, env.Events(), "STOP", "CONT") // late or not, every fault was healed
		faultsIn(t, readOps(t, path), "pause")
	}
	if late > 0 {
		t.Errorf("in %d of %d runs a fault started after the run was cancelled: "+
			"sleepUntil's select picks at random between a cancelled ctx and a timer that is already due", late, rounds)
	}
}

// One seed gives one sequence of victims, whatever order the env lists them in.
func TestScheduleSameSeedSameVictims(t *testing.T) {
	const n = 4
	run := func(seed int64) []string {
		env := newEnv(testRoles)
		s, _ := schedule(t, env, []*nemesis.Fault{fault(t, "pause", every("nodes", 5, 30, 10))}, seed)
		runUntil(t, s, env, n, "STOP")
		victims, _ := pairs(t, env.Events(), "STOP", "CONT")
		return victims[:n]
	}
	a, b := run(7), run(7)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 picked %v, then %v", a, b)
	}
	if c := run(8); slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 both picked %v", a)
	}
}

// Each fault of a plan draws from its own generator: adding a second fault
// does not change the first one's victims.
func TestScheduleFaultsDrawIndependently(t *testing.T) {
	const n = 4
	victimsOf := func(faults []*nemesis.Fault) []string {
		env := newEnv(testRoles)
		s, _ := schedule(t, env, faults, 3)
		runUntil(t, s, env, n, "STOP")
		var out []string
		for _, e := range env.Events() {
			if e.action == "STOP" {
				out = append(out, e.proc)
			}
		}
		return out[:n]
	}
	alone := victimsOf([]*nemesis.Fault{fault(t, "pause", every("clients", 5, 30, 10))})
	// The second fault sends KILL, never STOP: only the first's STOPs
	// count. It kills nodes, which the first does not pause (a kill of
	// clients, which would not do either, is no valid fault).
	with := victimsOf([]*nemesis.Fault{fault(t, "pause", every("clients", 5, 30, 10)), fault(t, "kill", every("nodes", 5, 30, 10))})
	if !slices.Equal(alone, with) {
		t.Errorf("fault 0 picked %v alone and %v beside another fault", alone, with)
	}
}

// Count victims are drawn at once, all different.
func TestScheduleCount(t *testing.T) {
	env := newEnv(testRoles)
	f := every("nodes", 5, 40, 10)
	f.Count = 3
	s, path := schedule(t, env, []*nemesis.Fault{fault(t, "pause", f)}, 1)
	runUntil(t, s, env, 3, "STOP") // the first fault's three STOPs
	faults := faultsIn(t, readOps(t, path), "pause")
	if len(faults) == 0 {
		t.Fatal("no fault")
	}
	for i, f := range faults {
		if len(f.victims) != 3 || len(slices.Compact(slices.Sorted(slices.Values(f.victims)))) != 3 {
			t.Errorf("fault %d hit %v, want 3 different nodes", i, f.victims)
		}
	}
}

// With nobody in the role, nothing is injected: the schedule waits for a
// holder until it is too late to start, and records that nobody was hit.
func TestScheduleEmptyRole(t *testing.T) {
	env := newEnv(testRoles) // no holder, ever
	s, path := schedule(t, env, []*nemesis.Fault{fault(t, "pause", every("holder", 10, 60, 20))}, 1)
	if err := runFor(t, s, 200*time.Millisecond); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if evs := env.Events(); len(evs) != 0 {
		t.Errorf("signals sent with nobody holding the lock: %v", evs)
	}
	if env.Asked("holder") < 2 {
		t.Errorf("holder asked for %d times; the schedule should keep looking until too late", env.Asked("holder"))
	}
	if a := s.Active(); len(a) != 0 {
		t.Errorf("Active() = %v", a)
	}
	ops := readOps(t, path)
	for _, op := range ops {
		if op.F != "pause-start" {
			t.Errorf("unexpected entry %s: nothing was paused, so nothing ends", op)
		}
		if op.Type == history.Info && len(targets(t, op)) != 0 {
			t.Errorf("entry %s names victims", op)
		}
	}
	if len(ops)%2 != 0 {
		t.Errorf("%d entries, want invoke+info pairs:\n%s", len(ops), dump(ops))
	}
}

// A fault whose start fails is still healed, and Run reports the failure.
func TestScheduleHealsFailedStart(t *testing.T) {
	env := newEnv(testRoles)
	env.failSig = "STOP"
	s, path := schedule(t, env, []*nemesis.Fault{fault(t, "pause", every("clients", 5, 1000, 500))}, 1)
	err := runFor(t, s, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "pause-start") || !strings.Contains(err.Error(), "cannot send STOP") {
		t.Errorf("Run = %v, want the failed pause-start", err)
	}
	evs := env.Events()
	if len(evs) != 2 || evs[0].action != "STOP" || evs[1].action != "CONT" || evs[0].proc != evs[1].proc {
		t.Fatalf("env events %v, want a STOP then a CONT of the same victim", evs)
	}
	ops := readOps(t, path)
	if len(ops) != 4 || ops[1].Error == "" || ops[3].F != "pause-end" {
		t.Errorf("history should record the failed start (with its error) and the heal:\n%s", dump(ops))
	}
}

// A kind that is not registered cannot be bound, so no schedule can be
// given a fault of it: the registry does not know it. (bind.Bind refuses
// a plan that names it, naming it: bind's tests check that error.)
func TestUnknownKindNotRegistered(t *testing.T) {
	if _, ok := nemesis.Nemeses.Lookup("explode"); ok {
		t.Error(`fault kind "explode" is registered`)
	}
	if _, ok := nemesis.Nemeses.Lookup("pause"); !ok {
		t.Error(`fault kind "pause" is not registered`)
	}
}

func TestNemesesRegistered(t *testing.T) {
	for _, k := range []string{"pause", "kill", "partition"} {
		if _, ok := nemesis.Nemeses.Lookup(k); !ok {
			t.Errorf("fault kind %q is not registered; have %v", k, nemesis.Nemeses.Names())
		}
	}
}

// A holder that released just before its stop landed is resumed at once,
// and the pause goes to a client that holds the lock.
func TestPauseMissedHolderIsResumed(t *testing.T) {
	env := newEnv(map[string][]string{"clients": {"c0", "c1", "c2"}, "holder": {"c1"}})
	env.onSignal = func(roles map[string][]string, p, sig string) {
		if p == "c1" && sig == "STOP" {
			roles["holder"] = []string{"c2"} // c1's release was still unread
		}
	}
	e := nemesis.Entry[struct{}]{Kind: "pause", Schedule: every("holder", 0, 0, 100)}
	in, err := nemesis.Pause{}.Start(context.Background(), nemesis.NewWorld(env, nil), e, plans.Rand(1, plans.FaultStream(0)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range env.Events() {
		got = append(got, e.action+" "+e.proc)
	}
	if strings.Join(got, ", ") != "STOP c1, CONT c1, STOP c2" || !slices.Equal(in.Targets, []string{"c2"}) {
		t.Errorf("signals %v, paused %v; want c1 stopped and resumed, then c2 paused", got, in.Targets)
	}
}

// A schedule without faults lasts until its context ends: a plan with no
// nemesis still runs its clients for the time limit.
func TestScheduleWithoutFaultsLasts(t *testing.T) {
	s, _ := schedule(t, &fakeEnv{}, nil, 1)
	start := time.Now()
	if err := runFor(t, s, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("Run returned after %s, before its context ended", took)
	}
}

// TestScheduleOnFakeClock: on a fake clock, a fault starts at first_after,
// heals after its duration and starts again an interval after it first
// did, with no real wait for any of it.
func TestScheduleOnFakeClock(t *testing.T) {
	env := newEnv(testRoles)
	fake := clock.NewFake(time.Unix(1000, 0))
	f := plans.Schedule{Target: "clients", Count: 1, FirstAfter: plans.Duration{Duration: 10 * time.Second},
		Interval: plans.Duration{Duration: time.Minute}, Duration: plans.Duration{Duration: 20 * time.Second}}
	s, _ := schedule(t, env, []*nemesis.Fault{fault(t, "pause", f)}, 1)
	s.WithClock(fake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	step := func(d time.Duration, stops, conts int) {
		t.Helper()
		fake.Advance(d)
		fake.BlockUntil(1) // the fault's loop waits again
		if env.count("STOP") != stops || env.count("CONT") != conts {
			t.Fatalf("at %s: %d STOP, %d CONT; want %d and %d", fake.Now().Sub(time.Unix(1000, 0)), env.count("STOP"), env.count("CONT"), stops, conts)
		}
	}
	fake.BlockUntil(1)
	step(9*time.Second, 0, 0)
	step(time.Second, 1, 0) // 10 s: paused
	step(19*time.Second, 1, 0)
	step(time.Second, 1, 1)    // 30 s: healed
	step(40*time.Second, 2, 1) // 70 s: paused again
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if env.count("CONT") != 2 {
		t.Errorf("%d CONT after the run ended, want the second pause healed too", env.count("CONT"))
	}
}

// TestScheduleTimes: a fault given times is injected that many times and
// no more, though the run goes on.
func TestScheduleTimes(t *testing.T) {
	env := newEnv(testRoles)
	f := every("nodes", 5, 30, 10)
	f.Times = 2
	s, path := schedule(t, env, []*nemesis.Fault{fault(t, "pause", f)}, 1)
	if err := runFor(t, s, 200*time.Millisecond); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if faults := faultsIn(t, readOps(t, path), "pause"); len(faults) != 2 {
		t.Errorf("%d faults in 200ms, every 30ms; want the 2 of times 2", len(faults))
	}
}
