package etcd

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// Revisions a watch covered without an event: each was made by a write
// that left the watch's keys alone, and no write makes two revisions. When
// the writes that can have made them, less those that write only keys the
// watch asks for, are too few to give each its own, the watch lost an
// event.

// maxUnseen bounds the revisions without an event that checkUnseenMakers
// matches with writes, in a long watch.
const maxUnseen = 64

// checkUnseenMakers finds the revisions a watch covered and got no event
// at, made by no acknowledged write, that too few writes leaving its keys
// alone can have made ("watch-lost-event"). It matches each revision with
// a write that can have made it (elimination's, bounded) and leaves the
// watch's keys alone, no write twice; revisions whose makers are not known
// are left out, which only makes a matching easier.
func checkUnseenMakers(w watchOp, m revisionMakers, found *analysis.FindingList) {
	from, to := w.window()
	if from == 0 {
		return
	}
	got := w.revisions()
	var unseen []int64
	var can [][]*answered // for each of unseen, the writes leaving the watch's keys alone that can have made it
	for rev := from; rev <= to && len(unseen) < maxUnseen; rev++ {
		open, ok := m.open[rev]
		if got[rev] || !ok || m.expiry[rev] {
			continue // seen, made by an acknowledged write, or by writes not known
		}
		unseen = append(unseen, rev)
		can = append(can, slices.DeleteFunc(slices.Clone(open), func(a *answered) bool { return inside(*a, w.req.Key, w.req.End, m.puts) }))
	}
	revs, writes, ok := match(can)
	if ok {
		return
	}
	var short, inWatch []string
	ops := w.proof()
	named := map[*answered]bool{}
	for _, i := range revs {
		short = append(short, fmt.Sprint(unseen[i]))
		for _, a := range m.open[unseen[i]] {
			if !named[a] && !slices.Contains(writes, a) {
				named[a] = true
				inWatch, ops = append(inWatch, a.src()), append(ops, a.ops()...)
			}
		}
	}
	var left []string
	for _, a := range writes {
		left, ops = append(left, a.src()), append(ops, a.ops()...)
	}
	them, revisions := "it", "revision"
	if len(revs) > 1 {
		them, revisions = "them", "revisions"
	}
	verb := "writes"
	if len(inWatch) > 1 {
		verb = "write"
	}
	why := fmt.Sprintf("of the writes that can have made %s, %s %s keys it watches", them, strings.Join(inWatch, " and "), verb)
	switch {
	case len(inWatch) == 0:
		why = fmt.Sprintf("only %s, one write a revision at the most, can have made %s", strings.Join(left, " and "), them)
	case len(left) == 0:
		why += fmt.Sprintf(", and no other can have made %s", them)
	default:
		why += fmt.Sprintf(", and only %s, one write a revision at the most, can have made %s otherwise", strings.Join(left, " and "), them)
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: "watch-lost-event", Explanation: fmt.Sprintf(
			"%s's watch (#%d) covered revisions %d to %d of %s but got no event at %s %s: %s.",
			history.ProcessName(w.Inv.Process), w.Inv.Index, from, to, describeRange(w.req.Key, w.req.End), revisions, strings.Join(short, ", "), why), Ops: ops}
	})
}

// inside says whether write a can only have written keys of [key, end):
// then, whichever revision it made, a watch of them that covered it got an
// event there. A revoke that made a revision deleted keys puts gave its
// lease (the store holds none when the history begins).
func inside(a answered, key, end string, puts firstPuts) bool {
	if a.Inv.F == etcdop.FLeaseRevoke {
		leased := puts.leased[a.req.Lease]
		return len(leased) > 0 && !slices.ContainsFunc(leased, func(k string) bool { return !inRange(key, end, k) })
	}
	return !slices.ContainsFunc(a.branch(), func(op etcdop.KVOp) bool {
		switch op.F {
		case etcdop.FPut:
			return !inRange(key, end, op.Key)
		case etcdop.FDelete:
			return !rangeWithin(op.Key, op.End, key, end)
		}
		return false
	})
}

// match gives each of a set of revisions its own write among those that
// can have made it (can, by revision), ok when it can. When it cannot, it
// says why, in Hall's terms: revs, some of the revisions, and writes, all
// that can have made any of them, fewer than revs.
func match(can [][]*answered) (revs []int, writes []*answered, ok bool) {
	owner := map[*answered]int{} // each matched write's revision
	var seen map[*answered]bool
	var augment func(i int) bool
	augment = func(i int) bool {
		for _, a := range can[i] {
			if seen[a] {
				continue
			}
			seen[a] = true
			if j, taken := owner[a]; !taken || augment(j) {
				owner[a] = i
				return true
			}
		}
		return false
	}
	for i := range can {
		seen = map[*answered]bool{}
		if augment(i) {
			continue
		}
		// The revisions reached from i along alternating paths, and the
		// writes on them, each matched to one of those revisions but i.
		reached := []int{i}
		for _, a := range slices.SortedFunc(maps.Keys(seen), func(a, b *answered) int { return cmp.Compare(a.Inv.Index, b.Inv.Index) }) {
			writes = append(writes, a)
			reached = append(reached, owner[a])
		}
		slices.Sort(reached)
		return slices.Compact(reached), writes, false
	}
	return nil, nil, true
}
