// Package set is the set workload, Jepsen's test of lost writes: clients
// add unique numbers to one set, recording every acknowledgment, and once
// the faults are healed read the whole set back. An add acknowledged but
// missing from the final read was lost. Backends plug in a Store.
package set

import (
	"context"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/workloads"
)

const (
	// opTimeout bounds one operation; a longer silence is an unknown outcome.
	opTimeout = time.Second
	// think is the pause between a client's adds, which keeps a minute's
	// history to tens of thousands of adds.
	think = 10 * time.Millisecond
	// settle is how long a client waits, after the run's faults are healed
	// and it is told to stop, before its final read: time for the cluster
	// to notice the heal and converge, as Jepsen's final reads wait.
	settle = 5 * time.Second
	// readTries is how many final reads a client attempts, a second apart,
	// before it gives up.
	readTries = 10
)

// Store is a set service's client. Add and Read return the server that
// answered, when known, so that a lost add names who acknowledged it.
type Store interface {
	Add(ctx context.Context, v int64) (node string, err error)
	Read(ctx context.Context) (vs []int64, node string, err error)
	Close() error
}

// Workload runs set clients against one backend.
type Workload struct {
	TargetKind string
	Open       func(cfg workloads.Config) (Store, error)
}

// Checkers judge the adds against the final reads, and whether two
// servers acted as primary at once.
func (w Workload) Checkers() []string { return []string{"set", "primaries"} }

// Target is the cluster kind the backend needs.
func (w Workload) Target() string { return w.TargetKind }

// Run adds process-unique numbers until ctx ends, then makes the final read.
func (w Workload) Run(ctx context.Context, cfg workloads.Config, h *history.Appender) error {
	store, err := w.Open(cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	// Numbers are unique across processes: process p adds p*1e9+1, p*1e9+2...
	next := int64(cfg.Process) * 1_000_000_000
	for ctx.Err() == nil {
		next++
		if err := add(store, h, next); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(think):
		}
	}
	time.Sleep(settle)
	for range readTries {
		ok, err := read(store, h)
		if ok || err != nil {
			return err
		}
		time.Sleep(time.Second)
	}
	return nil
}

func add(store Store, h *history.Appender, v int64) error {
	if _, err := h.Invoke(history.FAdd, history.SetValue{Element: &v}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	node, err := store.Add(ctx, v)
	_, herr := h.Complete(workloads.Outcome(err), history.FAdd, history.SetValue{Element: &v, Node: node}, err)
	return herr
}

// read makes one final read and says whether it succeeded.
func read(store Store, h *history.Appender) (bool, error) {
	if _, err := h.Invoke(history.FRead, history.SetValue{}); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*opTimeout)
	defer cancel()
	vs, node, err := store.Read(ctx)
	if err != nil {
		// A read changes nothing, so a failed one is simply a failure.
		_, err = h.Complete(history.Fail, history.FRead, history.SetValue{Node: node}, err)
		return false, err
	}
	_, err = h.Complete(history.Ok, history.FRead, history.SetValue{Read: vs, Node: node}, nil)
	return true, err
}
