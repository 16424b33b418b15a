// Package etcdkv is the etcd key-value workload: clients put, get, list,
// delete and run transactions on a few shared keys, and attach keys to
// leases and revoke them, recording every answer's revisions for the
// etcd-kv model, as etcd's robustness tests do. The default mix follows
// their Kubernetes-like traffic: gets and lists, create-if-absent and
// update-if-unchanged transactions, plain puts and deletes.
package etcdkv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

func init() { workloads.Workloads.Register("etcd-kv", Workload{}) }

// opTimeout bounds one operation; a longer silence is an unknown outcome.
const opTimeout = 2 * time.Second

// leaseTTL outlives any run, so that no lease expires on its own: the
// model knows of revokes only.
const leaseTTL = 3600

// prefix holds the workload's keys; prefixEnd ends a range over them all.
const prefix, prefixEnd = "/kv/", "/kv0"

// The kinds of operation, by name in a plan's mix.
const (
	kindGet    = "get"              // a linearizable range of one key
	kindStale  = "serializable-get" // a serializable range of one key: the member's own state
	kindList   = "list"             // a linearizable range of every key
	kindPut    = "put"              // a put of a new value
	kindDelete = "delete"           // a delete of one key
	kindCreate = "create"           // put if absent, else read it (a txn)
	kindUpdate = "update"           // put if unchanged since this client last saw it, else read it (a txn)
	kindLease  = "lease"            // a put attached to the client's lease (granted first when it has none)
	kindRevoke = "revoke"           // revoke the client's lease, deleting its keys
)

// kinds and their default weights.
var kinds = []traffic.Kind{
	{Name: kindGet, Weight: 4}, {Name: kindStale, Weight: 2}, {Name: kindList, Weight: 2}, {Name: kindPut, Weight: 2}, {Name: kindDelete, Weight: 1},
	{Name: kindCreate, Weight: 2}, {Name: kindUpdate, Weight: 2}, {Name: kindLease, Weight: 1}, {Name: kindRevoke, Weight: 1},
}

// Workload is the etcd KV workload.
type Workload struct{}

// Params are the workload's own fields.
type Params struct {
	// Spec is the mix of kinds and the pace.
	traffic.Spec `yaml:",inline"`
	// Keys is how many keys the clients share.
	Keys int `yaml:"keys" json:"keys"`
	// Watch runs a watcher of every key beside each client's workers, on
	// its member (default true).
	Watch *bool `yaml:"watch" json:"watch"`
	// Progress has the watchers ask for progress notifications every
	// second (default true).
	Progress *bool `yaml:"progress" json:"progress"`
}

// NewParams makes Workload a plans.Parameterized.
func (Workload) NewParams() any { return &Params{} }

// CheckPlan checks the keys and the traffic.
func (Workload) CheckPlan(p *plans.Plan) error {
	ps := p.Workload.Spec.(*Params)
	if err := p.Count("workload.keys", &ps.Keys, 10, 1, 1000); err != nil {
		return err
	}
	for _, b := range []**bool{&ps.Watch, &ps.Progress} {
		if *b == nil {
			*b = new(bool)
			**b = true
		}
	}
	return ps.Spec.Check(p, kinds)
}

// Needs is time for the operation in flight, and for the watchers to
// catch up with the last revision.
func (Workload) Needs(plans.Workload) workloads.Needs {
	return workloads.Needs{Finish: 2*opTimeout + catchUpTime}
}

// Checkers judge the history against the model of etcd's store, the
// serializable reads and the watches by their own guarantees.
func (Workload) Checkers() []string { return []string{"etcd-kv", "etcd-serializable", "etcd-watch"} }

// Target is etcd.
func (Workload) Target() string { return "etcd" }

// Libraries are the etcd client.
func (Workload) Libraries() []string { return []string{etcdclient.Module} }

// Run sends the plan's traffic until ctx ends.
func (Workload) Run(ctx context.Context, cfg workloads.Config, h *history.Appender) error {
	cli, err := etcdclient.Connect(cfg.Node())
	if err != nil {
		return fmt.Errorf("etcd-kv: %w", err)
	}
	defer cli.Close()
	ps := cfg.Workload.Spec.(*Params)
	workers := ps.Concurrency
	if *ps.Watch {
		workers++ // the last is the watcher
	}
	return workloads.Workers(ctx, cfg, h, workers, func(ctx context.Context, process int, h *history.Appender) error {
		rng := plans.Rand(cfg.Seed, plans.ClientStream(process))
		if process >= cfg.Process+ps.Concurrency*cfg.Workload.Clients {
			return (&watcher{cli: cli, h: h, clock: history.Clock{Start: cfg.ClockStart}, rng: rng, progress: *ps.Progress}).run(ctx)
		}
		c := &client{cli: cli, h: h, process: process, keys: ps.Keys, seen: map[string]int64{},
			rng: rng}
		gen := ps.Generator(kinds, c.rng)
		for {
			kind, ok := gen.Next(ctx)
			if !ok {
				return nil
			}
			if err := c.do(kind); err != nil {
				return err
			}
		}
	})
}

// client is one worker: a history process with its own values, its own
// lease and the mod revisions it last saw.
type client struct {
	cli     *clientv3.Client
	h       *history.Appender
	process int
	keys    int
	rng     *rand.Rand
	writes  int
	lease   int64            // the worker's lease, 0 when it has none
	seen    map[string]int64 // key -> mod revision last read (0: absent)
}

func (c *client) key() string { return fmt.Sprintf("%sk%d", prefix, c.rng.IntN(c.keys)) }

// value is unique to this write, so that a read names the write it saw.
func (c *client) value() string {
	c.writes++
	return fmt.Sprintf("p%d-%d", c.process, c.writes)
}

// do sends one operation of kind.
func (c *client) do(kind string) error {
	key := c.key()
	one := func(f string, op history.KVOp) error { return c.send(f, history.KVRequest{Then: []history.KVOp{op}}) }
	switch kind {
	case kindGet:
		return one(history.FRange, history.KVOp{F: history.FRange, Key: key})
	case kindStale:
		return one(history.FRangeSerializable, history.KVOp{F: history.FRange, Key: key})
	case kindList:
		return one(history.FRange, history.KVOp{F: history.FRange, Key: prefix, End: prefixEnd})
	case kindPut:
		return one(history.FPut, history.KVOp{F: history.FPut, Key: key, Value: c.value()})
	case kindDelete:
		return one(history.FDelete, history.KVOp{F: history.FDelete, Key: key})
	case kindCreate:
		return c.send(history.FKVTxn, history.KVRequest{
			If:   []history.KVCompare{{Key: key, Target: history.CompareCreate, Rev: 0}},
			Then: []history.KVOp{{F: history.FPut, Key: key, Value: c.value()}},
			Else: []history.KVOp{{F: history.FRange, Key: key}},
		})
	case kindUpdate:
		return c.send(history.FKVTxn, history.KVRequest{
			If:   []history.KVCompare{{Key: key, Target: history.CompareMod, Rev: c.seen[key]}},
			Then: []history.KVOp{{F: history.FPut, Key: key, Value: c.value()}},
			Else: []history.KVOp{{F: history.FRange, Key: key}},
		})
	case kindLease, kindRevoke:
		if c.lease == 0 { // either needs a lease first
			return c.send(history.FLeaseGrant, history.KVRequest{TTL: leaseTTL})
		}
		if kind == kindLease {
			return one(history.FPut, history.KVOp{F: history.FPut, Key: key, Value: c.value(), Lease: c.lease})
		}
		lease := c.lease
		c.lease = 0 // revoked, refused or unknown: a new one either way
		return c.send(history.FLeaseRevoke, history.KVRequest{Lease: lease})
	}
	panic("etcdkv: kind " + kind + " that Check let through")
}

// send records one operation: its request, the call, its answer.
func (c *client) send(f string, req history.KVRequest) error {
	readOnly := f == history.FRange || f == history.FRangeSerializable
	d, err := workloads.Record(context.Background(), c.h, workloads.Op[*history.KVResponse]{
		F: f, Value: req, Timeout: opTimeout, ReadOnly: readOnly,
		Call: func(ctx context.Context) (*history.KVResponse, error) {
			if !readOnly {
				if err := etcdclient.Connected(ctx, c.cli); err != nil {
					return nil, err
				}
			}
			resp, err := call(ctx, c.cli, f, req)
			return resp, etcdclient.Classify(err)
		},
		Completion: func(resp *history.KVResponse, err error) any {
			if err != nil {
				return req
			}
			return resp
		},
	})
	if d.Type == history.Ok {
		c.learn(f, d.Result)
	}
	return err
}

// learn keeps what an answer told the worker: its lease, and the mod
// revisions of the keys it read.
func (c *client) learn(f string, resp *history.KVResponse) {
	if f == history.FLeaseGrant {
		c.lease = resp.Lease
	}
	for _, r := range resp.Results {
		for _, kv := range r.KVs {
			c.seen[kv.Key] = kv.Mod
		}
	}
}
