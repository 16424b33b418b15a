// Package etcdkv is the etcd key-value workload: clients put, get, list,
// delete and run transactions on a few shared keys, and attach keys to
// leases and revoke them, recording every answer's revisions for the
// etcd-kv model, as etcd's robustness tests do. Its traffic profiles
// follow theirs: a Kubernetes-like mix (lists, create-if-absent and
// update-if-unchanged transactions, deletes, and a watch), their puts,
// deletes and leases mix, at their low and high loads.
package etcdkv

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/etcd"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

func init() { workloads.Register[Params]("etcd-kv", Workload{}) }

// opTimeout bounds one operation; a longer silence is an unknown outcome.
const opTimeout = 2 * time.Second

// largeSize is a large put's filler, as etcd's robustness traffic's: just
// over 32 KiB.
const largeSize = 32769

// defaultLeaseTTL outlives any run, so that no lease expires on its own
// unless a plan asks for shorter leases (lease_ttl).
const defaultLeaseTTL = time.Hour

// prefix holds the workload's keys; prefixEnd ends a range over them all.
const prefix, prefixEnd = "/kv/", "/kv0"

// The kinds of operation, by name in a plan's mix.
const (
	kindGet       = "get"               // a linearizable range of one key
	kindStale     = "serializable-get"  // a serializable range of one key: the member's own state
	kindList      = "list"              // a linearizable range of every key
	kindStaleList = "serializable-list" // a serializable range of every key
	kindPut       = "put"               // a put of a new value
	kindLargePut  = "large-put"         // a put of a new value of largeSize bytes
	kindDelete    = "delete"            // a delete of one key
	kindCreate    = "create"            // put if absent, else read it (a txn)
	kindUpdate    = "update"            // put if unchanged since this client last saw it (by mod revision, version or value), else read it (a txn)
	kindMulti     = "multi"             // a txn of up to four operations on distinct keys, without conditions: ranges, puts, deletes
	kindScanPut   = "scan-put"          // a put in a txn guarded by a condition over every key that always holds (see scanGuard)
	kindLease     = "lease"             // a put attached to the client's lease (granted first when it has none)
	kindRevoke    = "revoke"            // revoke the client's lease, deleting its keys
	kindKeepAlive = "keepalive"         // renew the client's lease once, or one it revoked (etcd must not have it)
)

// kinds in the order their weights add up, with the mixed profile's
// weights, the default.
var kinds = []traffic.Kind{
	{Name: kindGet, Weight: 4}, {Name: kindStale, Weight: 2}, {Name: kindList, Weight: 2}, {Name: kindStaleList, Weight: 1},
	{Name: kindPut, Weight: 2}, {Name: kindLargePut, Weight: 0}, {Name: kindDelete, Weight: 1}, {Name: kindCreate, Weight: 2}, {Name: kindUpdate, Weight: 2},
	{Name: kindMulti, Weight: 1}, {Name: kindScanPut, Weight: 0}, {Name: kindLease, Weight: 1}, {Name: kindRevoke, Weight: 1}, {Name: kindKeepAlive, Weight: 1},
}

// profiles are the mixes a plan names with profile, after etcd's
// robustness traffic; a kind a profile leaves out has weight 0.
var profiles = map[string]map[string]int{
	"mixed": nil, // the weights in kinds
	// Kubernetes' use of etcd: optimistic updates (75%), deletes (15%)
	// and creates (10%) of objects, lists, and a watch (the watcher).
	"kubernetes": {kindList: 4, kindUpdate: 15, kindDelete: 3, kindCreate: 2},
	// etcd's own put, delete and lease traffic.
	"put-delete-lease": {kindGet: 15, kindList: 15, kindStale: 10, kindStaleList: 10, kindDelete: 5, kindMulti: 5,
		kindLease: 5, kindRevoke: 5, kindUpdate: 5, kindPut: 20, kindLargePut: 5},
}

// loads are the total operations per second, over every client, that a
// plan names with load: etcd's robustness low and high traffic.
var loads = map[string]float64{"low": 200, "high": 1000}

// Workload is the etcd KV workload.
type Workload struct{}

// Params are the workload's own fields.
type Params struct {
	// Spec is the mix of kinds and the pace.
	traffic.Spec `yaml:",inline"`
	// Profile names the mix the kinds the plan's mix leaves out take their
	// weights from (default mixed).
	Profile string `yaml:"profile" json:"profile,omitempty"`
	// Load names a total rate over every client (low: 200, high: 1000
	// operations a second), in place of rate.
	Load string `yaml:"load" json:"load,omitempty"`
	// Keys is how many keys the clients share.
	Keys int `yaml:"keys" json:"keys"`
	// Watch runs a watcher of every key beside each client's workers, on
	// its member (default true).
	Watch *bool `yaml:"watch" json:"watch"`
	// Progress has the watchers ask for progress notifications every
	// second (default true).
	Progress *bool `yaml:"progress" json:"progress"`
	// WatchSpan is how long each watch runs before the watcher ends it
	// and resumes from where it got to (default 5s): short spans make
	// many resumptions, long ones keep a watch open through whole faults
	// (etcd #15271 went back in time only on a watch that was open
	// before its member fell behind).
	WatchSpan plans.Duration `yaml:"watch_span" json:"watch_span"`
	// WatchFrom is where each watch starts: "last", after the revision
	// the watcher last got to (the default), or "compacted", at the
	// member's compaction revision: each watch after one that was not
	// answered "compacted" asks for revision 1, and the next opens at the
	// revision that answer names (etcd #19179 lost the event at exactly
	// that revision on a member restarted in the middle of a compaction).
	WatchFrom string `yaml:"watch_from" json:"watch_from"`
	// LeaseTTL is the TTL each worker's lease is granted with (default
	// an hour, whole seconds): short ones, kept alive by the keepalive
	// kind, expire unless renewed, as Kubernetes' leases do.
	LeaseTTL plans.Duration `yaml:"lease_ttl" json:"lease_ttl"`
}

// Check checks the keys and the traffic.
func (Workload) Check(ps *Params, s workloads.Setting) error {
	if err := plans.Count("keys", &ps.Keys, 10, 1, 1000); err != nil {
		return err
	}
	for _, b := range []**bool{&ps.Watch, &ps.Progress} {
		if *b == nil {
			*b = new(bool)
			**b = true
		}
	}
	if ps.WatchSpan.Duration == 0 {
		ps.WatchSpan.Duration = 5 * time.Second
	}
	if ps.WatchSpan.Duration < 100*time.Millisecond {
		return plans.Fieldf("watch_span", "%s: expected at least 100ms", ps.WatchSpan)
	}
	switch ps.WatchFrom {
	case "":
		ps.WatchFrom = watchFromLast
	case watchFromLast, watchFromCompacted:
	default:
		return plans.Fieldf("watch_from", "%q: expected %s or %s", ps.WatchFrom, watchFromLast, watchFromCompacted)
	}
	if ps.LeaseTTL.Duration == 0 {
		ps.LeaseTTL.Duration = defaultLeaseTTL
	}
	if ps.LeaseTTL.Duration < time.Second || ps.LeaseTTL.Duration%time.Second != 0 {
		return plans.Fieldf("lease_ttl", "%s: expected whole seconds, at least 1s", ps.LeaseTTL)
	}
	if ps.Profile == "" {
		ps.Profile = "mixed"
	}
	weights, ok := profiles[ps.Profile]
	if !ok {
		return plans.Fieldf("profile", "%q: expected one of %s", ps.Profile, strings.Join(slices.Sorted(maps.Keys(profiles)), ", "))
	}
	if ps.Load != "" {
		total, ok := loads[ps.Load]
		rate := total / float64(s.Clients)
		switch {
		case !ok:
			return plans.Fieldf("load", "%q: expected low or high", ps.Load)
		case ps.Rate != 0 && ps.Rate != rate: // equal in a run's resolved plan, which records both
			return plans.Fieldf("load", "%s and rate %g: give one of them", ps.Load, ps.Rate)
		}
		ps.Rate = rate
	}
	return ps.Spec.Check(profileKinds(weights))
}

// profileKinds are the kinds with a profile's weights as defaults.
func profileKinds(weights map[string]int) []traffic.Kind {
	if weights == nil {
		return kinds
	}
	out := slices.Clone(kinds)
	for i := range out {
		out[i].Weight = weights[out[i].Name]
	}
	return out
}

// Needs is time for the operation in flight, and for the watchers to
// catch up with the last revision.
func (Workload) Needs(Params) workloads.Needs {
	return workloads.Needs{Finish: 2*opTimeout + catchUpTime}
}

// Checkers judge the history against the model of etcd's store, the
// serializable reads and the watches by their own guarantees.
func (Workload) Checkers() []analysis.Checker {
	return []analysis.Checker{etcd.KV, etcd.SerializableChecker{}, etcd.WatchChecker{}, etcd.LeaseChecker{}}
}

// Target is etcd.
func (Workload) Target() string { return "etcd" }

// Libraries are the etcd client.
func (Workload) Libraries() []string { return []string{etcdclient.Module} }

// Run sends the plan's traffic until ctx ends.
func (Workload) Run(ctx context.Context, cfg workloads.Client[Params], h *history.Appender) error {
	cli, err := etcdclient.Connect(cfg.Node())
	if err != nil {
		return fmt.Errorf("etcd-kv: %w", err)
	}
	defer cli.Close()
	ps := cfg.Params
	workers := ps.Concurrency
	if *ps.Watch {
		workers++ // the last is the watcher
	}
	return workloads.Workers(ctx, cfg.Config, h, workers, func(ctx context.Context, process int, h *history.Appender) error {
		rng := plans.Rand(cfg.Seed, plans.ClientStream(process))
		if process >= cfg.Process+ps.Concurrency*cfg.Clients {
			return (&watcher{cli: cli, h: h, clock: history.Clock{Start: cfg.ClockStart}, rng: rng, progress: *ps.Progress, span: ps.WatchSpan.Duration,
				fromCompacted: ps.WatchFrom == watchFromCompacted}).run(ctx)
		}
		c := &client{cli: cli, h: h, process: process, keys: ps.Keys, seen: map[string]etcdop.KV{},
			rng: rng, ttl: int64(ps.LeaseTTL.Duration / time.Second)}
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
	ttl     int64                // its leases', in seconds
	lease   int64                // the worker's lease, 0 when it has none
	revoked []int64              // leases it sent a revoke for
	seen    map[string]etcdop.KV // key -> the key as last read (zero: absent)
}

func (c *client) key() string { return keyName(c.rng.IntN(c.keys)) }

func keyName(i int) string { return fmt.Sprintf("%sk%d", prefix, i) }

// value is unique to this write, so that a read names the write it saw.
func (c *client) value() string {
	c.writes++
	return fmt.Sprintf("p%d-%d", c.process, c.writes)
}

// do sends one operation of kind.
func (c *client) do(kind string) error {
	key := c.key()
	one := func(f string, op etcdop.KVOp) error { return c.send(f, etcdop.KVRequest{Then: []etcdop.KVOp{op}}) }
	switch kind {
	case kindGet:
		return one(etcdop.FRange, etcdop.KVOp{F: etcdop.FRange, Key: key})
	case kindStale:
		return one(etcdop.FRangeSerializable, etcdop.KVOp{F: etcdop.FRange, Key: key})
	case kindList:
		return one(etcdop.FRange, etcdop.KVOp{F: etcdop.FRange, Key: prefix, End: prefixEnd})
	case kindStaleList:
		return one(etcdop.FRangeSerializable, etcdop.KVOp{F: etcdop.FRange, Key: prefix, End: prefixEnd})
	case kindPut:
		return one(etcdop.FPut, etcdop.KVOp{F: etcdop.FPut, Key: key, Value: c.value()})
	case kindLargePut:
		return one(etcdop.FPut, etcdop.KVOp{F: etcdop.FPut, Key: key, Value: fmt.Sprintf("%s#%d", c.value(), largeSize)})
	case kindDelete:
		return one(etcdop.FDelete, etcdop.KVOp{F: etcdop.FDelete, Key: key})
	case kindCreate:
		return c.send(etcdop.FKVTxn, etcdop.KVRequest{
			If:   []etcdop.KVCompare{{Key: key, Target: etcdop.CompareCreate, Rev: 0}},
			Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: c.value()}},
			Else: []etcdop.KVOp{{F: etcdop.FRange, Key: key}},
		})
	case kindUpdate:
		return c.send(etcdop.FKVTxn, etcdop.KVRequest{
			If:   []etcdop.KVCompare{c.unchanged(key)},
			Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: c.value()}},
			Else: []etcdop.KVOp{{F: etcdop.FRange, Key: key}},
		})
	case kindMulti:
		return c.send(etcdop.FKVTxn, etcdop.KVRequest{Then: c.multi()})
	case kindScanPut:
		return c.send(etcdop.FKVTxn, etcdop.KVRequest{
			If:   []etcdop.KVCompare{scanGuard},
			Then: []etcdop.KVOp{{F: etcdop.FPut, Key: key, Value: c.value()}},
		})
	case kindKeepAlive:
		if len(c.revoked) > 0 && c.rng.IntN(4) == 0 {
			return c.send(etcdop.FLeaseKeepAlive, etcdop.KVRequest{Lease: c.revoked[c.rng.IntN(len(c.revoked))]})
		}
		fallthrough
	case kindLease, kindRevoke:
		if c.lease == 0 { // each needs a lease first
			return c.send(etcdop.FLeaseGrant, etcdop.KVRequest{TTL: c.ttl})
		}
		switch kind {
		case kindLease:
			return one(etcdop.FPut, etcdop.KVOp{F: etcdop.FPut, Key: key, Value: c.value(), Lease: c.lease})
		case kindKeepAlive:
			return c.send(etcdop.FLeaseKeepAlive, etcdop.KVRequest{Lease: c.lease})
		}
		lease := c.lease
		c.lease = 0 // revoked, refused or unknown: a new one either way
		c.revoked = append(c.revoked, lease)
		return c.send(etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: lease})
	}
	panic("etcdkv: kind " + kind + " that Check let through")
}

// scanGuard is a condition over every key of the workload that always
// holds: each key's mod revision is below the largest there can be. It
// guards nothing; it makes the member read every key, values and all,
// while it applies the write. In etcd v3.5.0 to v3.5.2 an entry's
// consistent index is set before its write takes the backend's lock, and
// a transaction's conditions are read in between: a backend commit due
// during that read (every 100 ms) goes ahead at its end, and persists the
// index without the data (#13766). With large values on many keys the
// read takes milliseconds, and a member killed before the next commit
// skips the write for good when it restarts.
var scanGuard = etcdop.KVCompare{Key: prefix, End: prefixEnd, Target: etcdop.CompareMod, Op: etcdop.CompareLess, Rev: math.MaxInt64}

// unchanged is a condition that key is as the worker last saw it, by one
// of the three things etcd compares: mod revision, version or value.
func (c *client) unchanged(key string) etcdop.KVCompare {
	kv := c.seen[key]
	switch c.rng.IntN(3) {
	case 0:
		return etcdop.KVCompare{Key: key, Target: etcdop.CompareVersion, Rev: kv.Version}
	case 1:
		if kv.Mod != 0 { // etcd holds no value equal for a key that does not exist
			return etcdop.KVCompare{Key: key, Target: etcdop.CompareValue, Value: kv.Value}
		}
	}
	return etcdop.KVCompare{Key: key, Target: etcdop.CompareMod, Rev: kv.Mod}
}

// multi draws the operations of a transaction without conditions, as
// etcd's robustness traffic does: up to four distinct keys, each read
// (40%), put (50%) or deleted (10%), at least one put so that a watch
// shows whether it ran.
func (c *client) multi() []etcdop.KVOp {
	keys := c.rng.Perm(c.keys)[:min(4, c.keys)]
	ops := make([]etcdop.KVOp, len(keys))
	put := false
	for i, k := range keys {
		switch r := c.rng.IntN(10); {
		case r < 4:
			ops[i] = etcdop.KVOp{F: etcdop.FRange, Key: keyName(k)}
		case r < 9:
			ops[i] = etcdop.KVOp{F: etcdop.FPut, Key: keyName(k), Value: c.value()}
			put = true
		default:
			ops[i] = etcdop.KVOp{F: etcdop.FDelete, Key: keyName(k)}
		}
	}
	if !put {
		ops[0] = etcdop.KVOp{F: etcdop.FPut, Key: ops[0].Key, Value: c.value()}
	}
	return ops
}

// send records one operation: its request, the call, its answer.
func (c *client) send(f string, req etcdop.KVRequest) error {
	readOnly := f == etcdop.FRange || f == etcdop.FRangeSerializable
	d, err := workloads.Record(context.Background(), c.h, workloads.Op[*etcdop.KVResponse]{
		F: f, Value: req, Timeout: opTimeout, ReadOnly: readOnly,
		Call: func(ctx context.Context) (*etcdop.KVResponse, error) {
			if !readOnly {
				if err := etcdclient.Connected(ctx, c.cli); err != nil {
					return nil, err
				}
			}
			resp, err := call(ctx, c.cli, f, req)
			return resp, etcdclient.Classify(err)
		},
		Completion: func(resp *etcdop.KVResponse, err error) any {
			if err != nil {
				return req
			}
			return resp
		},
	})
	if d.Type == history.Ok {
		c.learn(f, req, d.Result)
	}
	return err
}

// learn keeps what an answer told the worker: its lease, the keys it read,
// and forgets a key a range of that key alone found absent or a delete of
// it removed.
func (c *client) learn(f string, req etcdop.KVRequest, resp *etcdop.KVResponse) {
	switch {
	case f == etcdop.FLeaseGrant:
		c.lease = resp.Lease
	case f == etcdop.FLeaseKeepAlive && resp.TTL == 0 && req.Lease == c.lease:
		c.lease = 0 // expired: a new one
	}
	ops := req.Then
	if f == etcdop.FKVTxn && !resp.Succeeded {
		ops = req.Else
	}
	for i, r := range resp.Results {
		if i < len(ops) && ops[i].End == "" && (ops[i].F == etcdop.FRange || ops[i].F == etcdop.FDelete) {
			delete(c.seen, ops[i].Key)
		}
		for _, kv := range r.KVs {
			c.seen[kv.Key] = kv
		}
	}
}
