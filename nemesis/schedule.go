package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/clock"
	"github.com/chaos-testing/chaos/plans"
)

// Schedule runs a plan's faults on their timetable. Fault i first starts at
// FirstAfter, then every Interval (Times times, if given), and lasts
// Duration. Victims are drawn
// from the fault's role with a generator seeded by the run's seed and i, so
// one seed gives one schedule.
type Schedule struct {
	world  *World
	h      *history.Appender
	faults []*Fault
	seed   int64
	clock  clock.Clock

	mu     sync.Mutex
	active map[int]*activeFault
}

// activeFault is a fault in force. Its mutex orders its heal and the
// reinstalls that restarts of nodes ask of it: none runs after the heal.
type activeFault struct {
	k     kind
	kind  string
	fault Injected

	mu     sync.Mutex
	healed bool
}

// NewSchedule prepares the faults of a plan on target (the plan's
// cluster, targets.Target, whose capabilities the faults ask for).
func NewSchedule(env Env, target any, h *history.Appender, faults []*Fault, seed int64) *Schedule {
	return &Schedule{world: NewWorld(env, target), h: h, faults: faults, seed: seed, clock: clock.Real, active: map[int]*activeFault{}}
}

// WithClock makes the schedule keep c's time (a test's fake clock) rather
// than the system's. Run's context then carries no deadline: the test
// cancels it.
func (s *Schedule) WithClock(c clock.Clock) *Schedule {
	s.clock = c
	return s
}

// Run injects faults until ctx ends, then heals every fault still active.
// It returns when ctx ends, whatever the faults (a plan may have none),
// or sooner when a fault fails.
func (s *Schedule) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(s.faults))
	for i := range s.faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.runFault(ctx, i)
		}()
	}
	wg.Wait()
	if errors.Join(errs...) == nil {
		<-ctx.Done()
	}
	hctx, cancel := healContext()
	defer cancel()
	return errors.Join(append(errs, s.Heal(hctx))...)
}

func (s *Schedule) runFault(ctx context.Context, i int) error {
	f := s.faults[i]
	rng := plans.Rand(s.seed, plans.FaultStream(i))
	next := s.clock.Now().Add(f.FirstAfter.Duration)
	for done := 0; f.Times == 0 || done < f.Times; done++ {
		if !s.sleepUntil(ctx, next) {
			return nil
		}
		next = next.Add(f.Interval.Duration)
		// Starting later than this would run the fault into the next one.
		startCtx, cancel := s.clock.WithDeadline(ctx, next.Add(-f.Duration.Duration))
		err := s.start(startCtx, i, f, rng)
		cancel()
		if err != nil {
			return errors.Join(err, s.healOne(i))
		}
		s.sleepUntil(ctx, s.clock.Now().Add(f.Duration.Duration))
		if err := s.healOne(i); err != nil {
			return err
		}
	}
	return nil
}

// healContext bounds a heal: it must run after the run's context ended,
// but a hung engine call must not hang the run with it.
func healContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 60*time.Second)
}

func (s *Schedule) healOne(i int) error {
	ctx, cancel := healContext()
	defer cancel()
	return s.stop(ctx, i)
}

// start injects one fault and records it. The invocation is written
// before the fault is known: it names the fault kind; the completion
// names what was hit. A combined fault runs, and is recorded as, the
// fault it draws.
func (s *Schedule) start(ctx context.Context, i int, f *Fault, rng *rand.Rand) error {
	if g, ok := f.k.draw(f, rng, len(s.world.Candidates(ctx, "nodes"))); ok {
		f = g
	}
	op := f.Kind + "-start"
	if _, err := s.h.Invoke(op, nil); err != nil {
		return err
	}
	restarts := s.world.restarts.Load()
	in, err := f.k.start(ctx, s.world, f, rng)
	if len(in.Targets) > 0 || in.State != nil {
		a := &activeFault{k: f.k, kind: f.Kind, fault: in}
		s.mu.Lock()
		s.active[i] = a
		s.mu.Unlock()
		// A node restarted while this fault was being installed (into
		// its old namespace, or at its old address), and the restart's
		// reinstall may have missed it: it puts itself back.
		if _, ok := f.k.reinstaller(); ok && s.world.restarts.Load() != restarts {
			err = errors.Join(err, s.reinstallOne(ctx, a))
		}
	}
	return s.complete(op, in.Targets, err)
}

func (s *Schedule) stop(ctx context.Context, i int) error {
	s.mu.Lock()
	a, ok := s.active[i]
	delete(s.active, i)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	op := a.kind + "-end"
	if _, err := s.h.Invoke(op, a.fault.Targets); err != nil {
		return err
	}
	a.mu.Lock()
	a.healed = true
	err := a.k.stop(ctx, s.world, a.fault)
	a.mu.Unlock()
	if err := s.complete(op, a.fault.Targets, err); err != nil {
		return err
	}
	// A restarted node lost the faults still in force on it.
	if a.k.traits().RestartsNodes {
		return s.reinstall(ctx)
	}
	return nil
}

// reinstall puts back the faults in force that a restarted node lost, so
// that what the history says is in force is.
func (s *Schedule) reinstall(ctx context.Context) error {
	s.mu.Lock()
	var rs []*activeFault
	for _, a := range s.active {
		if _, ok := a.k.reinstaller(); ok {
			rs = append(rs, a)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, a := range rs {
		errs = append(errs, s.reinstallOne(ctx, a))
	}
	return errors.Join(errs...)
}

// reinstallOne puts back one fault, unless it has been healed meanwhile.
func (s *Schedule) reinstallOne(ctx context.Context, a *activeFault) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.healed {
		return nil
	}
	ri, _ := a.k.reinstaller()
	return ri.Reinstall(context.WithoutCancel(ctx), s.world, a.fault)
}

// complete writes a nemesis completion. It is always info, as in Jepsen:
// a fault is a fact about the world, not a success or failure.
func (s *Schedule) complete(op string, targets []string, err error) error {
	if targets == nil {
		targets = []string{} // "nobody was hit" reads better than no value
	}
	if _, herr := s.h.Complete(history.Info, op, targets, err); herr != nil {
		return herr
	}
	if err != nil {
		return fmt.Errorf("%s %v: %w", op, targets, err)
	}
	return nil
}

// Finish, once the faults have healed, has each kind among them that
// checks something then (Finisher) check it, and record it.
func (s *Schedule) Finish(ctx context.Context) error { return finish(ctx, s.world, s.h, s.faults) }

// Heal ends every active fault. It is idempotent.
func (s *Schedule) Heal(ctx context.Context) error {
	s.mu.Lock()
	var ids []int
	for i := range s.active {
		ids = append(ids, i)
	}
	s.mu.Unlock()
	var first error
	for _, i := range ids {
		if err := s.stop(ctx, i); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Active describes the faults in force, for the status line.
func (s *Schedule) Active() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, a := range s.active {
		out = append(out, a.kind+" "+strings.Join(a.fault.Targets, " "))
	}
	sort.Strings(out)
	return out
}

// sleepUntil waits until t; false if ctx ended first, or ends by then (a
// fault due at the time limit must not be injected for an instant).
func (s *Schedule) sleepUntil(ctx context.Context, t time.Time) bool {
	if d, ok := ctx.Deadline(); ok && !t.Before(d) {
		<-ctx.Done()
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.clock.After(t.Sub(s.clock.Now())):
		// Both may be ready at once; select picks either, so ask again.
		return ctx.Err() == nil
	}
}
