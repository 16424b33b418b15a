package oracle

import (
	"maps"
	"slices"

	"github.com/chaos-testing/chaos/ops/etcdop"
)

// Store is etcd's key-value store at one point: its revision, its keys as
// a range returns them, and the leases granted and not revoked. It is
// never changed in place: Apply returns a new one.
type Store struct {
	Rev    int64
	Keys   map[string]etcdop.KV
	Leases map[int64]bool
}

// NewStore is the store a history starts from: revision 1, no key, no lease.
func NewStore() Store {
	return Store{Rev: 1, Keys: map[string]etcdop.KV{}, Leases: map[int64]bool{}}
}

// Apply runs one write as etcd's API guarantees say it runs (etcd.io,
// "API guarantees": every change is assigned one new revision; a request
// that changes nothing keeps the revision): a put sets its key's value,
// mod revision and lease, its create revision when the key is new, and
// counts one more version; a delete removes the keys of its range; a
// lease grant adds lease (the answer's lease ID); a revoke removes its
// lease and deletes the lease's keys at one revision. It returns the
// store after and the answer etcd gives; refused is true when etcd
// refuses the request (a put to, or a revoke of, a lease it does not
// have), which then changes nothing.
func (s Store) Apply(f string, req etcdop.KVRequest, lease int64) (next Store, resp etcdop.KVResponse, refused bool) {
	next = Store{Rev: s.Rev, Keys: maps.Clone(s.Keys), Leases: maps.Clone(s.Leases)}
	switch f {
	case etcdop.FLeaseGrant:
		if lease == 0 || s.Leases[lease] {
			return s, resp, true
		}
		next.Leases[lease] = true
		return next, etcdop.KVResponse{Revision: s.Rev, Lease: lease}, false
	case etcdop.FLeaseRevoke:
		if !s.Leases[req.Lease] {
			return s, resp, true
		}
		delete(next.Leases, req.Lease)
		maps.DeleteFunc(next.Keys, func(_ string, kv etcdop.KV) bool { return kv.Lease == req.Lease })
		if len(next.Keys) < len(s.Keys) {
			next.Rev++
		}
		return next, etcdop.KVResponse{Revision: next.Rev}, false
	case etcdop.FPut:
		op := req.Then[0]
		if op.Lease != 0 && !s.Leases[op.Lease] {
			return s, resp, true
		}
		next.Rev++
		kv, exists := s.Keys[op.Key]
		if !exists {
			kv = etcdop.KV{Key: op.Key, Create: next.Rev}
		}
		kv.Value, kv.Mod, kv.Version, kv.Lease = op.Value, next.Rev, kv.Version+1, op.Lease
		next.Keys[op.Key] = kv
		return next, etcdop.KVResponse{Revision: next.Rev, Results: []etcdop.KVResult{{}}}, false
	case etcdop.FDelete:
		op := req.Then[0]
		gone := s.Range(op.Key, op.End)
		for _, kv := range gone {
			delete(next.Keys, kv.Key)
		}
		if len(gone) > 0 {
			next.Rev++
		}
		return next, etcdop.KVResponse{Revision: next.Rev, Results: []etcdop.KVResult{{Deleted: int64(len(gone))}}}, false
	}
	// A range changes nothing.
	op := req.Then[0]
	return s, etcdop.KVResponse{Revision: s.Rev, Results: []etcdop.KVResult{{KVs: s.Range(op.Key, op.End)}}}, false
}

// Range is the keys of [key, end) (key alone when end is "", every key
// from key on when end is "\x00"), in key order, as a range returns them.
func (s Store) Range(key, end string) []etcdop.KV {
	var kvs []etcdop.KV
	for _, name := range slices.Sorted(maps.Keys(s.Keys)) {
		if InRange(key, end, name) {
			kvs = append(kvs, s.Keys[name])
		}
	}
	return kvs
}

// InRange says whether k is in the range that key and end name.
func InRange(key, end, k string) bool {
	switch end {
	case "":
		return k == key
	case "\x00":
		return k >= key
	}
	return k >= key && k < end
}

// Event is a change of one key at one revision, as a watch gets it: a put
// with the key as it became, or a delete with the key's name and the
// delete's revision; Prev is the key before, nil if it did not exist.
type Event = etcdop.WatchEvent

// Events are the changes from store a to store b, the next revision: one
// event per key that changed, in key order.
func Events(a, b Store) []Event {
	var evs []Event
	names := slices.Sorted(maps.Keys(a.Keys))
	names = append(names, slices.Sorted(maps.Keys(b.Keys))...)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		before, had := a.Keys[name]
		after, has := b.Keys[name]
		if had && has && before == after {
			continue
		}
		e := Event{Type: "put", KV: after}
		if !has {
			e = Event{Type: "delete", KV: etcdop.KV{Key: name, Mod: b.Rev}}
		}
		if had {
			e.Prev = &before
		}
		evs = append(evs, e)
	}
	return evs
}
