package etcd

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// revisionMakers is what elimination shows of the writes that made each
// revision: every revision from the initial one to the last any answer
// named was made by one write. A revision no acknowledged write made,
// seen first at a time before which only one write of unknown outcome
// (and no lease's expiry) can have made it, is that write's; it is then
// spent, and, a put or a delete of one key, its event is known. A revision
// an acknowledged revoke named is left alone (a revoke that found its
// lease empty answers the current revision), unless the revoke's lease was
// granted here and no put gave it a key: then it made none. Nothing is
// shown of a history holding operations the etcd checkers do not know,
// which may write too.
type revisionMakers struct {
	made map[int64]answered // by the acknowledged write that made it
	// open are the other revisions, each with the writes of unknown
	// outcome that can have made it, when there are at most maxMakers;
	// expiry says a lease's expiry can too.
	open   map[int64][]*answered
	expiry map[int64]bool
	events []knownEvent // the sole makers'
	// nobody are the revisions no write in the history can have made,
	// each with the first answer that showed it.
	nobody []madeByNobody
	// unchanged are the spans over which reads and creations showed keys
	// left as they were.
	unchanged keySpans
	puts      firstPuts
}

type madeByNobody struct {
	rev   int64
	shown observed
	// reads (and watches) showed every write that can otherwise have
	// made it left its keys as they were, and revokes ended the leases
	// of the rest.
	reads   []*observed
	revokes []*answered
	// late, when set, is the write that made it, as what showed its put
	// says, though sent only after it was shown.
	late *shownPut
}

// maxMakers bounds the writes elimination keeps for a revision: past it,
// nothing is shown of the revision, and the work and memory stay bounded
// in long histories with many writes of unknown outcome.
const maxMakers = 8

// maxPasses bounds the passes elimination makes over the revisions.
const maxPasses = 3

// maxSifted bounds the writes elimination sifts for a revision by the
// keys reads showed left as they were.
const maxSifted = 64

// eliminate shows what it can of the makers of each revision, within the
// history's revision limit (nil: nothing is shown).
func eliminate(answers []answered, watches []watchOp, limit *revisionLimit) revisionMakers {
	m := revisionMakers{made: map[int64]answered{}, open: map[int64][]*answered{}, expiry: map[int64]bool{}}
	if limit == nil {
		return m
	}
	var open []*candidate
	revoked := map[int64]bool{} // revisions acknowledged revokes named
	var seen []observed
	puts := putsOf(answers)
	ends := leaseEnds(answers)
	granted := grantExpiries(answers)
	holds := keyLeasesOf(answers)
	for _, a := range answers {
		if a.resp != nil {
			seen = append(seen, observed{at: a.Done.Time, rev: a.resp.Revision, src: a.src(), ops: a.ops()})
		}
		sent := a.Inv.Time
		switch {
		case a.resp == nil && (a.Inv.F == etcdop.FPut || a.Inv.F == etcdop.FDelete || a.Inv.F == etcdop.FKVTxn || a.Inv.F == etcdop.FLeaseRevoke):
		case a.resp == nil:
			continue // a read, or a grant no one learnt the lease of: it can expire with no keys
		case a.Inv.F == etcdop.FLeaseGrant:
			sent += grantTTL(a.Pair) // its expiry
		case a.Inv.F == etcdop.FLeaseRevoke:
			_, given := puts.leaseRev[a.req.Lease]
			_, here := granted[a.req.Lease]
			switch end, ok := ends[a.req.Lease]; {
			case !given && here:
				// One of a lease granted here that no put gave a key
				// deleted nothing, and made no revision.
				continue
			case !given || !ok || end.Inv.Index != a.Inv.Index:
				// Its lease's keys are not known here, or another
				// revoke ended it: its revision is left alone.
				revoked[a.resp.Revision] = true
				continue
			}
			// The one end of a lease puts gave keys: it made its
			// answer's revision, or, finding its lease empty, none.
		default:
			if madeRevision(a.Inv.F, &a.req, a.resp) {
				m.made[a.resp.Revision] = a
			}
			continue
		}
		if a.endsLease() {
			if end, ended := ends[a.lease()]; ended && end.Inv.Index != a.Inv.Index {
				// An acknowledged revoke ended the lease, which was
				// there then: neither this revoke nor its expiry did.
				continue
			}
		}
		if at, from, ok := puts.writable(a, sent); ok {
			c := &candidate{a: a, at: at, from: from, upTo: math.MaxInt64}
			if rev, by, ok := leaseBound(a, ends); ok {
				c.upTo, c.ended = rev, &by
			}
			if a.resp != nil { // the acknowledged revoke above
				c.from, c.upTo = max(from, a.resp.Revision), a.resp.Revision
			}
			open = append(open, c)
		}
	}
	seen = append(seen, watchesSeen(watches)...)
	if len(seen) == 0 {
		return m
	}
	unchanged := unchangedKeys(answers, watches, puts)
	m.unchanged, m.puts = unchanged, puts
	shownBy := assignShown(open, answers, watches, m.made)
	// By revision, highest first, each with the earliest answer that
	// showed that revision or a later one: it was made by then.
	slices.SortFunc(seen, func(a, b observed) int { return cmp.Compare(b.rev, a.rev) })
	first := make([]observed, len(seen))
	for i, o := range seen {
		first[i] = o
		if i > 0 && first[i-1].at <= o.at {
			first[i] = first[i-1]
		}
	}
	shown := func(rev int64) observed {
		i, _ := slices.BinarySearchFunc(seen, rev, func(o observed, r int64) int { return cmp.Compare(r, o.rev) })
		for i < len(seen) && seen[i].rev >= rev {
			i++
		}
		return first[i-1]
	}
	// The candidates in the order they can first make a revision; the
	// times revisions were first shown by only grow with the revision, so
	// each revision's candidates are a prefix of them, less those spent.
	slices.SortStableFunc(open, func(a, b *candidate) int { return cmp.Compare(a.at, b.at) })
	// Each pass rules out of every revision the writes the passes before
	// showed made another; a pass that shows no more is the last.
	for pass, more := 0, true; more && pass < maxPasses; pass++ {
		more = false
		m.open, m.expiry, m.events, m.nobody = map[int64][]*answered{}, map[int64]bool{}, nil, nil
		var active []*candidate
		next := 0
		// Past the most revisions the writes can make, checkMade reports.
		for rev := limit.initial + 1; rev <= min(seen[0].rev, limit.initial+int64(len(limit.sent))); rev++ {
			if _, ok := m.made[rev]; ok || revoked[rev] {
				continue
			}
			by := shown(rev)
			if sp, ok := shownBy[rev]; ok {
				if sp.c.at > by.at {
					m.nobody = append(m.nobody, madeByNobody{rev: rev, shown: by, late: &sp})
				}
				m.open[rev] = []*answered{&sp.c.a}
				m.learn(rev, []*candidate{sp.c})
				continue
			}
			for ; next < len(open) && open[next].at <= by.at; next++ {
				active = append(active, open[next])
			}
			active = slices.DeleteFunc(active, func(c *candidate) bool { return c.spentAt != 0 && c.spentAt < rev })
			reads := map[*observed]bool{} // that rule candidates out
			revokes := map[*answered]bool{}
			can := slices.DeleteFunc(slices.Clone(active), func(c *candidate) bool {
				if c.from > rev || c.spentAt > rev {
					return true
				}
				if c.upTo < rev {
					if c.ended != nil {
						revokes[c.ended] = true
					}
					return true
				}
				// An end of a lease that held no key made no revision.
				return c.a.endsLease() && holds.detached(c.a.lease(), puts.leased[c.a.lease()], rev)
			})
			if len(can) <= maxSifted {
				can = slices.DeleteFunc(can, func(c *candidate) bool { return unchanged.rulesOut(c.a, puts, rev, reads) })
			}
			switch {
			case len(can) == 0:
				m.nobody = append(m.nobody, madeByNobody{rev: rev, shown: by, reads: slices.SortedFunc(maps.Keys(reads), func(a, b *observed) int { return cmp.Compare(a.ops[0].Index, b.ops[0].Index) }),
					revokes: slices.SortedFunc(maps.Keys(revokes), func(a, b *answered) int { return cmp.Compare(a.Inv.Index, b.Inv.Index) })})
				continue
			case len(can) > maxMakers:
				continue
			}
			for _, c := range can {
				if c.a.Inv.F == etcdop.FLeaseGrant {
					m.expiry[rev] = true
				} else {
					m.open[rev] = append(m.open[rev], &c.a)
				}
			}
			if m.expiry[rev] {
				continue
			}
			if len(can) == 1 && can[0].spentAt == 0 {
				can[0].spentAt, more = rev, true
			}
			m.learn(rev, can)
		}
	}
	return m
}

// candidate is a write of unknown outcome (or a lease's expiry) that can
// have made revisions: from a time, and within bounds.
type candidate struct {
	a       answered
	at      time.Duration // the earliest it can have made a revision
	from    int64         // the lowest it can have made
	upTo    int64         // the highest it can have made
	ended   *answered     // the revoke that bounds upTo, if any
	spentAt int64         // the revision it is known to have made, if any
}

// learn notes the event that made rev, when each of the writes that can
// have made it, can, would have made the same one.
func (m *revisionMakers) learn(rev int64, can []*candidate) {
	var ev etcdop.WatchEvent
	var ops []history.Op
	var srcs []string
	for i, c := range can {
		e, ok := eventOf(c.a, rev, m.puts)
		if !ok || i > 0 && !sameEvent(e, ev) {
			return
		}
		ev = e
		ops = append(ops, c.a.ops()...)
		srcs = append(srcs, c.a.src())
	}
	if len(can) == 0 {
		return
	}
	src := fmt.Sprintf("%s, the one write that can have made revision %d", srcs[0], rev)
	if len(srcs) > 1 {
		src = fmt.Sprintf("%s, each of the writes that can have made revision %d", strings.Join(srcs, " or "), rev)
	}
	m.events = append(m.events, knownEvent{ev: ev, ops: ops, since: rev, src: src})
}

// shownPut is the write that made a revision, as a put shown there says:
// the one write that can have put its key, value and lease.
type shownPut struct {
	c  *candidate
	by observed // what showed the put
}

// assignShown are the revisions that a put a watch's event or a read
// showed gives their makers: the one write of unknown outcome, sent before
// it was shown and able to make that revision, that puts the key, value
// and lease shown, when no acknowledged write made it. Each is spent: a
// write makes one revision at the most. A write so shown at two revisions
// is left out (the etcd checkers report it).
func assignShown(open []*candidate, answers []answered, watches []watchOp, made map[int64]answered) map[int64]shownPut {
	byKV := map[keyValue][]*candidate{}
	for _, c := range open {
		for _, op := range c.a.branch() {
			if op.F == etcdop.FPut {
				byKV[keyValue{op.Key, op.Value}] = append(byKV[keyValue{op.Key, op.Value}], c)
			}
		}
	}
	out := map[int64]shownPut{}
	at := map[*candidate]int64{} // the revision each was shown at
	twice := map[*candidate]bool{}
	show := func(kv etcdop.KV, by observed) {
		when := by.at
		if _, ok := made[kv.Mod]; ok {
			return
		}
		var one *candidate
		for _, c := range byKV[keyValue{kv.Key, kv.Value}] {
			if c.at > when || c.from > kv.Mod || c.upTo < kv.Mod || !slices.ContainsFunc(c.a.branch(), func(op etcdop.KVOp) bool {
				return op.F == etcdop.FPut && op.Key == kv.Key && op.Value == kv.Value && op.Lease == kv.Lease
			}) {
				continue
			}
			if one != nil && one != c {
				return // two can
			}
			one = c
		}
		if one == nil {
			return
		}
		if twice[one] {
			return
		}
		if r, ok := at[one]; ok && r != kv.Mod {
			if out[r].c == one {
				delete(out, r)
			}
			twice[one] = true
			return
		}
		if prev, ok := out[kv.Mod]; ok && prev.c != one {
			return
		}
		if _, ok := at[one]; !ok {
			at[one], out[kv.Mod] = kv.Mod, shownPut{c: one, by: by}
		}
	}
	for _, a := range answers {
		if a.resp == nil {
			continue
		}
		by := observed{at: a.Done.Time, rev: a.resp.Revision, src: a.src(), ops: a.ops()}
		for i, op := range a.branch() {
			if op.F == etcdop.FRange && i < len(a.resp.Results) {
				for _, kv := range a.resp.Results[i].KVs {
					show(kv, by)
				}
			}
		}
	}
	for _, w := range watches {
		src := w.src()
		for _, r := range w.res.Responses {
			by := observed{at: r.Time, rev: responseRevision(r), src: src, ops: w.proof()}
			for _, e := range r.Events {
				if e.Type == "put" {
					show(e.KV, by)
				}
				if e.Prev != nil && e.Prev.Mod < e.KV.Mod {
					show(*e.Prev, by)
				}
			}
		}
	}
	for rev, sp := range out {
		sp.c.spentAt = rev
	}
	return out
}

// reportNobody reports the revisions no write can have made whose first
// sign was an answer to an operation f ("revision-never-made"); those a
// linearizable answer showed first are etcd-kv's to find.
func (m revisionMakers) reportNobody(f string, found *analysis.FindingList) {
	for _, nb := range m.nobody {
		if (len(nb.shown.ops) == 0 || nb.shown.ops[0].F != f) && !slices.ContainsFunc(nb.reads, func(o *observed) bool { return o.ops[0].F == f }) {
			continue
		}
		why := "none that was sent could write a key that existed"
		ops := nb.shown.ops
		if l := nb.late; l != nil {
			why = fmt.Sprintf("only %s can have made it, as %s showed, and it was sent only at %.3fs", l.c.a.src(), l.by.src, l.c.at.Seconds())
			ops = slices.Concat(ops, l.by.ops, l.c.a.ops())
		}
		var reads, revokes []string
		for _, o := range nb.reads {
			reads = append(reads, o.src)
			ops = append(ops, o.ops...)
		}
		for _, a := range nb.revokes {
			revokes = append(revokes, a.src())
			ops = append(ops, a.ops()...)
		}
		if len(reads) > 0 {
			why += ", or a key that " + strings.Join(reads, " and ") + " showed left as it was (or, a put, absent) there"
		}
		if len(revokes) > 0 {
			why += ", or put a key on a lease that " + strings.Join(revokes, " and ") + " had ended below it"
		}
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "revision-never-made", Explanation: fmt.Sprintf(
				"%s showed revision %d or later at %.3fs, but no write in the history can have made revision %d by then: %s.",
				nb.shown.src, nb.rev, nb.shown.at.Seconds(), nb.rev, why), Ops: ops}
		})
	}
}

// untouched says whether revision rev is known to have left key as it
// was: made by an acknowledged write, or only by writes of unknown outcome
// (no lease's expiry), none of which writes key; a revoke deletes only
// keys puts gave its lease.
func (m revisionMakers) untouched(rev int64, key string) bool {
	writes := func(a answered) bool {
		if a.Inv.F == etcdop.FLeaseRevoke {
			return m.puts.leased == nil || slices.Contains(m.puts.leased[a.req.Lease], key)
		}
		return slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return touches(op, key) })
	}
	if a, ok := m.made[rev]; ok {
		return !writes(a)
	}
	can, ok := m.open[rev]
	return ok && !m.expiry[rev] && !slices.ContainsFunc(can, func(a *answered) bool { return writes(*a) })
}

// eventOf is the event a put or a delete of one key made at rev, when it
// made rev; a delete of a range made rev by deleting something, so when
// only one key of the range can have been there before rev, it deleted
// that one.
func eventOf(a answered, rev int64, puts firstPuts) (etcdop.WatchEvent, bool) {
	if len(a.req.Then) != 1 || len(a.req.Else) > 0 {
		return etcdop.WatchEvent{}, false
	}
	op := a.req.Then[0]
	switch {
	case a.Inv.F == etcdop.FPut && op.F == etcdop.FPut:
		return etcdop.WatchEvent{Type: "put", KV: etcdop.KV{Key: op.Key, Value: op.Value, Mod: rev, Lease: op.Lease}}, true
	case a.Inv.F == etcdop.FDelete && op.F == etcdop.FDelete && op.End == "":
		return etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: op.Key, Mod: rev}}, true
	case a.Inv.F == etcdop.FDelete && op.F == etcdop.FDelete:
		var there []string
		for key, r := range puts.keyRev {
			if r < rev && inRange(op.Key, op.End, key) {
				there = append(there, key)
			}
		}
		if len(there) == 1 {
			return etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: there[0], Mod: rev}}, true
		}
	}
	return etcdop.WatchEvent{}, false
}
