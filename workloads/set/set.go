// Package set is the set workload, Jepsen's test of lost writes: clients
// add unique numbers to one set, recording every acknowledgment, and once
// the faults are healed read the whole set back. An add acknowledged but
// missing from the final read was lost. Backends plug in a Store.
package set

import (
	"context"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	setcheck "github.com/chaos-testing/chaos/analysis/set"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
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
	// before it gives up; each may take readTimeout, long enough to read a
	// stream of tens of thousands of messages on a loaded machine (5 s
	// was not: every final read of 12,500 messages timed out).
	readTries   = 5
	readTimeout = 30 * opTimeout
)

// Store is a set service's client. Add and Read return the server that
// answered, when known, so that a lost add names who acknowledged it.
type Store interface {
	Add(ctx context.Context, v int64) (Added, error)
	Read(ctx context.Context) (Snapshot, error)
	Close() error
}

// Added is what an add's answer said: the server that answered, and a
// stream's sequence for the element (0 for a set, or no answer).
type Added struct {
	Node string
	Seq  uint64
}

// Snapshot is what a read returned: the set's elements, the server that
// answered, and what that server counted but did not return; a stream's
// also its elements' sequences, one each (nil for a set).
type Snapshot struct {
	Values []int64
	Seqs   []uint64
	Node   string
	Holes  string
}

// Workload runs set clients against one backend.
type Workload struct {
	workloads.Backend
	// Open connects one client process and sets up what the workload
	// needs, until ctx ends.
	Open func(ctx context.Context, c Client) (Store, error)
	// Also are the checkers the backend adds to set's: primaries for one
	// whose servers report their role.
	Also []analysis.Checker
	// Pads says the backend stores the filler a plan's payload asks for.
	Pads bool
	// Replicates says the backend keeps the set on as many servers as a
	// plan's replicas asks for.
	Replicates bool
}

// Checkers judge the adds against the final reads, and what the backend
// adds.
func (w Workload) Checkers() []analysis.Checker {
	return append([]analysis.Checker{setcheck.Checker{}}, w.Also...)
}

// Changes makes Workload a workloads.Changer: adds change the set.
func (Workload) Changes() []string { return []string{setop.FAdd} }

// Needs is time for the add in flight, the settling and every final read.
func (w Workload) Needs(Params) workloads.Needs {
	return workloads.Needs{Finish: opTimeout + settle + readTries*(readTimeout+time.Second)}
}

// Params are a set workload's own fields: its pace, and its elements'
// size.
type Params struct {
	traffic.Pace `yaml:",inline"`
	// Payload is how many bytes each element takes, its number padded
	// with filler (0, the default: the number alone). Big elements fill
	// more of a backend's files in a short run, as a corruption of older
	// files (a stream's sealed message blocks) needs.
	Payload int `yaml:"payload" json:"payload,omitempty"`
	// Replicas is how many servers hold a copy of the set (0, the
	// default: every server). Fewer than the cluster's servers leave
	// room to move a copy when a server leaves the cluster.
	Replicas int `yaml:"replicas" json:"replicas,omitempty"`
}

// maxReplicas is the most copies a replicated backend keeps (NATS
// JetStream's limit).
const maxReplicas = 5

// Client is one client process of a set workload.
type Client = workloads.Client[Params]

// Check checks the pace, the payload and the replicas.
func (w Workload) Check(ps *Params, s workloads.Setting) error {
	if ps.Payload != 0 && !w.Pads {
		return plans.Fieldf("payload", "%d: the %s workload's elements are numbers alone", ps.Payload, s.Workload)
	}
	if ps.Replicas != 0 && !w.Replicates {
		return plans.Fieldf("replicas", "%d: the %s workload's backend does not replicate the set", ps.Replicas, s.Workload)
	}
	if ps.Replicas < 0 || ps.Replicas > maxReplicas || s.Nodes > 0 && ps.Replicas > s.Nodes {
		return plans.Fieldf("replicas", "%d: expected 1 to %d servers, at most the cluster's (0: all)", ps.Replicas, maxReplicas)
	}
	if ps.Payload < 0 || ps.Payload > 1<<20 {
		return plans.Fieldf("payload", "%d: expected bytes per element, 0 to 1048576", ps.Payload)
	}
	return ps.Pace.Check()
}

// Run adds process-unique numbers until ctx ends, then makes the final
// read, in each of the client's workers.
func (w Workload) Run(ctx context.Context, cfg Client, h *history.Appender) error {
	store, err := w.Open(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		// Faults kept the client from the cluster all run long: it adds
		// nothing, and still makes its final reads, once they are healed.
		octx, cancel := context.WithTimeout(context.Background(), settle+readTimeout)
		store, err = w.Open(octx, cfg)
		cancel()
	}
	if err != nil {
		return err
	}
	defer store.Close()
	pace := cfg.Params.Pace
	return workloads.Workers(ctx, cfg.Config, h, pace.Concurrency, func(ctx context.Context, process int, h *history.Appender) error {
		pacer := pace.Pacer()
		// Numbers are unique across processes: process p adds p*1e9+1, p*1e9+2...
		next := int64(process) * 1_000_000_000
		for pacer.Wait(ctx) {
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
	})
}

func add(store Store, h *history.Appender, v int64) error {
	_, err := workloads.Record(context.Background(), h, workloads.Op[Added]{
		F: setop.FAdd, Value: setop.Value{Element: &v}, Timeout: opTimeout,
		Call:       func(ctx context.Context) (Added, error) { return store.Add(ctx, v) },
		Completion: func(a Added, _ error) any { return setop.Value{Element: &v, Node: a.Node, Seq: a.Seq} },
	})
	return err
}

// read makes one final read and says whether it succeeded.
func read(store Store, h *history.Appender) (bool, error) {
	d, err := workloads.Record(context.Background(), h, workloads.Op[Snapshot]{
		F: setop.FRead, Value: setop.Value{}, Timeout: readTimeout, ReadOnly: true,
		Call: store.Read,
		Completion: func(r Snapshot, err error) any {
			if err != nil {
				return setop.Value{Node: r.Node} // what a failed read saw counts for nothing
			}
			return setop.Value{Read: r.Values, Seqs: r.Seqs, Node: r.Node, Holes: r.Holes}
		},
	})
	return d.Err == nil, err
}
