package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[struct{}]("pause", Pause{}) }

// Pause stops processes with SIGSTOP and resumes them with SIGCONT, the way
// a stop-the-world GC or a frozen VM stops a process: it sees nothing, and
// its timers and leases run on without it. Pauses compose (see World): a
// process stays stopped while any pause holds it.
type Pause struct{}

// Check accepts any role: nodes and clients can both be paused.
func (Pause) Check(e *Entry[struct{}], _ Setting) error {
	return checkRole(e, "nodes", "leader", "clients", "holder")
}

// Start sends SIGSTOP to the victims.
func (Pause) Start(ctx context.Context, w *World, e Entry[struct{}], rng *rand.Rand) (Injected, error) {
	if e.Target == "holder" {
		return pauseHolders(ctx, w, e.Schedule, rng)
	}
	return holdAll(ctx, w, pickVictims(ctx, w, e.Schedule, rng), w.pause)
}

// Pin pauses the processes recorded, by name.
func (Pause) Pin(e Entry[struct{}], targets []string) (Entry[struct{}], error) {
	return pinProcesses(e, targets)
}

// followLag bounds how late the harness learns what a client wrote to the
// history (history.Follow reads it every 20 ms), a release included.
const followLag = 60 * time.Millisecond

// pauseHolders stops lock holders. A client picked as a holder may have
// released in the moment before its stop landed, and such a pause would
// freeze a client with nothing to lose. So once the victims are stopped
// (they can write nothing more) and what they wrote has been read, a
// victim that no longer holds is resumed at once, tens of milliseconds
// later and within this fault's start, and holders are picked again until
// one is caught or ctx ends.
func pauseHolders(ctx context.Context, w *World, f plans.Schedule, rng *rand.Rand) (Injected, error) {
	for {
		victims := pickVictims(ctx, w, f, rng)
		if len(victims) == 0 {
			return Injected{}, nil
		}
		in, err := holdAll(ctx, w, victims, w.pause)
		if err != nil {
			return in, err // Stop resumes them all
		}
		time.Sleep(followLag)
		holders := names(w.Candidates(ctx, "holder"))
		st := in.State.(*holding)
		hit := Injected{State: st}
		var missed []Process
		for i, v := range victims {
			if slices.Contains(holders, v.Name) {
				hit.Targets = append(hit.Targets, in.Targets[i])
			} else {
				missed = append(missed, v)
			}
		}
		err = releaseAll(context.WithoutCancel(ctx), st, missed, w.resume)
		st.held = slices.DeleteFunc(st.held, func(p Process) bool { return slices.Contains(names(missed), p.Name) })
		if err != nil {
			return in, err // Stop resumes those left
		}
		if len(hit.Targets) > 0 {
			return hit, nil
		}
		if ctx.Err() != nil {
			return Injected{}, nil
		}
	}
}

// Stop releases the victims, resuming those no other pause holds.
func (Pause) Stop(ctx context.Context, w *World, in Injected) error {
	st := in.State.(*holding)
	return releaseAll(ctx, st, st.held, w.resume)
}

// holding is a pause or a kill in force: its id in the world's ledger, and
// the victims it holds (those it found in another fault's hands it may
// not: see World).
type holding struct {
	id   int
	held []Process
}

// holdAll has a new fault act on each victim (World.pause or World.kill).
// The targets name each victim, with a note when another fault had it
// already.
func holdAll(ctx context.Context, w *World, victims []Process, act func(context.Context, Process, int) (bool, string, error)) (Injected, error) {
	if len(victims) == 0 {
		return Injected{}, nil
	}
	ctx = context.WithoutCancel(ctx) // the act is not cut short
	st := &holding{id: w.newID()}
	in := Injected{State: st}
	var errs []error
	for _, v := range victims {
		held, note, err := act(ctx, v, st.id)
		if held {
			st.held = append(st.held, v)
		}
		in.Targets = append(in.Targets, v.Name+note)
		errs = append(errs, err)
	}
	return in, errors.Join(errs...)
}

// releaseAll releases the fault's hold on each of ps (World.resume or
// World.restart).
func releaseAll(ctx context.Context, st *holding, ps []Process, release func(context.Context, Process, int) error) error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, release(ctx, p, st.id))
	}
	return errors.Join(errs...)
}

// Explore pauses one node, the leader or one client.
func (Pause) Explore(rng *rand.Rand, _ int) Entry[struct{}] {
	return explored(drawRole(rng, "nodes", "leader", "clients"), struct{}{})
}
