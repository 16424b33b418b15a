// Package register is the register workload: clients read, write and
// compare-and-set small integers on independent keys, each client process
// bound to one node, as in Jepsen's register tests. Backends plug in a Store.
package register

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/linear"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

// opTimeout bounds one operation; a longer silence is an unknown outcome.
const opTimeout = 2 * time.Second

// Store is a register service's client, bound to one node.
type Store interface {
	// Read returns the key's value, or nil when the key does not exist.
	Read(ctx context.Context, key string) (*int64, error)
	Write(ctx context.Context, key string, v int64) error
	// Cas sets key to to if its value is from. It returns workloads.ErrNotApplied
	// when the service answered that the value was not from.
	Cas(ctx context.Context, key string, from, to int64) error
	Close() error
}

// BadValue is what a Store's Read returns for a stored value that is not
// a number: the read succeeded and saw garbage, which the checker must
// judge (no model holds it), not a failed read that would hide it.
type BadValue struct{ Raw string }

func (b BadValue) Error() string { return fmt.Sprintf("stored value %q is not a number", b.Raw) }

// Workload runs register clients against one backend.
type Workload struct {
	workloads.Backend
	// ReadModes the backend offers; the first is the default.
	ReadModes []string
	// Open connects one client process to the node it is bound to, and
	// sets up what the workload needs, until ctx ends.
	Open func(ctx context.Context, c Client) (Store, error)
}

// backends are the register workloads, by name, for Dial.
var backends = map[string]Workload{}

// register makes backend w the register workload called name.
func register(name string, w Workload) {
	backends[name] = w
	workloads.Register[Params](name, w)
}

// Dial is the store of register workload name (etcd-register, ...) for
// client process of a cluster whose servers are at nodes (the process is
// bound to one, as in a run), reading in readMode: what a test of a
// target or a fault reads and writes registers with, from the host.
func Dial(ctx context.Context, name string, nodes []string, process int, readMode string) (Store, error) {
	w, ok := backends[name]
	if !ok {
		return nil, fmt.Errorf("no register workload %q", name)
	}
	return w.Open(ctx, Client{Config: workloads.Config{Nodes: nodes, Process: process}, Params: Params{ReadMode: readMode}})
}

// Params are a register workload's own fields.
type Params struct {
	// ReadMode is how clients read: one of the backend's ReadModes.
	ReadMode string `yaml:"read_mode" json:"read_mode"`
	// Spec is the mix of reads, writes and cases, and the rate.
	traffic.Spec `yaml:",inline"`
	// Values are 0 to Values-1, written and compared.
	Values int `yaml:"values" json:"values"`
	// Keys is how many keys the clients share in each KeyPeriod; the keys
	// change every KeyPeriod, which keeps each key's history short enough
	// to check.
	Keys      int            `yaml:"keys" json:"keys"`
	KeyPeriod plans.Duration `yaml:"key_period" json:"key_period"`
}

// kinds are the register's operations and their default weights: half
// reads, as in Jepsen's register tests.
var kinds = []traffic.Kind{{Name: registerop.FRead, Weight: 2}, {Name: registerop.FWrite, Weight: 1}, {Name: registerop.FCas, Weight: 1}}

// Client is one client process of a register workload.
type Client = workloads.Client[Params]

// Check checks the read mode, defaulting to the backend's first.
func (w Workload) Check(ps *Params, s workloads.Setting) error {
	if ps.ReadMode == "" && len(w.ReadModes) > 0 {
		ps.ReadMode = w.ReadModes[0]
	}
	if !slices.Contains(w.ReadModes, ps.ReadMode) {
		return plans.Fieldf("read_mode", "%q: %s offers %s", ps.ReadMode, w.TargetKind, strings.Join(w.ReadModes, ", "))
	}
	if err := plans.Count("values", &ps.Values, 5, 1, math.MaxInt32); err != nil {
		return err
	}
	if err := plans.Count("keys", &ps.Keys, 3, 1, math.MaxInt32); err != nil {
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
	return ps.Spec.Check(kinds)
}

// Needs is time for the operation in flight.
func (w Workload) Needs(Params) workloads.Needs { return workloads.Needs{Finish: opTimeout} }

// Checkers judge register histories for linearizability, key by key.
func (w Workload) Checkers() []analysis.Checker { return []analysis.Checker{linear.CASRegister} }

// Changes makes Workload a workloads.Changer: writes and compare-and-sets
// change the registers.
func (Workload) Changes() []string { return []string{registerop.FWrite, registerop.FCas} }

// Run issues reads, writes and cases as the plan's traffic asks (by
// default half reads, as fast as answers come) until ctx ends.
func (w Workload) Run(ctx context.Context, cfg Client, h *history.Appender) error {
	store, err := w.Open(ctx, cfg)
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
		gen := ps.Generator(kinds, rng)
		clock := history.Clock{Start: cfg.ClockStart}
		values := int64(ps.Values)
		for {
			kind, ok := gen.Next(ctx)
			if !ok {
				return nil
			}
			key := traffic.Key(clock.Now(), rng, ps.KeyPeriod.Duration, ps.Keys)
			var err error
			switch kind {
			case registerop.FRead:
				err = read(store, h, key)
			case registerop.FWrite:
				v := rng.Int64N(values)
				err = mutate(h, registerop.FWrite, registerop.Value{Key: key, Value: num(v)},
					func(ctx context.Context) error { return store.Write(ctx, key, v) })
			default:
				from, to := rng.Int64N(values), rng.Int64N(values)
				err = mutate(h, registerop.FCas, registerop.Value{Key: key, From: num(from), To: num(to)},
					func(ctx context.Context) error { return store.Cas(ctx, key, from, to) })
			}
			if err != nil {
				return err
			}
		}
	})
}

func read(store Store, h *history.Appender, key string) error {
	_, err := workloads.Record(context.Background(), h, workloads.Op[json.RawMessage]{
		F: registerop.FRead, Value: registerop.Value{Key: key}, Timeout: opTimeout, ReadOnly: true,
		Call: func(ctx context.Context) (json.RawMessage, error) {
			v, err := store.Read(ctx, key)
			var bad BadValue
			switch {
			case errors.As(err, &bad):
				return json.Marshal(bad.Raw) // a read of garbage, for the checker to judge
			case err != nil:
				return nil, err
			case v == nil:
				return []byte("null"), nil
			}
			return num(*v), nil
		},
		Completion: func(v json.RawMessage, _ error) any { return registerop.Value{Key: key, Value: v} },
	})
	return err
}

func mutate(h *history.Appender, f string, v registerop.Value, do func(context.Context) error) error {
	_, err := workloads.Record(context.Background(), h, workloads.Op[struct{}]{F: f, Value: v, Timeout: opTimeout,
		Call: func(ctx context.Context) (struct{}, error) { return struct{}{}, do(ctx) }})
	return err
}

func num(v int64) []byte { return []byte(fmt.Sprint(v)) }
