// The etcd-kv model: etcd's key-value store with its revisions, as etcd's
// robustness tests model it. Every change increments one global revision;
// a put sets the key's mod revision to it (and its create revision, when
// the key is new) and increments its version; a transaction is atomic, its
// ranges seeing its own earlier writes; a lease revoke deletes its keys at
// one revision, as does a lease's expiry, which etcd may carry out on its
// own once the lease's TTL has passed since its last refresh (checked as a
// revoke of unknown outcome by history.Server: leaseExpiries). Every ok answer is checked whole: the header revision, each
// range's keys with their revisions and versions, each delete's count and
// which branch a transaction ran. The revision couples every key, so the
// history is checked as a whole.

package etcd

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/linear"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// etcdKey is one key of the model's store.
type etcdKey struct {
	value                         string
	create, mod, version, leaseID int64
}

// etcdState is an immutable state of the store: a step that changes it
// makes a new one.
type etcdState struct {
	rev    int64
	keys   map[string]etcdKey
	leases map[int64]bool // granted and not revoked
	hash   uint64
}

// etcdIn is an operation as the model runs it; etcdOut its answer, nil
// when the outcome is unknown.
type etcdIn struct {
	f   string
	req *etcdop.KVRequest
}

type etcdOut struct {
	resp *etcdop.KVResponse
	// partial: only resp's revision and branch are known, decided on
	// evidence for a transaction whose operations' results nobody saw.
	partial bool
}

// KV judges a history of etcd's store for linearizability against a
// model of etcd with its revisions.
var KV = linear.Checker{Model: etcdKVModel()}

func init() { analysis.Register(KV) }

func etcdKVModel() *linear.Model {
	return &linear.Model{
		Name: "etcd-kv",
		// Serializable ranges (etcdop.FRangeSerializable) are not
		// linearizable: the etcd-serializable checker judges them.
		Fs:      map[string]bool{etcdop.FRange: true, etcdop.FPut: true, etcdop.FDelete: true, etcdop.FKVTxn: true, etcdop.FLeaseGrant: true, etcdop.FLeaseRevoke: true},
		What:    "store",
		Prepare: prepareEtcd,
	}
}

func prepareEtcd(in analysis.Input) (*linear.Spec, error) {
	initRev, err := initialRevision(in)
	if err != nil {
		return nil, err
	}
	next := 0
	for _, op := range in.History {
		next = max(next, op.Index+1)
	}
	expiries := leaseExpiries(in.History, next)
	ev := gatherEtcdEvidence(slices.Concat(in.History, expiries), initRev)
	convert := func(inv, done *history.Op) (linear.Op, error) { return convertEtcd(ev, inv, done) }
	initial := newEtcdState(initRev, map[string]etcdKey{}, map[int64]bool{})
	direct := func(h []history.Op, p *linear.Part) (*analysis.Finding, bool) { return etcdByRevision(h, p, initial) }
	return &linear.Spec{Convert: convert, Direct: direct, Implicit: expiries, Model: porcupine.Model{
		Init: func() any { return newEtcdState(initRev, map[string]etcdKey{}, map[int64]bool{}) },
		Step: func(s, i, o any) (bool, any) {
			ok, next := etcdStep(s.(*etcdState), i.(etcdIn), o.(etcdOut))
			return ok, next
		},
		Equal:             func(a, b any) bool { return a.(*etcdState).equal(b.(*etcdState)) },
		Hash:              func(s any) uint64 { return s.(*etcdState).hash },
		DescribeOperation: func(i, o any) string { return describeEtcd(i.(etcdIn), o.(etcdOut)) },
		DescribeState:     func(s any) string { return s.(*etcdState).String() },
	}}, nil
}

func convertEtcd(ev etcdEvidence, inv, done *history.Op) (linear.Op, error) {
	var req etcdop.KVRequest
	if err := inv.Decode(&req); err != nil {
		return linear.Op{}, err
	}
	if err := checkKVRequest(inv.F, &req); err != nil {
		return linear.Op{}, fmt.Errorf("op #%d %s: %w", inv.Index, inv.F, err)
	}
	in := etcdIn{f: inv.F, req: &req}
	if done == nil {
		if out, at, none, decided := ev.decide(inv, &req); decided {
			return linear.Op{Input: in, Output: out, Returned: at, Unseen: none, Drop: none}, nil
		}
		// A range of unknown result constrains nothing; nor does a lease
		// grant of unknown result, since nobody learnt its lease.
		return linear.Op{Input: in, Output: etcdOut{}, Drop: inv.F == etcdop.FRange || inv.F == etcdop.FLeaseGrant}, nil
	}
	var resp etcdop.KVResponse
	if err := done.Decode(&resp); err != nil {
		return linear.Op{}, err
	}
	return linear.Op{Input: in, Output: etcdOut{resp: &resp}}, nil
}

// checkKVRequest refuses what the model cannot run.
func checkKVRequest(f string, req *etcdop.KVRequest) error {
	switch f {
	case etcdop.FLeaseGrant, etcdop.FLeaseRevoke:
		return nil
	case etcdop.FRange, etcdop.FPut, etcdop.FDelete:
		if len(req.Then) != 1 || req.Then[0].F != f || len(req.If)+len(req.Else) > 0 {
			return fmt.Errorf("expected one %s in then, and nothing else", f)
		}
	}
	for _, c := range req.If {
		switch c.Target {
		case etcdop.CompareValue, etcdop.CompareMod, etcdop.CompareCreate, etcdop.CompareVersion:
		default:
			return fmt.Errorf("compare target %q: expected value, mod, create or version", c.Target)
		}
		switch c.Op {
		case "", etcdop.CompareEqual:
		case etcdop.CompareNotEqual, etcdop.CompareLess, etcdop.CompareGreater:
		default:
			return fmt.Errorf("compare op %q: expected =, !=, < or >", c.Op)
		}
	}
	for _, op := range slices.Concat(req.Then, req.Else) {
		switch op.F {
		case etcdop.FRange, etcdop.FPut, etcdop.FDelete:
		default:
			return fmt.Errorf("transaction operation %q: expected range, put or delete", op.F)
		}
	}
	return nil
}

// etcdStep applies in to s. An answer of unknown outcome is legal in every
// state: the operation took effect there, or (ordered last) never.
func etcdStep(s *etcdState, in etcdIn, out etcdOut) (bool, *etcdState) {
	resp := out.resp
	switch in.f {
	case etcdop.FLeaseGrant:
		if resp == nil { // dropped by convertEtcd; legal all the same
			return true, s
		}
		if resp.Lease == 0 || s.leases[resp.Lease] || resp.Revision != s.rev {
			return false, s
		}
		leases := maps.Clone(s.leases)
		leases[resp.Lease] = true
		return true, newEtcdState(s.rev, s.keys, leases)
	case etcdop.FLeaseRevoke:
		if !s.leases[in.req.Lease] {
			return resp == nil, s // etcd refuses to revoke a lease it does not have
		}
		keys := maps.Clone(s.keys)
		maps.DeleteFunc(keys, func(_ string, k etcdKey) bool { return k.leaseID == in.req.Lease })
		leases := maps.Clone(s.leases)
		delete(leases, in.req.Lease)
		rev := s.rev
		if len(keys) < len(s.keys) {
			rev++
		}
		next := newEtcdState(rev, keys, leases)
		return resp == nil || resp.Revision == rev, next
	}
	succeeded := true
	for _, c := range in.req.If {
		succeeded = succeeded && s.holds(c)
	}
	ops := in.req.Then
	if !succeeded {
		ops = in.req.Else
	}
	next, results, ok := s.apply(ops)
	switch {
	case !ok: // a put to a lease etcd does not have: the whole transaction is refused
		return resp == nil, s
	case resp == nil:
		return true, next
	case in.f == etcdop.FKVTxn && resp.Succeeded != succeeded, resp.Revision != next.rev:
		return false, s
	case out.partial:
		return true, next
	case len(resp.Results) != len(results):
		return false, s
	}
	for i, r := range results {
		if r.Deleted != resp.Results[i].Deleted || !slices.Equal(r.KVs, resp.Results[i].KVs) {
			return false, s
		}
	}
	return true, next
}

// holds evaluates one condition as etcd does (applyCompare in its apply
// path): over every key it covers, and when it covers none, over a
// missing key, which has revisions and version 0 and meets no value
// condition.
func (s *etcdState) holds(c etcdop.KVCompare) bool {
	if c.End == "" {
		k, ok := s.keys[c.Key]
		if !ok {
			return c.Target != etcdop.CompareValue && compareHolds(c, etcdKey{})
		}
		return compareHolds(c, k)
	}
	// Unsorted and without a list: this runs at every step of the search.
	covered := false
	for name, k := range s.keys {
		if inRange(c.Key, c.End, name) {
			covered = true
			if !compareHolds(c, k) {
				return false
			}
		}
	}
	return covered || c.Target != etcdop.CompareValue && compareHolds(c, etcdKey{})
}

// compareHolds evaluates c on one key.
func compareHolds(c etcdop.KVCompare, k etcdKey) bool {
	if c.Target == etcdop.CompareValue {
		// etcd compares the bytes it holds, as bytes.Compare does: a
		// recorded value names its bytes (equal records, equal bytes),
		// and an order is taken on the bytes sent, a large value's
		// filler included (etcdop.Wire), only when one is asked for.
		switch c.Op {
		case etcdop.CompareNotEqual:
			return k.value != c.Value
		case etcdop.CompareLess:
			return k.value != c.Value && etcdop.Wire(k.value) < etcdop.Wire(c.Value)
		case etcdop.CompareGreater:
			return k.value != c.Value && etcdop.Wire(k.value) > etcdop.Wire(c.Value)
		}
		return k.value == c.Value
	}
	have := k.version
	switch c.Target {
	case etcdop.CompareMod:
		have = k.mod
	case etcdop.CompareCreate:
		have = k.create
	}
	switch c.Op {
	case etcdop.CompareNotEqual:
		return have != c.Rev
	case etcdop.CompareLess:
		return have < c.Rev
	case etcdop.CompareGreater:
		return have > c.Rev
	}
	return have == c.Rev
}

// apply runs a transaction's operations in order, each range seeing the
// writes before it, all writes at one new revision (if any key changed).
// ok is false when a put names a lease the store does not have.
func (s *etcdState) apply(ops []etcdop.KVOp) (next *etcdState, results []etcdop.KVResult, ok bool) {
	keys := s.keys
	changed := false
	write := func() {
		if !changed {
			keys, changed = maps.Clone(keys), true
		}
	}
	rev := s.rev + 1
	results = make([]etcdop.KVResult, len(ops))
	for i, op := range ops {
		switch op.F {
		case etcdop.FRange:
			for _, name := range rangeKeys(keys, op.Key, op.End) {
				k := keys[name]
				results[i].KVs = append(results[i].KVs, etcdop.KV{Key: name, Value: k.value, Create: k.create, Mod: k.mod, Version: k.version, Lease: k.leaseID})
			}
		case etcdop.FDelete:
			for _, name := range rangeKeys(keys, op.Key, op.End) {
				write()
				delete(keys, name)
				results[i].Deleted++
			}
		case etcdop.FPut:
			if op.Lease != 0 && !s.leases[op.Lease] {
				return s, nil, false
			}
			write()
			k, exists := keys[op.Key]
			if !exists {
				k = etcdKey{create: rev}
			}
			k.value, k.mod, k.version, k.leaseID = op.Value, rev, k.version+1, op.Lease
			keys[op.Key] = k
		}
	}
	if !changed {
		return s, results, true
	}
	return newEtcdState(rev, keys, s.leases), results, true
}

// rangeKeys are the keys that key and end cover, in key order: key alone
// when end is "", else [key, end), where an end of "\x00" is no end
// (etcd's convention).
func rangeKeys(keys map[string]etcdKey, key, end string) []string {
	if end == "" {
		if _, ok := keys[key]; ok {
			return []string{key}
		}
		return nil
	}
	var names []string
	for name := range keys {
		if inRange(key, end, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func newEtcdState(rev int64, keys map[string]etcdKey, leases map[int64]bool) *etcdState {
	// A sum of hashes: the same whatever the maps' order, without sorting.
	h := maphash.Comparable(etcdSeed, rev)
	for name, k := range keys {
		h += maphash.Comparable(etcdSeed, namedKey{name, k})
	}
	for id := range leases {
		h += maphash.Comparable(etcdSeed, id) * 31
	}
	return &etcdState{rev: rev, keys: keys, leases: leases, hash: h}
}

var etcdSeed = maphash.MakeSeed()

type namedKey struct {
	name string
	key  etcdKey
}

func (s *etcdState) equal(o *etcdState) bool {
	return s.hash == o.hash && s.rev == o.rev && maps.Equal(s.keys, o.keys) && maps.Equal(s.leases, o.leases)
}

func (s *etcdState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "revision %d", s.rev)
	for _, name := range slices.Sorted(maps.Keys(s.keys)) {
		k := s.keys[name]
		fmt.Fprintf(&b, "; %s=%s (mod %d, create %d, version %d", name, k.value, k.mod, k.create, k.version)
		if k.leaseID != 0 {
			fmt.Fprintf(&b, ", lease %d", k.leaseID)
		}
		b.WriteString(")")
	}
	if len(s.leases) > 0 {
		fmt.Fprintf(&b, "; leases %v", slices.Sorted(maps.Keys(s.leases)))
	}
	return b.String()
}

// describeEtcd shows an operation and its answer in a line.
func describeEtcd(in etcdIn, out etcdOut) string {
	var b strings.Builder
	switch in.f {
	case etcdop.FLeaseGrant:
		b.WriteString("lease-grant()")
	case etcdop.FLeaseRevoke:
		fmt.Fprintf(&b, "lease-revoke(%d)", in.req.Lease)
	case etcdop.FKVTxn:
		conds := make([]string, len(in.req.If))
		for i, c := range in.req.If {
			conds[i] = describeCompare(c)
		}
		fmt.Fprintf(&b, "txn(if %s then %s else %s)", strings.Join(conds, " && "), describeKVOps(in.req.Then), describeKVOps(in.req.Else))
	default:
		b.WriteString(describeKVOps(in.req.Then))
	}
	resp := out.resp
	if resp == nil {
		return b.String() + linear.UnknownMark(true)
	}
	b.WriteString(" →")
	if in.f == etcdop.FKVTxn {
		fmt.Fprintf(&b, " %t", resp.Succeeded)
	}
	if in.f == etcdop.FLeaseGrant {
		fmt.Fprintf(&b, " lease %d", resp.Lease)
	}
	for _, r := range resp.Results {
		for _, kv := range r.KVs {
			fmt.Fprintf(&b, " %s=%s@%d", kv.Key, kv.Value, kv.Mod)
		}
		if r.Deleted > 0 {
			fmt.Fprintf(&b, " deleted %d", r.Deleted)
		}
	}
	if out.partial {
		b.WriteString(" (results unknown)")
	}
	fmt.Fprintf(&b, " rev %d", resp.Revision)
	return b.String()
}

func describeCompare(c etcdop.KVCompare) string {
	key := c.Key
	switch c.End {
	case "":
	case "\x00":
		key = "[" + key + ", …)"
	default:
		key = "[" + key + ", " + c.End + ")"
	}
	if c.Target == etcdop.CompareValue {
		return fmt.Sprintf("%s=%s", key, c.Value)
	}
	return fmt.Sprintf("%s.%s%s%d", key, c.Target, cmp.Or(c.Op, etcdop.CompareEqual), c.Rev)
}

func describeKVOps(ops []etcdop.KVOp) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		key := op.Key
		if op.End != "" {
			key += ".." + op.End
		}
		switch op.F {
		case etcdop.FPut:
			parts[i] = fmt.Sprintf("put(%s, %s)", key, op.Value)
			if op.Lease != 0 {
				parts[i] = fmt.Sprintf("put(%s, %s, lease %d)", key, op.Value, op.Lease)
			}
		default:
			parts[i] = op.F + "(" + key + ")"
		}
	}
	return strings.Join(parts, ", ")
}
