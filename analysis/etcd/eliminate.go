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
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// revisionMakers is what elimination shows of the writes that made each
// revision: every revision from the initial one to the last any answer
// named was made by one write. A revision no acknowledged write made,
// seen first at a time before which only one write of unknown outcome
// (and no lease's expiry) can have made it, is that write's; it is then
// spent, and, a put or a delete of one key, its event is known. A revision
// an acknowledged revoke named is left alone: a revoke that found its
// lease empty answers the current revision. Nothing is shown of a history
// holding operations the etcd checkers do not know, which may write too.
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
}

type madeByNobody struct {
	rev   int64
	shown observed
	// reads (and watches) showed every write that can otherwise have
	// made it left its keys as they were, and revokes ended the leases
	// of the rest.
	reads   []*observed
	revokes []*answered
}

// maxMakers bounds the writes elimination keeps for a revision: past it,
// nothing is shown of the revision, and the work and memory stay bounded
// in long histories with many writes of unknown outcome.
const maxMakers = 8

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
	type candidate struct {
		a     answered
		at    time.Duration // the earliest it can have made a revision
		upTo  int64         // the highest it can have made
		ended *answered     // the revoke that says so, if any
		spent bool
	}
	var open []*candidate
	revoked := map[int64]bool{} // revisions acknowledged revokes named
	var seen []observed
	puts := putsOf(answers)
	ends := leaseEnds(answers)
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
			revoked[a.resp.Revision] = true
			continue
		default:
			if madeRevision(a.Inv.F, &a.req, a.resp) {
				m.made[a.resp.Revision] = a
			}
			continue
		}
		if at, ok := puts.writableFrom(a, sent); ok {
			c := &candidate{a: a, at: at, upTo: math.MaxInt64}
			if rev, by, ok := leaseBound(a, ends); ok {
				c.upTo, c.ended = rev, &by
			}
			open = append(open, c)
		}
	}
	seen = append(seen, watchesSeen(watches)...)
	if len(seen) == 0 {
		return m
	}
	unchanged := unchangedKeys(answers, watches, puts)
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
	var active []*candidate
	next := 0
	// Past the most revisions the writes can make, checkMade reports.
	for rev := limit.initial + 1; rev <= min(seen[0].rev, limit.initial+int64(len(limit.sent))); rev++ {
		if _, ok := m.made[rev]; ok || revoked[rev] {
			continue
		}
		by := shown(rev)
		for ; next < len(open) && open[next].at <= by.at; next++ {
			active = append(active, open[next])
		}
		active = slices.DeleteFunc(active, func(c *candidate) bool { return c.spent })
		reads := map[*observed]bool{} // that rule candidates out
		revokes := map[*answered]bool{}
		can := slices.DeleteFunc(slices.Clone(active), func(c *candidate) bool {
			if c.upTo < rev {
				revokes[c.ended] = true
				return true
			}
			return false
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
		if len(can) != 1 || m.expiry[rev] {
			continue
		}
		c := can[0]
		c.spent = true
		if ev, ok := eventOf(c.a, rev); ok {
			m.events = append(m.events, knownEvent{ev: ev, ops: c.a.ops(), since: rev,
				src: fmt.Sprintf("%s, the one write that can have made revision %d", c.a.src(), rev)})
		}
	}
	return m
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
			why += ", or a key that " + strings.Join(reads, " and ") + " showed left as it was there"
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
// (no lease's expiry), none of which writes key.
func (m revisionMakers) untouched(rev int64, key string) bool {
	writes := func(a answered) bool {
		return slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool { return touches(op, key) }) || a.Inv.F == etcdop.FLeaseRevoke
	}
	if a, ok := m.made[rev]; ok {
		return !writes(a)
	}
	can, ok := m.open[rev]
	return ok && !m.expiry[rev] && !slices.ContainsFunc(can, func(a *answered) bool { return writes(*a) })
}

// within says whether revision rev, which no acknowledged write made, was
// made by one of the writes of unknown outcome that can have, each of
// which can only have written keys of [key, end): then a watch of them
// that covered rev got an event at it. (No lease's expiry can have made it
// either: its keys are not known.)
func (m revisionMakers) within(rev int64, key, end string) bool {
	inside := func(a answered) bool {
		return a.Inv.F != etcdop.FLeaseRevoke && !slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool {
			switch op.F {
			case etcdop.FPut:
				return !inRange(key, end, op.Key)
			case etcdop.FDelete:
				return !rangeWithin(op.Key, op.End, key, end)
			}
			return false
		})
	}
	can, ok := m.open[rev]
	return ok && !m.expiry[rev] && len(can) > 0 && !slices.ContainsFunc(can, func(a *answered) bool { return !inside(*a) })
}

// eventOf is the event a put or a delete of one key made at rev, when it
// made rev.
func eventOf(a answered, rev int64) (etcdop.WatchEvent, bool) {
	if len(a.req.Then) != 1 || len(a.req.Else) > 0 || a.req.Then[0].End != "" {
		return etcdop.WatchEvent{}, false
	}
	op := a.req.Then[0]
	switch {
	case a.Inv.F == etcdop.FPut && op.F == etcdop.FPut:
		return etcdop.WatchEvent{Type: "put", KV: etcdop.KV{Key: op.Key, Value: op.Value, Mod: rev, Lease: op.Lease}}, true
	case a.Inv.F == etcdop.FDelete && op.F == etcdop.FDelete:
		return etcdop.WatchEvent{Type: "delete", KV: etcdop.KV{Key: op.Key, Mod: rev}}, true
	}
	return etcdop.WatchEvent{}, false
}
