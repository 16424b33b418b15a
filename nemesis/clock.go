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

func init() { Nemeses.Register("clock", Clock{}) }

// Clock moves the clocks of the victims' processes, and theirs alone, by
// the fault's offset (see package vdsoclock): one jump (a bump), or, with
// strobe set, a flip between no offset and the offset at that period for
// the fault's duration. Heal takes the patch out again.
type Clock struct{}

// clockSets are the plan's names for the sets of clocks a fault moves.
var clockSets = map[string]vdsoclock.Clocks{
	"realtime": vdsoclock.Realtime,
	"all":      vdsoclock.Realtime | vdsoclock.Monotonic,
}

// CheckFault checks the role, the offset, the clocks and the strobe period.
func (Clock) CheckFault(p *plans.Plan, i int) error {
	if err := checkRole(p, i, "nodes", "leader", "clients", "holder"); err != nil {
		return err
	}
	f := &p.Nemesis[i]
	if f.Offset.Duration == 0 {
		return p.Errorf(plans.FaultField(i, "offset"), "missing; expected how far to move the clock, such as 20s or -5s")
	}
	if f.Clocks == "" {
		f.Clocks = "realtime"
	}
	if _, ok := clockSets[f.Clocks]; !ok {
		return p.Errorf(plans.FaultField(i, "clocks"), "%q: expected realtime or all", f.Clocks)
	}
	if s := f.Strobe.Duration; s != 0 && (s < 10*time.Millisecond || s >= f.Duration.Duration) {
		return p.Errorf(plans.FaultField(i, "strobe"), "%s: expected at least 10ms and less than the fault's duration (%s)", s, f.Duration)
	}
	return nil
}

// clockState is a clock fault in force.
type clockState struct {
	fault plans.Fault

	mu      sync.Mutex
	victims []Process
	patches map[string]*vdsoclock.Patch // by victim name
	// on says whether the strobe has the offset applied now.
	on        bool
	quit      chan struct{}
	strobeEnd sync.WaitGroup
}

// Start patches the victims' clocks and applies the offset.
func (Clock) Start(ctx context.Context, env Env, f plans.Fault, rng *rand.Rand) (Injected, error) {
	victims := pickVictims(ctx, env, f, rng)
	if len(victims) == 0 {
		return Injected{}, nil
	}
	st := &clockState{fault: f, victims: victims, patches: map[string]*vdsoclock.Patch{}, on: true, quit: make(chan struct{})}
	in := Injected{Targets: describeClock(victims, f), State: st}
	if err := st.patch(context.WithoutCancel(ctx), env); err != nil {
		return in, err
	}
	if f.Strobe.Duration > 0 {
		st.strobeEnd.Add(1)
		go st.strobe()
	}
	return in, nil
}

// describeClock says, for the history, who was hit and how.
func describeClock(victims []Process, f plans.Fault) []string {
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

// patch installs the patch in every victim that lacks one (all at start; a
// restarted one after a kill) and sets the offset in force.
func (st *clockState) patch(ctx context.Context, env Env) error {
	penv, ok := env.(ProcessEnv)
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
			if err := st.install(v, pid); err != nil {
				if exited(ctx, penv, v, pid) {
					continue // killed meanwhile
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

// install patches the victim's process pid, unless it is patched already,
// and sets the offset in force; st.mu is held.
func (st *clockState) install(v Process, pid int) error {
	if p := st.patches[v.Name]; p != nil && p.Pid == pid {
		return nil
	} else if p != nil {
		// The victim restarted; its old process, if any is left, must not
		// stay patched.
		if err := vdsoclock.Remove(p.Pid); err != nil {
			return err
		}
		delete(st.patches, v.Name)
	}
	p, err := vdsoclock.Install(pid)
	if err != nil {
		return err
	}
	st.patches[v.Name] = p
	return st.set(p)
}

// set applies the offset in force to one patch; st.mu is held.
func (st *clockState) set(p *vdsoclock.Patch) error {
	offset := st.fault.Offset.Duration
	if !st.on {
		offset = 0
	}
	return p.Set(offset, clockSets[st.fault.Clocks])
}

// strobe flips the offset on and off until Stop.
func (st *clockState) strobe() {
	defer st.strobeEnd.Done()
	t := time.NewTicker(st.fault.Strobe.Duration)
	defer t.Stop()
	for {
		select {
		case <-st.quit:
			return
		case <-t.C:
		}
		st.mu.Lock()
		st.on = !st.on
		for _, p := range st.patches {
			// A process that died meanwhile (a kill) is patched again on
			// its restart; nothing to flip until then.
			_ = st.set(p)
		}
		st.mu.Unlock()
	}
}

// Reinstall patches again a victim that a kill restarted.
func (Clock) Reinstall(ctx context.Context, env Env, in Injected) error {
	return in.State.(*clockState).patch(ctx, env)
}

// Stop ends the strobe and takes every patch out. It may run twice (a heal,
// then the abort's): the second finds nothing patched.
func (Clock) Stop(_ context.Context, _ Env, in Injected) error {
	st := in.State.(*clockState)
	st.mu.Lock()
	select {
	case <-st.quit:
	default:
		close(st.quit)
	}
	st.mu.Unlock()
	st.strobeEnd.Wait()
	st.mu.Lock()
	defer st.mu.Unlock()
	var errs []error
	for name, p := range st.patches {
		if err := vdsoclock.Remove(p.Pid); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
