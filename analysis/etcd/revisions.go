package etcd

import (
	"cmp"
	"encoding/json"
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

// etcdInitial is the etcd checkers' Input.Initial: the store's revision
// when the history began (1, an empty store, unless given).
type etcdInitial struct {
	Revision int64 `json:"revision"`
}

func initialRevision(in analysis.Input) (int64, error) {
	init := etcdInitial{Revision: 1}
	if len(in.Initial) > 0 && string(in.Initial) != "null" {
		if err := json.Unmarshal(in.Initial, &init); err != nil {
			return 0, fmt.Errorf(`initial value %s: the etcd checkers start from {"revision": N}: %w`, in.Initial, err)
		}
	}
	return init.Revision, nil
}

// revisionLimit is, for a time, the highest revision the writes of a
// history can have made by then: each put, delete, transaction and lease
// revoke that did not fail, invoked before that time, makes one at the
// most, as does each lease's expiry, once its TTL has passed since its
// grant was sent; and no revision at or past one an acknowledged write
// made was there before that write was sent.
type revisionLimit struct {
	initial int64
	sent    []time.Duration // when each write can first have made its revision, in order
	// makers are the acknowledged writes that made a revision, by when
	// they were sent, each with the lowest revision made by it or by one
	// sent after it.
	makers []limitMaker
}

type limitMaker struct {
	a      answered
	lowest answered // the one of makers[i:] that made the lowest revision
}

// revisionBound is the revision limit of a history, or nil when it holds
// operations the etcd checkers do not know, which may write too.
func revisionBound(h []history.Op, answers []answered, initial int64) *revisionLimit {
	l := &revisionLimit{initial: initial}
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.Process >= 0 }) {
		if p.Done != nil && p.Done.Type == history.Fail {
			continue
		}
		switch p.Inv.F {
		case etcdop.FPut, etcdop.FDelete, etcdop.FKVTxn, etcdop.FLeaseRevoke:
			l.sent = append(l.sent, p.Inv.Time)
		case etcdop.FLeaseGrant:
			l.sent = append(l.sent, p.Inv.Time+grantTTL(p))
		case etcdop.FRange, etcdop.FRangeSerializable, etcdop.FWatch, etcdop.FLeaseKeepAlive:
		default:
			return nil
		}
	}
	slices.Sort(l.sent)
	for _, a := range answers {
		if a.resp != nil && madeRevision(a.Inv.F, &a.req, a.resp) {
			l.makers = append(l.makers, limitMaker{a: a})
		}
	}
	slices.SortStableFunc(l.makers, func(a, b limitMaker) int { return cmp.Compare(a.a.Inv.Time, b.a.Inv.Time) })
	for i := len(l.makers) - 1; i >= 0; i-- {
		l.makers[i].lowest = l.makers[i].a
		if i+1 < len(l.makers) && l.makers[i+1].lowest.resp.Revision < l.makers[i].a.resp.Revision {
			l.makers[i].lowest = l.makers[i+1].lowest
		}
	}
	return l
}

// most is the highest revision there can have been at t, why not
// higher, and the operations that show it; no limit when l is nil.
func (l *revisionLimit) most(t time.Duration) (int64, string, []history.Op) {
	if l == nil {
		return math.MaxInt64, "", nil
	}
	n, _ := slices.BinarySearch(l.sent, t+1) // at t or before
	most := l.initial + int64(n)
	why := fmt.Sprintf("the writes sent by then can have made no revision past %d", most)
	var ops []history.Op
	i, _ := slices.BinarySearchFunc(l.makers, t+1, func(m limitMaker, t time.Duration) int { return cmp.Compare(m.a.Inv.Time, t) })
	if i < len(l.makers) {
		if w := l.makers[i].lowest; w.resp.Revision-1 < most {
			most = w.resp.Revision - 1
			why = fmt.Sprintf("%s made revision %d and was sent only at %.3fs", w.src(), w.resp.Revision, w.Inv.Time.Seconds())
			ops = w.ops()
		}
	}
	return most, why, ops
}

// grantTTL is the shortest a grant's lease can live: the TTL it asked
// for, or that its answer gave (etcd may lengthen it, never shorten it).
func grantTTL(p history.Pair) time.Duration {
	var req etcdop.KVRequest
	var resp etcdop.KVResponse
	_ = p.Inv.Decode(&req) // etcd-lease reports what it cannot read
	if p.Done != nil && p.Done.Type == history.Ok {
		_ = p.Done.Decode(&resp)
	}
	return time.Duration(max(req.TTL, resp.TTL)) * time.Second
}

// checkMade reports an answer that came at a time naming a revision past
// the bound by then ("revision-never-made").
func checkMade(limit *revisionLimit, rev int64, at time.Duration, what string, ops []history.Op, found *analysis.FindingList) {
	var why string
	switch most, because, shown := limit.most(at); {
	case rev < 1:
		why = "which no store has: etcd's begins at revision 1"
	case rev > most:
		why = "but " + because
		ops = slices.Concat(ops, shown)
	default:
		return
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: "revision-never-made", Explanation: fmt.Sprintf("%s names revision %d at %.3fs, %s.", what, rev, at.Seconds(), why), Ops: ops}
	})
}

// observed is a revision that a member had made by a time: a watch
// response's or a serializable read's, with who told of it.
type observed struct {
	at  time.Duration
	rev int64
	src string
	ops []history.Op
}

// checkFloors finds linearizable answers older than a revision observed
// before they were asked ("revision-went-back"): a member serves only
// revisions the cluster committed, and a linearizable request sees every
// committed one.
func checkFloors(answers []answered, seen []observed, found *analysis.FindingList) {
	slices.SortStableFunc(seen, func(a, b observed) int { return cmp.Compare(a.at, b.at) })
	var asked []answered
	for _, a := range answers {
		if a.resp != nil && a.Inv.F != etcdop.FRangeSerializable {
			asked = append(asked, a)
		}
	}
	slices.SortStableFunc(asked, func(a, b answered) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
	var floor *observed
	next := 0
	for _, a := range asked {
		for ; next < len(seen) && seen[next].at < a.Inv.Time; next++ {
			if floor == nil || seen[next].rev > floor.rev {
				floor = &seen[next]
			}
		}
		if floor == nil || a.resp.Revision >= floor.rev {
			continue
		}
		f := floor
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "revision-went-back", Explanation: fmt.Sprintf(
				"%s answered revision %d, although %s had shown revision %d at %.3fs, before it was invoked at %.3fs.",
				a.src(), a.resp.Revision, f.src, f.rev, f.at.Seconds(), a.Inv.Time.Seconds()), Ops: slices.Concat(f.ops, a.ops())}
		})
	}
}

// watchesSeen are the revisions the watches' responses showed, each when
// it came: its header's, or its last event's.
func watchesSeen(watches []watchOp) []observed {
	var out []observed
	for _, w := range watches {
		for _, r := range w.res.Responses {
			if rev := responseRevision(r); rev > 0 {
				out = append(out, observed{at: r.Time, rev: rev, ops: w.proof(),
					src: fmt.Sprintf("%s's watch (#%d)", history.ProcessName(w.Inv.Process), w.Inv.Index)})
			}
		}
	}
	return out
}

// responseRevision is the revision a watch response shows the member had:
// its header's, or its last event's.
func responseRevision(r etcdop.WatchResponse) int64 {
	rev := r.Revision
	for _, e := range r.Events {
		rev = max(rev, e.KV.Mod)
	}
	return rev
}

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
