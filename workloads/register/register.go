// Package register is the register workload: clients read, write and
// compare-and-set small integers on independent keys, each client process
// bound to one node, as in Jepsen's register tests. Backends plug in a Store.
package register

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
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
	TargetKind string
	// ReadModes the backend offers; the first is the default.
	ReadModes []string
	// Open connects one client process to the node it is bound to.
	Open func(cfg workloads.Config) (Store, error)
}

// CheckPlan checks the read mode, defaulting to the backend's first.
func (w Workload) CheckPlan(p *plans.Plan) error {
	if p.Workload.ReadMode == "" && len(w.ReadModes) > 0 {
		p.Workload.ReadMode = w.ReadModes[0]
	}
	if !slices.Contains(w.ReadModes, p.Workload.ReadMode) {
		return p.Errorf("workload.read_mode", "%q: %s offers %s", p.Workload.ReadMode, w.TargetKind, strings.Join(w.ReadModes, ", "))
	}
	return nil
}

// Checkers judge register histories for linearizability, key by key.
func (w Workload) Checkers() []string { return []string{"cas-register"} }

// Target is the cluster kind the backend needs.
func (w Workload) Target() string { return w.TargetKind }

// Key is the key a client works on at time now. Keys change every period,
// so each key's history stays short enough to check quickly, while the
// clients that share a period contend on the same few keys.
func Key(now time.Duration, rng *rand.Rand, period time.Duration, perPeriod int) string {
	return "r" + strconv.FormatInt(int64(now/period)*int64(perPeriod)+rng.Int64N(int64(perPeriod)), 10)
}

// Run issues random reads (half), writes and cases until ctx ends.
func (w Workload) Run(ctx context.Context, cfg workloads.Config, h *history.Appender) error {
	store, err := w.Open(cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	rng := plans.Rand(cfg.Seed, cfg.Process)
	clock := history.Clock{Start: cfg.ClockStart}
	period, perPeriod := 5*time.Second, 3
	for ctx.Err() == nil {
		key := Key(clock.Now(), rng, period, perPeriod)
		var err error
		switch r := rng.IntN(4); {
		case r < 2:
			err = read(store, h, key)
		case r == 2:
			v := rng.Int64N(5)
			err = mutate(h, history.FWrite, history.RegisterValue{Key: key, Value: num(v)},
				func(ctx context.Context) error { return store.Write(ctx, key, v) })
		default:
			from, to := rng.Int64N(5), rng.Int64N(5)
			err = mutate(h, history.FCas, history.RegisterValue{Key: key, From: num(from), To: num(to)},
				func(ctx context.Context) error { return store.Cas(ctx, key, from, to) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func read(store Store, h *history.Appender, key string) error {
	if _, err := h.Invoke(history.FRead, history.RegisterValue{Key: key}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	v, err := store.Read(ctx, key)
	var bad BadValue
	if errors.As(err, &bad) {
		raw, _ := json.Marshal(bad.Raw)
		_, err = h.Complete(history.Ok, history.FRead, history.RegisterValue{Key: key, Value: raw}, nil)
		return err
	}
	if err != nil {
		// A read changes nothing, so a failed one is simply a failure.
		_, err = h.Complete(history.Fail, history.FRead, history.RegisterValue{Key: key}, err)
		return err
	}
	out := history.RegisterValue{Key: key, Value: []byte("null")}
	if v != nil {
		out.Value = num(*v)
	}
	_, err = h.Complete(history.Ok, history.FRead, out, nil)
	return err
}

func mutate(h *history.Appender, f string, v history.RegisterValue, do func(context.Context) error) error {
	if _, err := h.Invoke(f, v); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	err := do(ctx)
	_, herr := h.Complete(workloads.Outcome(err), f, v, err)
	return herr
}

func num(v int64) []byte { return []byte(fmt.Sprint(v)) }
