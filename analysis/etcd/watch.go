package etcd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

func init() { analysis.Register(WatchChecker{}) }

// WatchChecker checks etcd's documented watch guarantees (etcd.io, "Watch
// API guarantees") on every watch of a history, against each other and
// against the writes whose answers name their revision:
//
//   - ordered: a watch's events come in revision order ("watch-order");
//   - unique: no event twice ("watch-duplicate");
//   - atomic: the events of one revision come in one response
//     ("watch-split-revision");
//   - bookmarkable: after a progress notification at revision r, no event
//     at r or before ("watch-after-progress");
//   - resumable and reliable: a watch from revision r gets every event of
//     its keys from r to the last revision it got to, none missing
//     ("watch-lost-event"); events are known from every watch and from
//     the answers of writes;
//   - filtered: only events of the keys asked ("watch-unrequested-key");
//   - the events are the writes: no two sources disagree on the event of
//     a key at a revision ("watch-divergent-event");
//   - prev_kv and IsCreate: within a watch, an event's previous key, when
//     given, is the one its previous event left, and a put creates the key
//     exactly when the key did not exist ("watch-wrong-prev").
type WatchChecker struct{}

func (WatchChecker) Name() string { return "etcd-watch" }

// watchOp is a watch and what it got.
type watchOp struct {
	history.Pair
	req etcdop.WatchRequest
	res etcdop.WatchResult
	// shown is what findings name of it (proof).
	shown []history.Op
}

// eventAt names the event of a key at a revision.
type eventAt struct {
	rev int64
	key string
}

// knownEvent is an event and where it is known from.
type knownEvent struct {
	ev  etcdop.WatchEvent
	ops []history.Op // the watch or the write that tells of it
	src string
	// since is the first revision a watch must cover to be bound to have
	// got the event: the event's own, or, for a revoke's delete known from
	// the put that leased the key, that put's.
	since int64
}

func (WatchChecker) Check(_ context.Context, in analysis.Input) analysis.Result {
	watches, bad := readWatches(in.History)
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d watches could not be read; first: %v", bad.N, bad.First))
	}
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"watches": len(watches)}}
	if len(watches) == 0 {
		res.Notes = append(res.Notes, "no watch got an answer: nothing to check")
		return res
	}
	initial, err := initialRevision(in)
	if err != nil {
		return analysis.UnknownResult(err.Error())
	}
	answers := readAnswered(in.History) // read once: every check below goes through them
	limit := revisionBound(in.History, answers, initial)
	var found analysis.FindingList
	known := map[eventAt]knownEvent{}
	learn := func(e knownEvent) {
		at := eventAt{e.ev.KV.Mod, e.ev.KV.Key}
		first, ok := known[at]
		switch {
		case !ok:
			known[at] = e
		case !sameEvent(first.ev, e.ev):
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "watch-divergent-event", Explanation: fmt.Sprintf(
					"at revision %d, %s tells of %s, and %s of %s.", at.rev, first.src, describeEvent(first.ev), e.src, describeEvent(e.ev)),
					Ops: slices.Concat(first.ops, e.ops)}
			})
		}
	}
	events := 0
	compacted := compactedFrom(in, watches)
	for _, w := range watches {
		src := w.src()
		checkStream(w, src, compacted, &found)
		for _, r := range w.res.Responses {
			rev := responseRevision(r)
			if rev == 0 {
				continue // no header: a cancel with an error, say
			}
			before := found.Total
			checkMade(limit, rev, r.Time, src+"'s response", w.proof(), &found)
			if found.Total > before {
				break // one is proof enough
			}
		}
		for _, r := range w.res.Responses {
			for _, e := range r.Events {
				events++
				learn(knownEvent{ev: e, ops: w.proof(), src: src, since: e.KV.Mod})
				if p := e.Prev; p != nil && p.Mod > 0 && p.Mod < e.KV.Mod {
					// The previous key is the put that made it.
					learn(knownEvent{ev: etcdop.WatchEvent{Type: "put", KV: *p}, ops: w.proof(), src: src + ", as a previous key", since: p.Mod})
				}
			}
		}
	}
	makers := eliminate(answers, watches, limit)
	makers.reportNobody(etcdop.FWatch, &found)
	written := writtenEvents(answers, makers)
	for _, e := range written {
		learn(e)
	}
	for _, e := range revokedKeys(answers, known) {
		if _, ok := known[eventAt{e.ev.KV.Mod, e.ev.KV.Key}]; !ok {
			known[eventAt{e.ev.KV.Mod, e.ev.KV.Key}] = e
		}
	}
	writes := indexWrites(in.History, answers, initial, makers, written)
	for _, w := range watches {
		checkReliable(w, known, &found)
		writes.checkOrigins(w, &found)
		writes.checkRangeDeletes(w, &found)
		checkUnseenMakers(w, makers, &found)
	}
	res.Stats["events"] = events
	res.Stats["revisions_known"] = len(known)
	found.Put(&res)
	if found.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	return res
}

func readWatches(h []history.Op) ([]watchOp, analysis.ErrCount) {
	var bad analysis.ErrCount
	var out []watchOp
	for _, p := range history.Pairs(h, func(op *history.Op) bool { return op.F == etcdop.FWatch }) {
		if p.Done == nil || len(p.Done.Value) == 0 || p.Done.Type == history.Fail {
			continue
		}
		w := watchOp{Pair: p}
		if err := errors.Join(p.Inv.Decode(&w.req), p.Done.Decode(&w.res)); err != nil {
			bad.Add(err)
			continue
		}
		w.shown = []history.Op{*w.Inv, w.slim()}
		out = append(out, w)
	}
	return out, bad
}

// maxProofValue bounds the value of a watch's completion that a finding
// repeats: a watch open for a whole run answers with every event it got,
// megabytes, and a broken stream can give a finding per event.
const maxProofValue = 16 << 10

// proof is the watch's invocation and completion as a finding names them:
// a completion too long to repeat keeps its place in the history (its
// index and time) and says how much it holds, not the responses.
func (w watchOp) proof() []history.Op { return w.shown }

// src is how findings name the watch.
func (w watchOp) src() string {
	return fmt.Sprintf("%s's watch (#%d)", history.ProcessName(w.Inv.Process), w.Inv.Index)
}

// slim is the watch's completion as findings name it (see proof).
func (w watchOp) slim() history.Op {
	done := *w.Done
	if len(done.Value) > maxProofValue {
		events := 0
		for _, r := range w.res.Responses {
			events += len(r.Events)
		}
		done.Value = history.MustValue(map[string]any{"member": w.res.Member, "responses": len(w.res.Responses), "events": events,
			"left_out": fmt.Sprintf("the responses are at entry #%d of the history", done.Index)})
	}
	return done
}

// checkStream checks one watch's own stream: filtered, ordered, unique,
// atomic, bookmarkable, from its start revision, prev_kv and IsCreate.
func checkStream(w watchOp, src string, compacted time.Duration, found *analysis.FindingList) {
	ops := w.proof()
	report := func(kind, format string, args ...any) {
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: kind, Explanation: src + " " + fmt.Sprintf(format, args...), Ops: ops}
		})
	}
	var last etcdop.WatchEvent
	lastResp := -1
	progress := int64(0)
	seen := map[eventAt]bool{}
	prev := map[string]etcdop.WatchEvent{} // key -> its last event in this watch
	for i, r := range w.res.Responses {
		if r.Progress && len(r.Events) == 0 {
			progress = max(progress, r.Revision)
		}
		for _, e := range r.Events {
			at := eventAt{e.KV.Mod, e.KV.Key}
			switch {
			case !inRange(w.req.Key, w.req.End, e.KV.Key):
				report("watch-unrequested-key", "got an event of %s, which it did not ask for.", e.KV.Key)
			case r.Revision > 0 && at.rev > r.Revision:
				report("watch-order", "got revision %d (%s) in a response at revision %d: an event after the store it came from.", at.rev, describeEvent(e), r.Revision)
			case w.req.Rev > 0 && at.rev < w.req.Rev:
				report("watch-order", "asked for events from revision %d and got one at revision %d (%s).", w.req.Rev, at.rev, describeEvent(e))
			case seen[at]:
				report("watch-duplicate", "got the event of %s at revision %d twice.", at.key, at.rev)
			case lastResp >= 0 && at.rev < last.KV.Mod:
				report("watch-order", "got revision %d (%s) after revision %d (%s): a watch went back in time.", at.rev, describeEvent(e), last.KV.Mod, describeEvent(last))
			case lastResp >= 0 && at.rev == last.KV.Mod && lastResp != i:
				report("watch-split-revision", "got the events of revision %d in two responses.", at.rev)
			case at.rev <= progress:
				report("watch-after-progress", "got an event at revision %d after a progress notification at revision %d.", at.rev, progress)
			}
			seen[at] = true
			if e.Prev != nil && !w.req.PrevKV {
				report("watch-wrong-prev", "got %s at revision %d with a previous key, which it did not ask for.", describeEvent(e), at.rev)
			}
			if e.Prev == nil && w.req.PrevKV && (e.Type == "delete" || e.KV.Create < e.KV.Mod) && r.Time < compacted {
				report("watch-wrong-prev", "got %s at revision %d without the previous key it asked for, though the key existed at revision %d and no compaction can have removed that revision by %.3fs.",
					describeEvent(e), at.rev, at.rev-1, r.Time.Seconds())
			}
			if why := eventFlaw(e); why != "" {
				report("watch-wrong-prev", "got %s at revision %d: %s.", describeEvent(e), at.rev, why)
			}
			if p, ok := prev[e.KV.Key]; ok {
				if why := wrongPrev(w.req.PrevKV, p, e); why != "" {
					report("watch-wrong-prev", "got %s after %s: %s.", describeEvent(e), describeEvent(p), why)
				}
			}
			prev[e.KV.Key] = e
			last, lastResp = e, i
		}
	}
}

// wrongPrev says what is wrong with event e of a key whose previous event
// in the same watch was p (nothing happened to the key in between, if the
// watch is reliable), or "".
func wrongPrev(prevKV bool, p, e etcdop.WatchEvent) string {
	if e.Type == "put" {
		create := p.Type == "delete"
		if create != (e.KV.Create == e.KV.Mod) {
			return fmt.Sprintf("IsCreate is %t, but the key %s", e.KV.Create == e.KV.Mod, map[bool]string{true: "did not exist", false: "existed"}[create])
		}
		if !create && (e.KV.Create != p.KV.Create || e.KV.Version != p.KV.Version+1) {
			return fmt.Sprintf("create revision %d and version %d, where the key had %d and %d", e.KV.Create, e.KV.Version, p.KV.Create, p.KV.Version)
		}
	}
	if !prevKV {
		return ""
	}
	// No previous key where there was one is checkStream's to judge: a
	// compaction may have removed it.
	switch {
	case p.Type == "delete" && e.Prev != nil:
		return "a previous key, where the key did not exist"
	case p.Type == "put" && e.Prev != nil && *e.Prev != p.KV:
		return "a previous key other than the one the last event left"
	}
	return ""
}

// kvFlaw says what makes a key as etcd returns it impossible, or "": its
// version counts the puts since its creation, so a key of version 1 was
// created at its mod revision, and a later version was not.
func kvFlaw(kv etcdop.KV) string {
	switch {
	case kv.Create > kv.Mod || kv.Version < 1:
		return fmt.Sprintf("%s has create revision %d, mod revision %d and version %d", kv.Key, kv.Create, kv.Mod, kv.Version)
	case (kv.Version == 1) != (kv.Create == kv.Mod):
		return fmt.Sprintf("%s has version %d, yet create revision %d and mod revision %d", kv.Key, kv.Version, kv.Create, kv.Mod)
	case kv.Create < 2:
		return fmt.Sprintf("%s has create revision %d, though etcd's store begins empty at revision 1", kv.Key, kv.Create)
	}
	return ""
}

// eventFlaw says what makes an event impossible on its own, or "": its
// key's, its previous key's, and a previous key for a put that created
// the key, or one no older than the event.
func eventFlaw(e etcdop.WatchEvent) string {
	if e.Type == "put" {
		if why := kvFlaw(e.KV); why != "" {
			return why
		}
	}
	if e.Prev == nil {
		return ""
	}
	switch why := kvFlaw(*e.Prev); {
	case why != "":
		return "the previous key: " + why
	case e.Prev.Mod >= e.KV.Mod:
		return fmt.Sprintf("a previous key of revision %d", e.Prev.Mod)
	case e.Type == "put" && e.KV.Create == e.KV.Mod:
		return "a previous key, where the put created the key"
	case e.Type == "put" && (e.KV.Create != e.Prev.Create || e.KV.Version != e.Prev.Version+1):
		return fmt.Sprintf("create revision %d and version %d, where the previous key had %d and %d", e.KV.Create, e.KV.Version, e.Prev.Create, e.Prev.Version)
	}
	return ""
}

// revisions are the revisions the watch got events at.
func (w watchOp) revisions() map[int64]bool {
	got := map[int64]bool{}
	for _, r := range w.res.Responses {
		for _, e := range r.Events {
			got[e.KV.Mod] = true
		}
	}
	return got
}

// window is the revisions a watch vouches for: from the revision it
// started from (or its first event) to the last it got to, by an event or
// a progress notification. from is 0 when it vouches for none.
func (w watchOp) window() (from, to int64) {
	from = w.req.Rev
	for _, r := range w.res.Responses {
		if r.Progress && len(r.Events) == 0 {
			to = max(to, r.Revision)
		}
		for _, e := range r.Events {
			to = max(to, e.KV.Mod)
			if from == 0 {
				from = e.KV.Mod
			}
		}
	}
	if to < from {
		return 0, 0
	}
	return from, to
}

// checkReliable finds the events a watch should have got and did not:
// every event known of its keys between the revision it started from (or
// its first event) and the last revision it got to.
func checkReliable(w watchOp, known map[eventAt]knownEvent, found *analysis.FindingList) {
	from, to := w.window()
	if from == 0 || to < from {
		return
	}
	got := map[eventAt]bool{}
	for _, r := range w.res.Responses {
		for _, e := range r.Events {
			got[eventAt{e.KV.Mod, e.KV.Key}] = true
		}
	}
	var missed []eventAt
	for at := range known {
		if at.rev >= from && at.rev <= to && known[at].since >= from && inRange(w.req.Key, w.req.End, at.key) && !got[at] {
			missed = append(missed, at)
		}
	}
	slices.SortFunc(missed, func(a, b eventAt) int { return cmp.Or(cmp.Compare(a.rev, b.rev), cmp.Compare(a.key, b.key)) })
	for _, at := range missed {
		k := known[at]
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "watch-lost-event", Explanation: fmt.Sprintf(
				"%s's watch (#%d) covered revisions %d to %d of %s but never got %s at revision %d, which %s tells of.",
				history.ProcessName(w.Inv.Process), w.Inv.Index, from, to, describeRange(w.req.Key, w.req.End), describeEvent(k.ev), at.rev, k.src),
				Ops: slices.Concat(w.proof(), k.ops)}
		})
	}
}

// sameEvent compares what both sources know: a write's answer gives no
// create revision or version.
func sameEvent(a, b etcdop.WatchEvent) bool {
	if a.Type != b.Type || a.KV.Key != b.KV.Key || a.KV.Mod != b.KV.Mod {
		return false
	}
	if a.Type == "delete" {
		return samePrev(a.Prev, b.Prev)
	}
	same := a.KV.Value == b.KV.Value && a.KV.Lease == b.KV.Lease
	if a.KV.Create != 0 && b.KV.Create != 0 {
		same = same && a.KV.Create == b.KV.Create && a.KV.Version == b.KV.Version
	}
	return same && samePrev(a.Prev, b.Prev)
}

// samePrev compares two previous keys of one event, where both watches
// asked for them and etcd could still read them.
func samePrev(a, b *etcdop.KV) bool {
	return a == nil || b == nil || *a == *b
}

// inRange says whether k is in the range that key and end name: key
// alone when end is "", else [key, end).
func inRange(key, end, k string) bool {
	if end == "" {
		return k == key
	}
	return k >= key && (k < end || end == "\x00") // "\x00": no end, as etcd takes it
}

func describeRange(key, end string) string {
	if end == "" {
		return key
	}
	return key + ".." + end
}

func describeEvent(e etcdop.WatchEvent) string {
	if e.Type == "delete" {
		return "delete " + e.KV.Key
	}
	return fmt.Sprintf("put %s=%s", e.KV.Key, e.KV.Value)
}
