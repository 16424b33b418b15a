// Package txn holds Elle's workloads of transactional isolation: each
// transaction reads and writes a few keys of a small key space, every
// written value unique per key. In list-append a write appends to a
// key's list, so that a read's list tells which appends came before it
// and in which order; in rw-register a write replaces the key's value,
// and a read tells only which write it saw. The checker (analysis/txn)
// infers the dependencies between transactions from the reads and looks
// for cycles. Backends plug in a Store; each runs both models.
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

	"github.com/chaos-testing/chaos/analysis"
	elle "github.com/chaos-testing/chaos/analysis/txn"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/txnop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

// opTimeout bounds one transaction; a longer silence is an unknown outcome.
const opTimeout = 2 * time.Second

// The kinds of step of a transaction, as Elle names them.
const (
	FRead   = "r"
	FAppend = "append" // list-append's write
	FWrite  = "w"      // rw-register's write
)

// Model is what a transaction's writes do to a key: Elle's list-append
// or rw-register.
type Model struct {
	// Name is the model's, which ends the names of its workloads
	// (etcd-list-append), and Checker the check that judges its
	// histories.
	Name    string
	Checker analysis.Checker
	// Write is the kind of its writes.
	Write string
}

// The models, each with its own checker.
var (
	ListAppend = Model{Name: "list-append", Checker: elle.ListAppend{}, Write: FAppend}
	RWRegister = Model{Name: "rw-register", Checker: elle.RWRegister{}, Write: FWrite}
)

// Register adds a backend's workload of each model, named
// "<backend>-list-append" and "<backend>-rw-register".
func Register(backend string, w Workload) {
	for _, m := range []Model{ListAppend, RWRegister} {
		w.Model = m
		workloads.Register[Params](backend+"-"+m.Name, w)
	}
}

// Step is one step of a transaction: a read of a key, an append of a
// value to its list or a write of a value to it.
type Step struct {
	F   string
	Key string
	// Value is the value an append or a write adds.
	Value int64
	// List is what a read saw, nil before it is done: a list's elements,
	// or a register's value (none for a key never written); an absent
	// key reads as the empty list.
	List []int64
}

// History is steps as the history holds them, history.TxnSteps, as in
// multi-register transactions: {"f": "append", "key": "k3", "value": 12};
// a list read's value is its list ({"f": "r", "key": "k3", "value": [4,
// 12]}), a register read's the value or null; a read not yet done has
// none.
func (m Model) History(steps []Step) []txnop.Step {
	out := make([]txnop.Step, len(steps))
	for i, s := range steps {
		out[i] = txnop.Step{F: s.F, Key: s.Key}
		switch {
		case s.F != FRead:
			out[i].Value = json.RawMessage(strconv.FormatInt(s.Value, 10))
		case s.List == nil:
		case m == ListAppend:
			out[i].Value, _ = json.Marshal(s.List) // []int64 always marshals
		case len(s.List) > 0:
			out[i].Value = json.RawMessage(strconv.FormatInt(s.List[len(s.List)-1], 10))
		}
	}
	return out
}

// Apply does the steps of a transaction, in order, on the values it began
// with (state, by key: a list, or a register as a list of its one value;
// absent keys are empty), filling each read with the key as the
// transaction's own earlier steps left it. It returns the keys the
// transaction writes, with their new values.
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
		case FWrite:
			written[s.Key] = []int64{s.Value}
		}
	}
	return written
}

// ReadOnly says whether a transaction only reads.
func ReadOnly(steps []Step) bool {
	return !slices.ContainsFunc(steps, func(s Step) bool { return s.F != FRead })
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

// EncodeList is how a list is stored, and a register as the list of its
// value: its numbers, separated by spaces.
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

// Workload runs transaction clients of one model against one backend.
type Workload struct {
	workloads.Backend
	Model Model
	// ReadModes the backend offers; the first is the default.
	ReadModes []string
	// Open connects one client process to the node it is bound to.
	Open func(ctx context.Context, c Client, m Model) (Store, error)
}

// Params are the transaction workloads' own fields.
type Params struct {
	traffic.Pace `yaml:",inline"`
	// ReadMode is how transactions read: one of the backend's ReadModes.
	ReadMode string `yaml:"read_mode" json:"read_mode"`
	// Keys is how many keys the clients share in each KeyPeriod; the keys
	// change every KeyPeriod, which keeps each list short.
	Keys      int            `yaml:"keys" json:"keys"`
	KeyPeriod plans.Duration `yaml:"key_period" json:"key_period"`
	// MaxSteps is the most steps a transaction has (1 to MaxSteps, drawn,
	// each a read or a write).
	MaxSteps int `yaml:"max_steps" json:"max_steps"`
}

// Client is one client process of a transaction workload.
type Client = workloads.Client[Params]

// Check checks the read mode, the key space and the transactions'
// length, filling their defaults (Jepsen's list-append and rw-register:
// a few keys, up to 4 steps).
func (w Workload) Check(ps *Params, s workloads.Setting) error {
	if ps.ReadMode == "" {
		ps.ReadMode = w.ReadModes[0]
	}
	if !slices.Contains(w.ReadModes, ps.ReadMode) {
		return plans.Fieldf("read_mode", "%q: %s offers %s", ps.ReadMode, w.TargetKind, strings.Join(w.ReadModes, ", "))
	}
	if err := plans.Count("keys", &ps.Keys, 4, 1, 1000); err != nil {
		return err
	}
	if err := plans.Count("max_steps", &ps.MaxSteps, 4, 1, 32); err != nil {
		return err
	}
	if ps.KeyPeriod.Duration == 0 {
		ps.KeyPeriod.Duration = 5 * time.Second
	}
	if ps.KeyPeriod.Duration < 100*time.Millisecond {
		return plans.Fieldf("key_period", "%s: expected at least 100ms", ps.KeyPeriod)
	}
	if err := w.TargetFits(s, ps.ReadMode); err != nil {
		return err
	}
	return ps.Pace.Check()
}

// Needs is time for the transaction in flight.
func (Workload) Needs(Params) workloads.Needs { return workloads.Needs{Finish: opTimeout} }

// Checkers: Elle's check of the model.
func (w Workload) Checkers() []analysis.Checker { return []analysis.Checker{w.Model.Checker} }

// Changes makes Workload a workloads.Changer: transactions write.
func (Workload) Changes() []string { return []string{txnop.FTxn} }

// Run sends transactions at the plan's pace until ctx ends.
func (w Workload) Run(ctx context.Context, cfg Client, h *history.Appender) error {
	store, err := w.Open(ctx, cfg, w.Model)
	if err != nil && ctx.Err() != nil {
		return nil // faults kept the client from the cluster all run long: it did nothing
	}
	if err != nil {
		return err
	}
	defer store.Close()
	ps := cfg.Params
	return workloads.Workers(ctx, cfg.Config, h, ps.Concurrency, func(ctx context.Context, process int, h *history.Appender) error {
		rng := plans.Rand(cfg.Seed, plans.ClientStream(process))
		pacer := ps.Pacer()
		clock := history.Clock{Start: cfg.ClockStart}
		next := int64(process) << 32 // values unique per run: the process's, counted
		for pacer.Wait(ctx) {
			steps := draw(rng, &ps, w.Model, clock.Now(), &next)
			if err := w.record(store, h, steps); err != nil {
				return err
			}
		}
		return nil
	})
}

// draw is a transaction of 1 to MaxSteps steps, each a read or one of m's
// writes (half and half) of one of the keys of the period now falls in.
func draw(rng *rand.Rand, ps *Params, m Model, now time.Duration, next *int64) []Step {
	steps := make([]Step, 1+rng.IntN(ps.MaxSteps))
	for i := range steps {
		steps[i] = Step{F: FRead, Key: traffic.Key(now, rng, ps.KeyPeriod.Duration, ps.Keys)}
		if rng.IntN(2) == 0 {
			*next++
			steps[i].F, steps[i].Value = m.Write, *next
		}
	}
	return steps
}

func (w Workload) record(store Store, h *history.Appender, steps []Step) error {
	_, err := workloads.Record(context.Background(), h, workloads.Op[[]Step]{
		F: txnop.FTxn, Value: w.Model.History(steps), Timeout: opTimeout, ReadOnly: ReadOnly(steps),
		Call: func(ctx context.Context) ([]Step, error) {
			done := slices.Clone(steps)
			return done, store.Txn(ctx, done)
		},
		Completion: func(done []Step, err error) any {
			if err != nil {
				return w.Model.History(steps) // reads not done: no value
			}
			return w.Model.History(done)
		},
	})
	return err
}
