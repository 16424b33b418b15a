package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/registry"
)

// Registered is a kind of fault as the registry keeps it, the type of its
// own fields set aside: NewParams makes what a plan's fields decode into,
// and Bind checks them, typed, with the rest of the fault.
type Registered interface {
	NewParams() any
	// Bind checks a plan's fault of this kind, scheduled as s with its
	// own fields in params (from NewParams), against set.
	Bind(s plans.Schedule, params any, set Setting) (*Fault, error)
	// Explorable says whether the kind can draw faults of its own
	// (combined draws among those).
	Explorable() bool
	kind() kind
}

// Fault is a plan's fault bound to its kind: its schedule and the kind's
// own fields, checked and with their defaults. The Schedule runs it.
type Fault struct {
	Kind string
	plans.Schedule
	params any // the kind's *P: only kind[P] reads it
	k      kind
}

// kind is what the schedule asks of a kind of fault, whatever its P.
type kind interface {
	start(ctx context.Context, w *World, f *Fault, rng *rand.Rand) (Injected, error)
	stop(ctx context.Context, w *World, in Injected) error
	traits() Traits
	faultTraits(f *Fault) Traits
	reinstaller() (Reinstaller, bool)
	finisher() (Finisher, bool)
	pinnable() bool
	pin(f *Fault, targets []string) (*Fault, error)
	explore(rng *rand.Rand, nodes int) *Fault
	draw(f *Fault, rng *rand.Rand, nodes int) (*Fault, bool)
	lateTimers(f *Fault) time.Duration
	params(f *Fault) (plans.Params, error)
}

// Nemeses is the registry of fault kinds, by the name plans use.
var Nemeses = registry.New[Registered]("nemesis")

// Register makes kind k available to plans as name.
func Register[P any](name string, k Kind[P]) {
	Nemeses.Register(name, &registered[P]{name: name, k: k})
}

// registered is the registry's view of a Kind[P], and the one place that
// turns a Fault's parameters back into P.
type registered[P any] struct {
	plans.Own[P]
	name string
	k    Kind[P]
}

func (r *registered[P]) kind() kind { return r }

func (r *registered[P]) Bind(s plans.Schedule, params any, set Setting) (*Fault, error) {
	e := Entry[P]{Kind: r.name, Schedule: s, Params: *r.Of(params)}
	if err := r.k.Check(&e, set); err != nil {
		return nil, err
	}
	return r.fault(e), nil
}

// fault is the Fault of entry e.
func (r *registered[P]) fault(e Entry[P]) *Fault {
	return &Fault{Kind: r.name, Schedule: e.Schedule, params: &e.Params, k: r}
}

func (r *registered[P]) entry(f *Fault) Entry[P] {
	return Entry[P]{Kind: r.name, Schedule: f.Schedule, Params: *r.Of(f.params)}
}

func (r *registered[P]) start(ctx context.Context, w *World, f *Fault, rng *rand.Rand) (Injected, error) {
	return r.k.Start(ctx, w, r.entry(f), rng)
}

func (r *registered[P]) stop(ctx context.Context, w *World, in Injected) error {
	return r.k.Stop(ctx, w, in)
}

func (r *registered[P]) traits() Traits {
	if t, ok := r.k.(Traited); ok {
		return t.Traits()
	}
	return Traits{}
}

// faultTraits are f's own traits, when its kind's depend on its fields
// (combined: those of the kinds it draws), else its kind's.
func (r *registered[P]) faultTraits(f *Fault) Traits {
	if t, ok := r.k.(entryTraited[P]); ok {
		return t.traitsOf(r.entry(f))
	}
	return r.traits()
}

// entryTraited is a kind whose faults' traits depend on their fields.
type entryTraited[P any] interface {
	traitsOf(e Entry[P]) Traits
}

func (r *registered[P]) reinstaller() (Reinstaller, bool) {
	ri, ok := r.k.(Reinstaller)
	return ri, ok
}

func (r *registered[P]) finisher() (Finisher, bool) {
	fi, ok := r.k.(Finisher)
	return fi, ok
}

func (r *registered[P]) pinnable() bool {
	_, ok := r.k.(Pinner[P])
	return ok
}

func (r *registered[P]) pin(f *Fault, targets []string) (*Fault, error) {
	p, ok := r.k.(Pinner[P])
	if !ok {
		return nil, fmt.Errorf("%s: its faults cannot be pinned to their victims", f.Kind)
	}
	e, err := p.Pin(r.entry(f), targets)
	if err != nil {
		return nil, err
	}
	return r.fault(e), nil
}

func (r *registered[P]) Explorable() bool {
	_, ok := r.k.(Explorable[P])
	return ok
}

func (r *registered[P]) explore(rng *rand.Rand, nodes int) *Fault {
	return r.fault(r.k.(Explorable[P]).Explore(rng, nodes))
}

func (r *registered[P]) draw(f *Fault, rng *rand.Rand, nodes int) (*Fault, bool) {
	d, ok := r.k.(drawer[P])
	if !ok {
		return f, false
	}
	return d.draw(r.entry(f), rng, nodes), true
}

func (r *registered[P]) lateTimers(f *Fault) time.Duration {
	if l, ok := r.k.(lateTimer[P]); ok {
		return l.lateTimers(r.entry(f))
	}
	return 0
}

func (r *registered[P]) params(f *Fault) (plans.Params, error) { return plans.EncodeParams(f.params) }

// drawer is a kind that stands for others (combined): the schedule asks
// it for the fault to run each time, and runs that one.
type drawer[P any] interface {
	draw(e Entry[P], rng *rand.Rand, nodes int) *Fault
}

// lateTimer is a kind whose faults can make a client's timers fire late
// once healed (clock).
type lateTimer[P any] interface {
	lateTimers(e Entry[P]) time.Duration
}

// Pin is the fault that hits what one of f's faults hit, as the history
// recorded it (its targets), by name (Pinner), for a replay.
// ErrNobodyHit for a fault that hit nobody; an error for a kind that
// cannot pin (Pinnable).
func (f *Fault) Pin(targets []string) (*Fault, error) { return f.k.pin(f, targets) }

// Pinnable says whether f's kind can pin its faults (Pin).
func (f *Fault) Pinnable() bool { return f.k.pinnable() }

// Traits are the traits of f's kind.
func (f *Fault) Traits() Traits { return f.k.faultTraits(f) }

// Plan is f as a plan's fault: its kind's fields as they run, defaults
// included, which a run keeps and a replay or a shrink writes.
func (f *Fault) Plan() (plans.Fault, error) {
	ps, err := f.k.params(f)
	if err != nil {
		return plans.Fault{}, fmt.Errorf("%s: %w", f.Kind, err)
	}
	return plans.Fault{Kind: f.Kind, Schedule: f.Schedule, Params: ps}, nil
}

// LateTimers bounds how late a client's timers may fire once the faults
// have healed: the sum over the faults of what each kind says of its own
// (a clock fault that took a client's monotonic clock forward). The
// harness waits that much longer for clients to finish.
func LateTimers(faults []*Fault) time.Duration {
	var late time.Duration
	for _, f := range faults {
		late += f.k.lateTimers(f)
	}
	return late
}

// finish runs the Finish of every kind among the faults that has one,
// once each, after every fault has healed.
func finish(ctx context.Context, w *World, h *history.Appender, faults []*Fault) error {
	done := map[string]bool{}
	var errs []error
	for _, f := range faults {
		if fi, ok := f.k.finisher(); ok && !done[f.Kind] {
			done[f.Kind] = true
			errs = append(errs, fi.Finish(ctx, w, h))
		}
	}
	return errors.Join(errs...)
}

// need is the plan's target as capability C, which a fault of kind needs,
// or the error that says the target lacks it: lacks says what, as in
// "cannot change its members here".
func need[C any](s Setting, kind, lacks string) (C, error) {
	c, ok := s.Target.(C)
	if !ok {
		return c, plans.Fieldf("kind", "%s: target %s %s", kind, s.TargetKind, lacks)
	}
	return c, nil
}
