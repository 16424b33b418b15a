// Package txn is the list-append workload, Elle's test of transactional
// isolation: each transaction reads and appends to a few keys of a small
// key space, every appended value unique per key, so that a read's list
// tells which appends came before it and in which order. The checker
// (analysis/txn) infers the dependencies between transactions from the
// lists and looks for cycles. Backends plug in a Store.
package txn

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

// opTimeout bounds one transaction; a longer silence is an unknown outcome.
const opTimeout = 2 * time.Second

// The kinds of step of a list-append transaction, as Elle names them.
const (
	FRead   = "r"
	FAppend = "append"
)

// Step is one step of a transaction: a read of a key's list, or an
// append of a value to it. In the history it is a history.TxnStep, as
// in multi-register transactions: {"f": "append", "key": "k3", "value":
// 12} or {"f": "r", "key": "k3", "value": [4, 12]}, a read not yet done
// without its value.
type Step struct {
	F   string
	Key string
	// Value is the value an append appends.
	Value int64
	// List is what a read saw, nil before it is done; an absent key reads
	// as the empty list.
	List []int64
}

// MarshalJSON writes the step as a history.TxnStep.
func (s Step) MarshalJSON() ([]byte, error) {
	st := history.TxnStep{F: s.F, Key: s.Key}
	var err error
	switch {
	case s.F == FAppend:
		st.Value, err = json.Marshal(s.Value)
	case s.List != nil:
		st.Value, err = json.Marshal(s.List)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

// Apply does the steps of a transaction, in order, on the lists it began
// with (state, by key; absent keys are empty), filling each read with the
// list as the transaction's own earlier appends left it. It returns the
// keys the transaction appends to, with their new lists.
func Apply(steps []Step, state map[string][]int64) map[string][]int64 {
	written := map[string][]int64{}
	for i, s := range steps {
		cur, ok := written[s.Key]
		if !ok {
			cur = state[s.Key]
		}
		switch s.F {
		case FRead:
			steps[i].List = append([]int64{}, cur...)
		case FAppend:
			written[s.Key] = append(slices.Clip(cur), s.Value)
		}
	}
	return written
}

// ReadOnly says whether a transaction only reads.
func ReadOnly(steps []Step) bool {
	return !slices.ContainsFunc(steps, func(s Step) bool { return s.F == FAppend })
}

// Keys are the distinct keys of a transaction, in the order of their first
// step.
func Keys(steps []Step) []string {
	var keys []string
	for _, s := range steps {
		if !slices.Contains(keys, s.Key) {
			keys = append(keys, s.Key)
		}
	}
	return keys
}

// EncodeList is how a list is stored: its numbers, separated by spaces.
func EncodeList(l []int64) string {
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, " ")
}

// DecodeList is the list a stored value holds; an error for a value that
// is not one, which the read then reports.
func DecodeList(b []byte) ([]int64, error) {
	var l []int64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("stored value %q is not a list of numbers", b)
		}
		l = append(l, v)
	}
	return l, nil
}

// Store is a transactional store's client, bound to one node.
type Store interface {
	// Txn does steps as one transaction, filling each read's List. It
	// returns an error wrapping workloads.ErrNotApplied when the
	// transaction certainly did not commit (aborted on a conflict).
	Txn(ctx context.Context, steps []Step) error
	Close() error
}

// Workload runs list-append clients against one backend.
type Workload struct {
	workloads.Backend
	// ReadModes the backend offers; the first is the default.
	ReadModes []string
	// Open connects one client process to the node it is bound to.
	Open func(ctx context.Context, cfg workloads.Config) (Store, error)
}

// Params are the list-append workload's own fields.
type Params struct {
	traffic.Pace `yaml:",inline"`
	// ReadMode is how transactions read: one of the backend's ReadModes.
	ReadMode string `yaml:"read_mode" json:"read_mode"`
	// Keys is how many keys the clients share in each KeyPeriod; the keys
	// change every KeyPeriod, which keeps each list short.
	Keys      int            `yaml:"keys" json:"keys"`
	KeyPeriod plans.Duration `yaml:"key_period" json:"key_period"`
	// MaxSteps is the most steps a transaction has (1 to MaxSteps, drawn).
	MaxSteps int `yaml:"max_steps" json:"max_steps"`
}

// NewParams makes Workload a plans.Parameterized.
func (Workload) NewParams() any { return &Params{} }

// CheckPlan checks the read mode, the key space and the transactions'
// length, filling their defaults (Jepsen's list-append: a few keys, up
// to 4 steps).
func (w Workload) CheckPlan(p *plans.Plan) error {
	ps := p.Workload.Spec.(*Params)
	if ps.ReadMode == "" {
		ps.ReadMode = w.ReadModes[0]
	}
	if !slices.Contains(w.ReadModes, ps.ReadMode) {
		return p.Errorf("workload.read_mode", "%q: %s offers %s", ps.ReadMode, w.TargetKind, strings.Join(w.ReadModes, ", "))
	}
	if err := p.Count("workload.keys", &ps.Keys, 4, 1, 1000); err != nil {
		return err
	}
	if err := p.Count("workload.max_steps", &ps.MaxSteps, 4, 1, 32); err != nil {
		return err
	}
	if ps.KeyPeriod.Duration == 0 {
		ps.KeyPeriod.Duration = 5 * time.Second
	}
	if ps.KeyPeriod.Duration < 100*time.Millisecond {
		return p.Errorf("workload.key_period", "%s: expected at least 100ms", ps.KeyPeriod)
	}
	return ps.Pace.Check(p)
}

// Needs is time for the transaction in flight.
func (Workload) Needs(plans.Workload) workloads.Needs { return workloads.Needs{Finish: opTimeout} }

// Checkers: Elle's list-append check.
func (Workload) Checkers() []string { return []string{"list-append"} }

// Changes makes Workload a workloads.Changer: transactions append.
func (Workload) Changes() []string { return []string{history.FTxn} }

// Run sends transactions at the plan's pace until ctx ends.
func (w Workload) Run(ctx context.Context, cfg workloads.Config, h *history.Appender) error {
	store, err := w.Open(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		return nil // faults kept the client from the cluster all run long: it did nothing
	}
	if err != nil {
		return err
	}
	defer store.Close()
	ps := cfg.Workload.Spec.(*Params)
	return workloads.Workers(ctx, cfg, h, ps.Concurrency, func(ctx context.Context, process int, h *history.Appender) error {
		rng := plans.Rand(cfg.Seed, plans.ClientStream(process))
		pacer := ps.Pacer()
		clock := history.Clock{Start: cfg.ClockStart}
		next := int64(process) << 32 // values unique per run: the process's, counted
		for pacer.Wait(ctx) {
			steps := draw(rng, ps, clock.Now(), &next)
			if err := record(store, h, steps); err != nil {
				return err
			}
		}
		return nil
	})
}

// draw is a transaction of 1 to MaxSteps steps, each a read or an append
// (half and half) of one of the keys of the period now falls in.
func draw(rng *rand.Rand, ps *Params, now time.Duration, next *int64) []Step {
	steps := make([]Step, 1+rng.IntN(ps.MaxSteps))
	for i := range steps {
		steps[i] = Step{F: FRead, Key: traffic.Key(now, rng, ps.KeyPeriod.Duration, ps.Keys)}
		if rng.IntN(2) == 0 {
			*next++
			steps[i].F, steps[i].Value = FAppend, *next
		}
	}
	return steps
}

func record(store Store, h *history.Appender, steps []Step) error {
	_, err := workloads.Record(context.Background(), h, workloads.Op[[]Step]{
		F: history.FTxn, Value: steps, Timeout: opTimeout, ReadOnly: ReadOnly(steps),
		Call: func(ctx context.Context) ([]Step, error) {
			done := slices.Clone(steps)
			return done, store.Txn(ctx, done)
		},
		Completion: func(done []Step, err error) any {
			if err != nil {
				return steps // reads not done: null
			}
			return done
		},
	})
	return err
}
