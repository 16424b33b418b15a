// The lock checker's "stale-write" findings: the resource accepting a write
// made under an acquisition older than one whose holder had already written,
// judged from the resource's log or, without one, from the history.

package lock

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// writer is an accepted write and the acquisition it relied on.
type writer struct {
	ok      bool
	proc    int
	acq     int           // position of the acquire ok
	acqTime time.Duration // its time
	w       int           // index into writes, -1 if not in the history
	value   string
	line    int // resource log line, 0 if none
}

// writer is the write w (-1 if not in the history) of value by proc, made
// under the acquisition at position acq.
func (lh *lockHistory) writer(proc, acq, w int, value string) writer {
	return writer{ok: true, proc: proc, acq: acq, acqTime: lh.ops[acq].Time, w: w, value: value}
}

// newest tracks the accepted write made under the newest acquisition and,
// separately, the newest from any other process than that one, so that
// "is there a newer acquisition from another process?" is O(1).
type newest struct{ best, other writer }

func (n *newest) add(c writer) {
	switch {
	case !n.best.ok || c.acqTime > n.best.acqTime:
		if n.best.ok && n.best.proc != c.proc {
			n.other = n.best
		}
		n.best = c
	case c.proc != n.best.proc && (!n.other.ok || c.acqTime > n.other.acqTime):
		n.other = c
	}
}

// newerThan returns the newest writer from a process other than proc whose
// acquisition is newer than t.
func (n *newest) newerThan(proc int, t time.Duration) (writer, bool) {
	c := n.best
	if c.proc == proc {
		c = n.other
	}
	return c, c.ok && c.acqTime > t
}

// staleFromResource walks the resource log in its own (decision) order.
func (lh *lockHistory) staleFromResource(log []history.ResourceEntry) (stale analysis.FindingList, rejected, unmatched int) {
	var n newest
	for i, e := range log {
		if !e.Accepted {
			rejected++ // fencing doing its job: not a finding
			continue
		}
		acq, ok := lh.acquires[sessionKey{e.Client, e.Session}]
		if !ok {
			unmatched++
			continue
		}
		w, ok := lh.byValue[writeKey{e.Client, e.Value}]
		if !ok {
			w = -1
		}
		c := lh.writer(e.Client, acq, w, e.Value)
		c.line = cmp.Or(e.Line, i+1)
		lh.judgeStale(&n, c, &stale)
		n.add(c)
	}
	return stale, rejected, unmatched
}

// staleFromHistory judges without a resource log: a write W that succeeded is
// stale if a write of another process, under a newer acquisition, had
// already succeeded before W was invoked — the resource certainly took that
// one first. Events are sorted by time since the file is only roughly ordered.
func (lh *lockHistory) staleFromHistory() (stale analysis.FindingList) {
	type event struct {
		t    time.Duration
		done bool
		w    int
	}
	var evs []event
	for i, w := range lh.writes {
		if w.acq >= 0 && w.done >= 0 && lh.ops[w.done].Type() == history.Ok {
			evs = append(evs, event{lh.ops[w.inv].Time, false, i}, event{lh.ops[w.done].Time, true, i})
		}
	}
	// At equal times an invocation comes first: "before" means strictly before.
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(analysis.BoolInt(a.done), analysis.BoolInt(b.done))
	})
	var n newest
	for _, ev := range evs {
		w := lh.writes[ev.w]
		c := lh.writer(w.proc, w.acq, ev.w, w.value)
		if ev.done {
			n.add(c)
			continue
		}
		lh.judgeStale(&n, c, &stale)
	}
	return stale
}

// judgeStale counts c as stale, with a finding, if n has an accepted write of
// another process made under a newer acquisition than c's.
func (lh *lockHistory) judgeStale(n *newest, c writer, stale *analysis.FindingList) {
	if newer, ok := n.newerThan(c.proc, c.acqTime); ok {
		stale.Add(func() analysis.Finding { return lh.staleFinding(c, newer) })
	}
}

func (lh *lockHistory) staleFinding(s, n writer) analysis.Finding {
	pos := []int{s.acq, n.acq}
	for _, c := range []writer{s, n} {
		if c.w >= 0 {
			pos = append(pos, lh.writes[c.w].inv)
			if d := lh.writes[c.w].done; d >= 0 {
				pos = append(pos, d)
			}
		}
	}
	f := analysis.Finding{Kind: lh.v.stale, Ops: lh.opsAt(pos)}
	sp, np := history.ProcessName(s.proc), history.ProcessName(n.proc)
	if s.line > 0 {
		f.ResourceLines = []int{min(s.line, n.line), max(s.line, n.line)}
		f.Explanation = fmt.Sprintf("%s's write %q%s, made under its %s at %s (#%d), was accepted by the resource (line %d) after %s, which %s at %s (#%d), had its write %q%s accepted (line %d).",
			sp, s.value, lh.writeRef(s.w), lh.v.gotten, analysis.Secs(s.acqTime), lh.ops[s.acq].Index, s.line,
			np, lh.v.gotLater, analysis.Secs(n.acqTime), lh.ops[n.acq].Index, n.value, lh.writeRef(n.w), n.line)
		return f
	}
	sw, nw := lh.writes[s.w], lh.writes[n.w]
	f.Explanation = fmt.Sprintf("%s's write %q (#%d, invoked at %s), made under its %s at %s (#%d), succeeded although %s, which %s at %s (#%d), had already written %q successfully at %s (#%d).",
		sp, s.value, lh.ops[sw.inv].Index, analysis.Secs(lh.ops[sw.inv].Time), lh.v.gotten, analysis.Secs(s.acqTime), lh.ops[s.acq].Index,
		np, lh.v.gotLater, analysis.Secs(n.acqTime), lh.ops[n.acq].Index, n.value, analysis.Secs(lh.ops[nw.done].Time), lh.ops[nw.done].Index)
	return f
}

func (lh *lockHistory) writeRef(w int) string {
	if w < 0 {
		return " (not in the history)"
	}
	return fmt.Sprintf(" (#%d)", lh.ops[lh.writes[w].inv].Index)
}
