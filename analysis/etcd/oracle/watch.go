package oracle

import (
	"fmt"

	"github.com/chaos-testing/chaos/ops/etcdop"
)

// alone judges what a watch's stream must be by itself (etcd.io, "API
// guarantees", Watch APIs): only events of the keys asked for (a watch
// is on a key or a range); none before the revision it asked to start
// from; ordered by revision; unique; atomic (the events of one revision
// in one response); bookmarkable (after a progress notification at r,
// no event at r or before: every one was already delivered); a previous
// key only when asked for; no event newer than the response that carries
// it (its header's revision is "the revision of the key-value store when
// the response is generated", etcd's API reference). "" if it is all kept.
func (w watch) alone() string {
	src := fmt.Sprintf("watch #%d", w.inv.Index)
	type at struct {
		rev int64
		key string
	}
	seen := map[at]bool{}
	inResponse := map[int64]int{} // revision -> the response its events came in
	var last, progress int64
	for i, r := range w.res.Responses {
		if r.Progress && len(r.Events) == 0 {
			progress = max(progress, r.Revision)
		}
		for _, e := range r.Events {
			rev := e.KV.Mod
			switch {
			case !InRange(w.req.Key, w.req.End, e.KV.Key):
				return fmt.Sprintf("watch-filtered: %s got an event of %s, which it did not ask for", src, e.KV.Key)
			case r.Revision > 0 && rev > r.Revision:
				return fmt.Sprintf("watch-header: %s got revision %d in a response at revision %d", src, rev, r.Revision)
			case rev < w.req.Rev:
				return fmt.Sprintf("watch-start: %s asked for revision %d on and got revision %d", src, w.req.Rev, rev)
			case rev < last:
				return fmt.Sprintf("watch-ordered: %s got revision %d after %d", src, rev, last)
			case seen[at{rev, e.KV.Key}]:
				return fmt.Sprintf("watch-unique: %s got the event of %s at %d twice", src, e.KV.Key, rev)
			case rev == last && inResponse[rev] != i:
				return fmt.Sprintf("watch-atomic: %s got revision %d in two responses", src, rev)
			case rev <= progress:
				return fmt.Sprintf("watch-bookmark: %s got revision %d after a progress notification at %d", src, rev, progress)
			case e.Prev != nil && !w.req.PrevKV:
				return fmt.Sprintf("watch-prev-unasked: %s got a previous key it did not ask for", src)
			}
			seen[at{rev, e.KV.Key}], inResponse[rev], last = true, i, rev
		}
	}
	return ""
}

// delivers judges a watch against the store's revisions: it gets exactly
// the events of its keys at every revision from the one it started from
// (the one it asked for, or, asking for none, its first event's: it
// started at the member's revision, which can be any before) up to the
// last it reports, by an event or a progress notification (reliable,
// resumable, bookmarkable); each event as the revision made it, with the
// key before it when asked (prev_kv), and none received before its
// revision was made, nor a progress notification before its revision was.
func (tl timeline) delivers(w watch) string {
	src := fmt.Sprintf("watch #%d", w.inv.Index)
	from, to := w.req.Rev, int64(0)
	got := map[int64]map[string]Event{}
	for _, r := range w.res.Responses {
		if r.Progress && len(r.Events) == 0 {
			to = max(to, r.Revision)
			if !tl.existed(r.Revision, r.Time) {
				return fmt.Sprintf("watch-progress-early: %s got a progress notification at revision %d before the revision was made", src, r.Revision)
			}
		}
		for _, e := range r.Events {
			rev := e.KV.Mod
			if from == 0 {
				from = rev
			}
			to = max(to, rev)
			if !tl.existed(rev, r.Time) {
				return fmt.Sprintf("watch-event-early: %s got an event at revision %d before the revision was made", src, rev)
			}
			if got[rev] == nil {
				got[rev] = map[string]Event{}
			}
			got[rev][e.KV.Key] = e
		}
	}
	if from == 0 {
		return ""
	}
	for rev := from; rev <= to; rev++ {
		after, ok := tl.at[rev]
		if !ok {
			return fmt.Sprintf("watch-unmade: %s reports revision %d, which was never made", src, rev)
		}
		var want []Event
		if before, ok := tl.at[rev-1]; ok {
			for _, e := range Events(before, after) {
				if InRange(w.req.Key, w.req.End, e.KV.Key) {
					if !w.req.PrevKV {
						e.Prev = nil
					}
					want = append(want, e)
				}
			}
		}
		if len(want) != len(got[rev]) {
			return fmt.Sprintf("watch-reliable: %s got %d events at revision %d, where its keys had %d", src, len(got[rev]), rev, len(want))
		}
		for _, e := range want {
			if g, ok := got[rev][e.KV.Key]; !ok || !sameEvent(g, e) {
				return fmt.Sprintf("watch-event: %s got %s at revision %d, where the store made %s", src, describe(g, ok), rev, describe(e, true))
			}
		}
	}
	return ""
}

func sameEvent(a, b Event) bool {
	return a.Type == b.Type && a.KV == b.KV && (a.Prev == nil) == (b.Prev == nil) && (a.Prev == nil || *a.Prev == *b.Prev)
}

// describe shows an event with its key's revisions and its previous key.
func describe(e Event, ok bool) string {
	if !ok {
		return "nothing"
	}
	kv := func(kv etcdop.KV) string {
		return fmt.Sprintf("%s=%s (create %d, mod %d, version %d, lease %d)", kv.Key, kv.Value, kv.Create, kv.Mod, kv.Version, kv.Lease)
	}
	s := e.Type + " " + kv(e.KV)
	if e.Type == "delete" {
		s = fmt.Sprintf("delete %s (mod %d)", e.KV.Key, e.KV.Mod)
	}
	if e.Prev != nil {
		s += ", previous key " + kv(*e.Prev)
	}
	return s
}
