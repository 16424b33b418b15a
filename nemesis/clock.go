package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[ClockParams]("clock", Clock{}) }

// Clock moves the clocks of the victims' processes, and theirs alone, by
// the fault's offset (see package vdsoclock): one jump (a bump), or, with
// strobe set, a flip between no offset and the offset at that period for
// the fault's duration. Clock faults compose (see World): each is a share
// of its victims' offsets, and its heal takes its share out.
type Clock struct{}

// ClockParams are a clock fault's own fields.
type ClockParams struct {
	// Offset is how far the clocks move (negative: back).
	Offset plans.Duration `yaml:"offset"`
	// Clocks are the clocks moved: realtime (the wall clock, the default)
	// or all (the monotonic clocks too, which timeouts and leases use).
	Clocks string `yaml:"clocks"`
	// Strobe makes the fault flip between no offset and Offset every
	// Strobe, for the fault's duration; 0 is one jump (a bump).
	Strobe plans.Duration `yaml:"strobe"`
}

// clockSets are the plan's names for the sets of clocks a fault moves.
var clockSets = map[string]vdsoclock.Clocks{
	"realtime": vdsoclock.Realtime,
	"all":      vdsoclock.Realtime | vdsoclock.Monotonic,
}

// Check checks the role, the offset, the clocks and the strobe period.
func (Clock) Check(e *Entry[ClockParams], _ Setting) error {
	if err := checkRole(e, "nodes", "leader", "clients", "holder"); err != nil {
		return err
	}
	cp := &e.Params
	if cp.Offset.Duration == 0 {
		return plans.Fieldf("offset", "missing; expected how far to move the clock, such as 20s or -5s")
	}
	if cp.Clocks == "" {
		cp.Clocks = "realtime"
	}
	if _, ok := clockSets[cp.Clocks]; !ok {
		return plans.Fieldf("clocks", "%q: expected realtime or all", cp.Clocks)
	}
	if s := cp.Strobe.Duration; s != 0 && (s < 10*time.Millisecond || s >= e.Duration.Duration) {
		return plans.Fieldf("strobe", "%s: expected at least 10ms and less than the fault's duration (%s)", s, e.Duration)
	}
	return nil
}

// clockState is a clock fault in force.
type clockState struct {
	params ClockParams

	mu      sync.Mutex
	victims []Process
	// pids are the host processes that hold this fault's share, by victim.
	pids map[string]int
	// on says whether the strobe has the offset applied now.
	on    bool
	quit  chan struct{}
	loops sync.WaitGroup
}

// Pin moves the clocks of the processes recorded, by name, as far.
func (Clock) Pin(e Entry[ClockParams], targets []string) (Entry[ClockParams], error) {
	return pinProcesses(e, targets)
}

// Start patches the victims' clocks and applies the offset.
func (Clock) Start(ctx context.Context, w *World, e Entry[ClockParams], rng *rand.Rand) (Injected, error) {
	victims := pickVictims(ctx, w, e.Schedule, rng)
	if len(victims) == 0 {
		return Injected{}, nil
	}
	st := &clockState{params: e.Params, victims: victims, pids: map[string]int{}, on: true, quit: make(chan struct{})}
	in := Injected{Targets: describeClock(victims, st.params), State: st}
	st.loops.Add(1)
	go st.run(w)
	return in, st.patch(context.WithoutCancel(ctx), w)
}

// lateTimers bounds how late a client's timers may fire once a clock
// fault has healed: a heal that takes a client's monotonic clock back by
// d has a timer set meanwhile (the deadline of the operation in flight)
// fire up to d late. Shares add up, so LateTimers sums the forward
// offsets of the faults on clients' monotonic clocks.
func (Clock) lateTimers(e Entry[ClockParams]) time.Duration {
	if (e.Target == "clients" || e.Target == "holder") && e.Params.Clocks == "all" {
		return max(e.Params.Offset.Duration, 0)
	}
	return 0
}

// describeClock says, for the history, who was hit and how.
func describeClock(victims []Process, f ClockParams) []string {
	how := fmt.Sprintf("%+v", f.Offset.Duration)
	if f.Offset.Duration > 0 {
		how = "+" + f.Offset.Duration.String()
	}
	if f.Strobe.Duration > 0 {
		how = fmt.Sprintf("strobe 0/%s every %s", how, f.Strobe.Duration)
	}
	out := make([]string, len(victims))
	for i, v := range victims {
		out[i] = fmt.Sprintf("%s %s (%s)", v.Name, how, f.Clocks)
	}
	return out
}

// patch gives this fault's share to every victim's process that lacks it
// (all at start; a restarted one after a kill).
func (st *clockState) patch(ctx context.Context, w *World) error {
	penv, ok := w.Env.(ProcessEnv)
	if !ok {
		return errors.New("clock faults need the host's process ids, which this environment does not give")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var errs []error
	for _, v := range st.victims {
		// A kill can take the victim while it is being patched; then its
		// successor, if already up, is patched instead.
		for range 3 {
			pid, err := penv.HostPID(ctx, v)
			if errors.Is(err, containers.ErrNotRunning) {
				break // killed: patched again when it restarts (Reinstall)
			} else if err != nil {
				errs = append(errs, err)
				break
			}
			if err := st.join(w, v, pid); err != nil {
				if errors.Is(err, vdsoclock.ErrChanged) || exited(ctx, penv, v, pid) {
					continue // killed meanwhile, or running its server now
				}
				errs = append(errs, fmt.Errorf("%s: %w", v.Name, err))
			}
			break
		}
	}
	return errors.Join(errs...)
}

// exited waits up to a second for the victim's process pid to be gone. A
// process being killed fails a patch in many ways (no vDSO left in its
// maps, a thread that never stops, no /proc entry) a moment before the
// Engine says it has gone.
func exited(ctx context.Context, penv ProcessEnv, v Process, pid int) bool {
	deadline := time.Now().Add(time.Second)
	for {
		now, err := penv.HostPID(ctx, v)
		if errors.Is(err, containers.ErrNotRunning) || (err == nil && now != pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// join gives the victim's process pid this fault's share, unless it has
// it. The victim is pid from now on, even if this fails: keep tries again.
// st.mu is held.
func (st *clockState) join(w *World, v Process, pid int) error {
	if old, ok := st.pids[v.Name]; ok {
		if old == pid && w.clocks.holds(pid, st) {
			return nil
		}
		// The victim restarted: its old process, if any is left, must not
		// keep this fault's share.
		if err := w.clocks.drop(old, st); err != nil {
			return err
		}
	}
	st.pids[v.Name] = pid
	return w.clocks.join(pid, st, st.share())
}

// share is this fault's offsets now; st.mu is held.
func (st *clockState) share() vdsoclock.Offsets {
	if !st.on {
		return vdsoclock.Offsets{}
	}
	return clockSets[st.params.Clocks].By(st.params.Offset.Duration)
}

// keepEvery is how often a clock fault checks that its patches are in
// force: a process that runs another program (a container's shell that
// execs its server) loses its patch with its old program.
const keepEvery = 100 * time.Millisecond

// run flips the strobe's offset on and off, if the fault strobes, and
// patches again the victims that lost their patch, until Stop.
func (st *clockState) run(w *World) {
	defer st.loops.Done()
	keep := time.NewTicker(keepEvery)
	defer keep.Stop()
	var flip <-chan time.Time
	if st.params.Strobe.Duration > 0 {
		t := time.NewTicker(st.params.Strobe.Duration)
		defer t.Stop()
		flip = t.C
	}
	for {
		select {
		case <-st.quit:
			return
		case <-flip:
			st.flip(w)
		case <-keep.C:
			st.keep(w)
		}
	}
}

func (st *clockState) flip(w *World) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.on = !st.on
	for _, pid := range st.pids {
		// A process that died meanwhile (a kill) is patched again on its
		// restart; nothing to flip until then.
		_ = w.clocks.set(pid, st, st.share())
	}
}

// keep patches again each victim's process that lost this fault's share
// with its program. One that cannot be patched now (gone, until its
// restart's Reinstall) is tried again at the next tick.
func (st *clockState) keep(w *World) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, pid := range st.pids {
		if !w.clocks.holds(pid, st) {
			_ = w.clocks.join(pid, st, st.share())
		}
	}
}

// Reinstall patches again a victim that a kill restarted.
func (Clock) Reinstall(ctx context.Context, w *World, in Injected) error {
	return in.State.(*clockState).patch(ctx, w)
}

// Stop ends the strobe and the keeping, and takes this fault's share out of every process
// it holds; a process's patch goes with its last share. It may run twice
// (a heal, then the abort's): the second finds no share left.
func (Clock) Stop(_ context.Context, w *World, in Injected) error {
	st := in.State.(*clockState)
	st.mu.Lock()
	select {
	case <-st.quit:
	default:
		close(st.quit)
	}
	st.mu.Unlock()
	st.loops.Wait()
	st.mu.Lock()
	defer st.mu.Unlock()
	var errs []error
	for name, pid := range st.pids {
		if err := w.clocks.drop(pid, st); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		delete(st.pids, name)
	}
	return errors.Join(errs...)
}

// Explore moves one node's clocks, or the leader's, 1 to 30 s either
// way, the wall clock alone or all of them.
func (Clock) Explore(rng *rand.Rand, _ int) Entry[ClockParams] {
	offset := time.Duration(1+rng.IntN(30)) * time.Second
	if rng.IntN(2) == 0 {
		offset = -offset
	}
	return explored(drawRole(rng, "nodes", "leader"), ClockParams{Offset: plans.Duration{Duration: offset}, Clocks: drawRole(rng, "realtime", "all")})
}
