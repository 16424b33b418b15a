package etcd

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// storeKnown is what a history shows of the store, key by key: the events
// that answers and watches tell of, and the spans of revisions through
// which a key is known to have existed (a key read or watched with create
// revision c at mod revision m existed from c to m: its version counts the
// puts since its creation, with no delete between; a key deleted at d
// existed at d-1, from its previous key's create revision when known, and
// through the revisions before that elimination shows left it alone).
type storeKnown struct {
	events map[string][]knownEvent // by key, in revision order
	// lives, by key and the revision a life of it began at, at the latest
	// (its create revision), is the latest revision it is known to have
	// lived to, with the event that shows it.
	lives map[string]map[int64]life
	// makers says which revisions left a key as it was.
	makers revisionMakers
	// written are the events answers and elimination tell of.
	written []knownEvent
}

func knowStore(answers []answered, watches []watchOp, limit *revisionLimit) storeKnown {
	s := storeKnown{events: map[string][]knownEvent{}, lives: map[string]map[int64]life{}}
	add := func(e knownEvent) {
		key, kv := e.ev.KV.Key, e.ev.KV
		s.events[key] = append(s.events[key], e)
		// A write's answer gives no create revision: the key lived at
		// its revision, at least; a delete's, at the one before.
		born, upTo := cmp.Or(kv.Create, kv.Mod), kv.Mod
		if e.ev.Type != "put" {
			upTo = kv.Mod - 1
			born = upTo
			if e.ev.Prev != nil && e.ev.Prev.Create > 0 {
				born = e.ev.Prev.Create
			}
			// And before, through each revision known to have left it
			// as it was.
			for n := 0; n < stillSpan && born > 1 && s.makers.untouched(born, key); n++ {
				born--
			}
		}
		if s.lives[key] == nil {
			s.lives[key] = map[int64]life{}
		}
		if l, ok := s.lives[key][born]; !ok || upTo > l.upTo {
			s.lives[key][born] = life{upTo: upTo, by: e}
		}
	}
	s.makers = eliminate(answers, watches, limit)
	s.written = writtenEvents(answers, s.makers)
	for _, e := range s.written {
		add(e)
	}
	for _, w := range watches {
		src := w.src()
		for _, r := range w.res.Responses {
			for _, e := range r.Events {
				add(knownEvent{ev: e, ops: w.proof(), src: src, since: e.KV.Mod})
			}
		}
	}
	for _, es := range s.events {
		slices.SortStableFunc(es, func(a, b knownEvent) int { return cmp.Compare(a.ev.KV.Mod, b.ev.KV.Mod) })
	}
	return s
}

// judge finds what a read answered at revision rev cannot be from the
// store at rev: a key from a later revision ("read-from-future"), a key
// older than an event of it at or before rev ("stale-at-revision"), or a
// key left out that is known to have existed at rev
// ("missing-at-revision").
func (s storeKnown) judge(a servedAnswer, op etcdop.KVOp, found *analysis.FindingList) {
	rev := a.resp.Revision
	read := fmt.Sprintf("%s's %s (#%d, member %s) at revision %d", history.ProcessName(a.Inv.Process), a.Inv.F, a.Done.Index,
		analysis.CmpOr(a.resp.Member, "unknown"), rev)
	report := func(kind, what string, by *knownEvent) {
		ops := []history.Op{*a.Inv, *a.Done}
		if by != nil {
			ops = append(ops, by.ops...)
		}
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: kind, Explanation: read + " " + what, Ops: ops}
		})
	}
	returned := map[string]bool{}
	for _, kv := range a.resp.Results[0].KVs {
		returned[kv.Key] = true
		if kv.Mod > rev {
			report("read-from-future", fmt.Sprintf("returned %s=%s as of revision %d, after the store's.", kv.Key, kv.Value, kv.Mod), nil)
			continue
		}
		if why := kvFlaw(kv); why != "" {
			report("impossible-key", fmt.Sprintf("returned a key no store holds: %s.", why), nil)
			continue
		}
		es := s.events[kv.Key]
		put := etcdop.WatchEvent{Type: "put", KV: kv}
		for i, _ := slices.BinarySearchFunc(es, kv.Mod, func(e knownEvent, r int64) int { return cmp.Compare(e.ev.KV.Mod, r) }); i < len(es) && es[i].ev.KV.Mod == kv.Mod; i++ {
			if !sameEvent(es[i].ev, put) {
				report("divergent-reads", fmt.Sprintf("returned %s=%s as of revision %d (create %d, version %d), but %s tells of %s there.",
					kv.Key, kv.Value, kv.Mod, kv.Create, kv.Version, es[i].src, describeEvent(es[i].ev)), &es[i])
				break
			}
		}
		i, _ := slices.BinarySearchFunc(es, kv.Mod+1, func(e knownEvent, r int64) int { return cmp.Compare(e.ev.KV.Mod, r) })
		if i < len(es) && es[i].ev.KV.Mod <= rev {
			report("stale-at-revision", fmt.Sprintf("returned %s=%s as of revision %d, but %s tells of %s at revision %d: the store at %d had it.",
				kv.Key, kv.Value, kv.Mod, es[i].src, describeEvent(es[i].ev), es[i].ev.KV.Mod, rev), &es[i])
		}
	}
	for key, lives := range s.lives {
		if returned[key] || !inRange(op.Key, op.End, key) {
			continue
		}
		lived := false
		for born, l := range lives {
			if born > rev || rev > l.upTo {
				continue
			}
			report("missing-at-revision", fmt.Sprintf("left out %s, which %s shows existed from revision %d to %d.",
				key, l.by.src, born, l.upTo), &l.by)
			lived = true
			break
		}
		if l, ok := s.stillThere(key, rev); ok && !lived {
			report("missing-at-revision", fmt.Sprintf("left out %s, which %s put at revision %d, and which no revision from then to %d can have deleted.",
				key, l.src, l.ev.KV.Mod, rev), &l)
		}
	}
}

// life is a span of revisions a key is known to have lived through, up to
// a revision, and the event that shows it.
type life struct {
	upTo int64
	by   knownEvent
}

// stillThere finds the put known of key before rev that left it in the
// store at rev (standing).
func (s storeKnown) stillThere(key string, rev int64) (knownEvent, bool) {
	put, ok := standing(s.events[key], key, rev, s.makers)
	return put, ok && put.ev.KV.Mod != rev
}

// standing finds, in es (the events known of key, in revision order), the
// put that left key in the store at rev: the last event at or before rev,
// when it is a put and every revision since is known to have left the key
// as it was (looked for up to stillSpan revisions back).
func standing(es []knownEvent, key string, rev int64, m revisionMakers) (knownEvent, bool) {
	i, _ := slices.BinarySearchFunc(es, rev+1, func(e knownEvent, r int64) int { return cmp.Compare(e.ev.KV.Mod, r) })
	if i == 0 || es[i-1].ev.Type != "put" || rev-es[i-1].ev.KV.Mod > stillSpan {
		return knownEvent{}, false
	}
	for r := es[i-1].ev.KV.Mod + 1; r <= rev; r++ {
		if !m.untouched(r, key) {
			return knownEvent{}, false
		}
	}
	return es[i-1], true
}

// stillSpan bounds the revisions standing goes through for each key.
const stillSpan = 256

// agreeing compares the answers of reads at one revision, over the keys
// their ranges share: the store at a revision is one and the same on
// every member, whatever range a read asks for.
type agreeing map[int64][]rangeAnswer

// rangeAnswer is the first answer of a range at a revision.
type rangeAnswer struct {
	op etcdop.KVOp
	servedAnswer
}

// add compares a with the first answer of each range at its revision, and
// keeps it when it is the first of its range.
func (g agreeing) add(a rangeAnswer, found *analysis.FindingList) {
	rev := a.resp.Revision
	first := true
	for _, b := range g[rev] {
		first = first && (b.op.Key != a.op.Key || b.op.End != a.op.End)
		outside := func(kv etcdop.KV) bool { // of one range or the other
			return !inRange(a.op.Key, a.op.End, kv.Key) || !inRange(b.op.Key, b.op.End, kv.Key)
		}
		if !slices.Equal(slices.DeleteFunc(slices.Clone(a.resp.Results[0].KVs), outside), slices.DeleteFunc(slices.Clone(b.resp.Results[0].KVs), outside)) {
			found.Add(func() analysis.Finding { return divergent(b.servedAnswer, a.servedAnswer) })
			return
		}
	}
	if first {
		g[rev] = append(g[rev], a)
	}
}
