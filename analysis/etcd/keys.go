package etcd

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/ops/etcdop"
)

// What a history shows of its keys: when each can first have been
// written, and the spans of revisions over which reads showed one left
// as it was. Elimination rules out, for a revision, the writes that could
// only have written keys left as they were there.

// firstPuts is, by key and by lease, when the first put that did not fail
// and wrote the key, or gave a key the lease, was sent, and the lowest
// revision such a put can have made (when one's outcome is unknown, past
// every revision answered before it was sent, and 2, etcd's first
// write's, at the lowest).
type firstPuts struct {
	byKey    map[string]time.Duration
	byLease  map[int64]time.Duration
	keyRev   map[string]int64
	leaseRev map[int64]int64
	// leased are, by lease, the keys puts gave it.
	leased map[int64][]string
}

// putsOf are the first puts of the answers' writes.
func putsOf(answers []answered) firstPuts {
	p := firstPuts{byKey: map[string]time.Duration{}, byLease: map[int64]time.Duration{}, keyRev: map[string]int64{}, leaseRev: map[int64]int64{}, leased: map[int64][]string{}}
	var answered []sighting
	for _, a := range answers {
		if a.resp != nil {
			answered = append(answered, sighting{rev: a.resp.Revision, at: a.Done.Time})
		}
	}
	floor := floors(answered)
	for _, a := range answers {
		rev := max(2, floor(a.Inv.Time)+1)
		if a.resp != nil {
			rev = a.resp.Revision
		}
		for _, op := range a.branch() {
			if op.F == etcdop.FPut {
				p.add(op, a.Inv.Time, rev)
			}
		}
	}
	return p
}

func (p firstPuts) add(op etcdop.KVOp, at time.Duration, rev int64) {
	if t, ok := p.byKey[op.Key]; !ok || at < t {
		p.byKey[op.Key] = at
	}
	if r, ok := p.keyRev[op.Key]; !ok || rev < r {
		p.keyRev[op.Key] = rev
	}
	if t, ok := p.byLease[op.Lease]; op.Lease != 0 && (!ok || at < t) {
		p.byLease[op.Lease] = at
	}
	if r, ok := p.leaseRev[op.Lease]; op.Lease != 0 && (!ok || rev < r) {
		p.leaseRev[op.Lease] = rev
	}
	if op.Lease != 0 && !slices.Contains(p.leased[op.Lease], op.Key) {
		p.leased[op.Lease] = append(p.leased[op.Lease], op.Key)
	}
}

// keysIn are the keys of [key, end) a put was sent for before a time:
// every key of the range that can exist by then.
func (p firstPuts) keysIn(key, end string, before time.Duration) []string {
	var out []string
	for k, t := range p.byKey {
		if t < before && inRange(key, end, k) {
			out = append(out, k)
		}
	}
	return out
}

// writable says from when, and from which revision up, write a can have
// made a revision: a put whenever it was sent, at any revision; a delete
// only once a put of a key it deletes was sent, and past a revision such
// a put can have made; a revoke or an expiry likewise once a put gave its
// lease a key (a lease no put gave one deletes nothing). ok is false when
// it never can.
func (p firstPuts) writable(a answered, sent time.Duration) (at time.Duration, from int64, ok bool) {
	if slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return op.F == etcdop.FPut }) {
		return sent, 0, true
	}
	see := func(t time.Duration, rev int64) {
		if !ok || t < at {
			at = t
		}
		if !ok || rev+1 < from {
			from = rev + 1
		}
		ok = true
	}
	switch a.Inv.F {
	case etcdop.FLeaseRevoke, etcdop.FLeaseGrant:
		if t, given := p.byLease[a.lease()]; given {
			see(t, p.leaseRev[a.lease()])
		}
	default:
		for key, t := range p.byKey {
			if slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return op.F == etcdop.FDelete && touches(op, key) }) {
				see(t, p.keyRev[key])
			}
		}
	}
	return max(at, sent), from, ok
}

// keySpans are, by key, the spans of revisions over which reads showed
// the key left as it was: a key returned with mod revision m by a read at
// revision r was written at no revision of (m, r]; a key of its range it
// left out, which no write sent by its answer can have deleted, was
// written at none up to r (a key, once there, stays until deleted). So
// too a key a read or a watch's event showed created at c, which no
// write sent by that answer can have deleted: it was absent at c-1,
// so written at none up to c-1. absent are, by key and revision, the
// answers that showed the key absent there (a read that left it out, a
// delete that found nothing, a key created at the next): whatever made
// that revision did not put it.
type keySpans struct {
	spans  map[string][]revSpan
	absent map[string]map[int64]*observed
}

// revSpan is the revisions (after, upTo], with the answers that showed
// them.
type revSpan struct {
	after, upTo int64
	by          []revSpan // merged into it: each from one answer
	read        *observed
	// there: the read returned the key, so it existed through the span,
	// on lease.
	there bool
	lease int64
}

func unchangedKeys(answers []answered, watches []watchOp, puts firstPuts) keySpans {
	// When a write that can delete each key was first sent: a delete
	// of it, or a revoke of a lease a put gave it, or the lease's expiry
	// (the put's own time, for a lease no grant in the history names).
	deleter := map[string]time.Duration{}
	mayDelete := func(key string, at time.Duration) {
		if t, ok := deleter[key]; !ok || at < t {
			deleter[key] = at
		}
	}
	ends := grantExpiries(answers) // by lease, when a revoke or its expiry can first end it
	for _, a := range answers {
		if t, ok := ends[a.req.Lease]; a.Inv.F == etcdop.FLeaseRevoke && (!ok || a.Inv.Time < t) {
			ends[a.req.Lease] = a.Inv.Time
		}
	}
	for _, a := range answers {
		for _, op := range a.branch() {
			switch {
			case op.F == etcdop.FPut && op.Lease != 0:
				end, ok := ends[op.Lease]
				if !ok {
					end = a.Inv.Time
				}
				mayDelete(op.Key, end)
			case op.F == etcdop.FDelete:
				for _, key := range puts.keysIn(op.Key, op.End, math.MaxInt64) {
					mayDelete(key, a.Inv.Time)
				}
			}
		}
	}
	s := keySpans{spans: map[string][]revSpan{}, absent: map[string]map[int64]*observed{}}
	undeleted := func(key string, by time.Duration) bool {
		t, ok := deleter[key]
		return !ok || t > by
	}
	absent := func(key string, rev int64, o *observed) {
		if s.absent[key] == nil {
			s.absent[key] = map[int64]*observed{}
		}
		s.absent[key][rev] = o
	}
	created := func(kv etcdop.KV, o *observed) {
		if kv.Create > 1 && kv.Create <= kv.Mod {
			absent(kv.Key, kv.Create-1, o)
		}
		if kv.Create > 1 && kv.Create <= kv.Mod && undeleted(kv.Key, o.at) {
			s.spans[kv.Key] = append(s.spans[kv.Key], revSpan{after: 0, upTo: kv.Create - 1, read: o})
		}
	}
	for _, a := range answers {
		if a.resp == nil {
			continue
		}
		o := &observed{at: a.Done.Time, rev: a.resp.Revision, src: a.src(), ops: a.ops()}
		wrote := madeRevision(a.Inv.F, &a.req, a.resp)
		for i, op := range a.branch() {
			if i >= len(a.resp.Results) || op.F != etcdop.FRange && (op.F != etcdop.FDelete || a.resp.Results[i].Deleted > 0) {
				continue
			}
			rev := a.resp.Revision
			if wrote {
				// A transaction that wrote reads, before its first
				// write, the store of the revision before its own;
				// after it, its own writes too: left alone.
				if slices.ContainsFunc(a.branch()[:i], func(op etcdop.KVOp) bool { return op.F != etcdop.FRange }) {
					continue
				}
				rev--
			}
			returned := map[string]bool{}
			for _, kv := range a.resp.Results[i].KVs {
				returned[kv.Key] = true
				if kv.Mod < rev {
					s.spans[kv.Key] = append(s.spans[kv.Key], revSpan{after: kv.Mod, upTo: rev, read: o, there: true, lease: kv.Lease})
				}
				created(kv, o)
			}
			for _, key := range puts.keysIn(op.Key, op.End, math.MaxInt64) {
				if returned[key] {
					continue
				}
				absent(key, rev, o)
				if undeleted(key, a.Done.Time) {
					s.spans[key] = append(s.spans[key], revSpan{after: 0, upTo: rev, read: o})
				}
			}
		}
	}
	for _, w := range watches {
		src := w.src()
		for _, r := range w.res.Responses {
			o := &observed{at: r.Time, rev: responseRevision(r), src: src, ops: w.proof()}
			for _, e := range r.Events {
				if e.Type == "put" {
					created(e.KV, o)
				}
			}
		}
	}
	for key, spans := range s.spans {
		slices.SortFunc(spans, func(a, b revSpan) int { return cmp.Compare(a.after, b.after) })
		var merged []revSpan
		for _, sp := range spans {
			if last := len(merged) - 1; last >= 0 && sp.after <= merged[last].upTo {
				merged[last].upTo = max(merged[last].upTo, sp.upTo)
				merged[last].by = append(merged[last].by, sp)
			} else {
				merged = append(merged, revSpan{after: sp.after, upTo: sp.upTo, by: []revSpan{sp}})
			}
		}
		s.spans[key] = merged
	}
	return s
}

// holds finds an answer that showed key left as it was at rev.
func (s keySpans) holds(key string, rev int64) (*observed, bool) {
	return s.find(key, rev, func(revSpan) bool { return true })
}

// stays finds an answer that showed key there, and left as it was, at rev
// and so at rev-1, on lease (any, when 0): a delete of a range holding it,
// or an end of its lease, would have written it.
func (s keySpans) stays(key string, rev, lease int64) (*observed, bool) {
	return s.find(key, rev, func(sp revSpan) bool { return sp.there && (lease == 0 || sp.lease == lease) })
}

// find finds an answer of a span of key holding rev that is.
func (s keySpans) find(key string, rev int64, is func(revSpan) bool) (*observed, bool) {
	spans := s.spans[key]
	i, _ := slices.BinarySearchFunc(spans, rev, func(sp revSpan, r int64) int { return cmp.Compare(sp.after, r) })
	if i == 0 || rev > spans[i-1].upTo {
		return nil, false
	}
	for _, sp := range spans[i-1].by {
		if sp.after < rev && rev <= sp.upTo && is(sp) {
			return sp.read, true
		}
	}
	return nil, false
}

// rulesOut says whether a can have made revision rev only by writing keys
// left as they were there (a put its key, a delete the keys of its range
// that puts wrote, a revoke or a grant's expiry the keys given its lease),
// or, a put, by putting a key absent there, or, a delete, a revoke or an
// expiry, by leaving a key of its range, or on its lease, that was there;
// and adds the answers that show it to by.
func (s keySpans) rulesOut(a answered, puts firstPuts, rev int64, by map[*observed]bool) bool {
	// A put or a delete holds one operation (checkKVRequest).
	switch a.Inv.F {
	case etcdop.FPut:
		if read, ok := s.absent[a.req.Then[0].Key][rev]; ok {
			by[read] = true
			return true
		}
	case etcdop.FDelete:
		op := a.req.Then[0]
		for _, key := range puts.keysIn(op.Key, op.End, math.MaxInt64) {
			if read, ok := s.stays(key, rev, 0); ok && touches(op, key) {
				by[read] = true
				return true
			}
		}
	}
	var keys []string
	switch a.Inv.F {
	case etcdop.FLeaseRevoke, etcdop.FLeaseGrant:
		keys = puts.leased[a.lease()]
		for _, key := range keys {
			if read, ok := s.stays(key, rev, a.lease()); ok {
				by[read] = true
				return true
			}
		}
	default:
		for _, op := range a.branch() {
			switch op.F {
			case etcdop.FPut:
				keys = append(keys, op.Key)
			case etcdop.FDelete:
				keys = append(keys, puts.keysIn(op.Key, op.End, math.MaxInt64)...)
			}
		}
	}
	reads := map[*observed]bool{}
	for _, key := range keys {
		read, ok := s.holds(key, rev)
		if !ok {
			return false
		}
		reads[read] = true
	}
	maps.Copy(by, reads)
	return true
}
