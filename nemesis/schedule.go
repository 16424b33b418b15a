package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
)

// Schedule runs a plan's faults on their timetable. Fault i first starts at
// FirstAfter, then every Interval, and lasts Duration. Victims are drawn
// from the fault's role with a generator seeded by the run's seed and i, so
// one seed gives one schedule.
type Schedule struct {
	env    Env
	h      *history.Appender
	faults []plans.Fault
	seed   int64

	mu     sync.Mutex
	active map[int]activeFault
}

type activeFault struct {
	nemesis Nemesis
	kind    string
	victims []Process
}

// NewSchedule prepares the faults of a plan. Every fault kind must be registered.
func NewSchedule(env Env, h *history.Appender, faults []plans.Fault, seed int64) (*Schedule, error) {
	for _, f := range faults {
		if _, ok := Nemeses.Lookup(f.Kind); !ok {
			return nil, fmt.Errorf("unknown fault kind %q", f.Kind)
		}
	}
	return &Schedule{env: env, h: h, faults: faults, seed: seed, active: map[int]activeFault{}}, nil
}

// Run injects faults until ctx ends, then heals every fault still active.
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
	if err := s.Heal(context.Background()); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Schedule) runFault(ctx context.Context, i int) error {
	f := s.faults[i]
	n, _ := Nemeses.Lookup(f.Kind)
	rng := rand.New(rand.NewPCG(uint64(s.seed), uint64(i)))
	next := time.Now().Add(f.FirstAfter.Duration)
	for {
		if !sleepUntil(ctx, next) {
			return nil
		}
		next = next.Add(f.Interval.Duration)
		victims := s.pick(ctx, f, rng, next.Add(-f.Duration.Duration))
		if len(victims) == 0 {
			continue // nobody filled the role this time round
		}
		if err := s.start(ctx, i, n, f.Kind, victims); err != nil {
			return err
		}
		sleepUntil(ctx, time.Now().Add(f.Duration.Duration))
		if err := s.stop(context.Background(), i); err != nil {
			return err
		}
	}
}

// pick draws the victims of one fault. A role can be empty for a moment
// (no client holds the lock between two holders), so it waits for one
// until deadline.
func (s *Schedule) pick(ctx context.Context, f plans.Fault, rng *rand.Rand, deadline time.Time) []Process {
	for {
		cands := s.env.Candidates(f.Target)
		if len(cands) > 0 {
			sort.Slice(cands, func(a, b int) bool { return cands[a].Name < cands[b].Name })
			rng.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
			return cands[:min(f.Count, len(cands))]
		}
		if !sleepUntil(ctx, time.Now().Add(10*time.Millisecond)) || time.Now().After(deadline) {
			return nil
		}
	}
}

func (s *Schedule) start(ctx context.Context, i int, n Nemesis, kind string, victims []Process) error {
	s.mu.Lock()
	s.active[i] = activeFault{nemesis: n, kind: kind, victims: victims}
	s.mu.Unlock()
	return s.record(kind+"-start", victims, func() error { return n.Start(ctx, s.env, victims) })
}

func (s *Schedule) stop(ctx context.Context, i int) error {
	s.mu.Lock()
	a, ok := s.active[i]
	delete(s.active, i)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return s.record(a.kind+"-end", a.victims, func() error { return a.nemesis.Stop(ctx, s.env, a.victims) })
}

// record writes a nemesis op around act. Nemesis completions are always
// info, as in Jepsen: a fault is a fact about the world, not a success.
func (s *Schedule) record(f string, victims []Process, act func() error) error {
	names := make([]string, len(victims))
	for i, v := range victims {
		names[i] = v.Name
	}
	if _, err := s.h.Invoke(f, names); err != nil {
		return err
	}
	err := act()
	if _, herr := s.h.Complete(history.Info, f, names, err); herr != nil {
		return herr
	}
	if err != nil {
		return fmt.Errorf("%s on %v: %w", f, names, err)
	}
	return nil
}

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
		names := ""
		for _, v := range a.victims {
			names += " " + v.Name
		}
		out = append(out, a.kind+names)
	}
	sort.Strings(out)
	return out
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
