package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// LockChecker judges histories of the lock workload, where clients loop
// acquire -> write to a protected resource -> release. It finds two kinds of
// anomaly: "mutual-exclusion" (two processes holding the lock at once, by
// their own account) and "stale-write" (the resource accepting a write made
// under an acquisition older than one whose holder had already written).
type LockChecker struct{}

func init() { Register(LockChecker{}) }

// Name is how plans refer to this checker.
func (LockChecker) Name() string { return "lock" }

// maxFindings bounds how many findings a Result lists; FindingsTotal counts all.
const maxFindings = 20

// hold is one process's tenure of the lock by its own account: from its
// acquire's ok completion to the entry that ends it. Positions (acq, end)
// index the history slice.
type hold struct {
	proc        int
	acq, end    int
	session     int
	start, stop time.Duration
}

// write is one write op. done is the position of its completion (-1 if it
// never completed) and acq that of the acquire ok it relied on (-1 if unknown).
type write struct {
	proc           int
	value          string
	inv, done, acq int
}

type sessionKey struct{ proc, session int }

type writeKey struct {
	proc  int
	value string
}

// procState is one client's position in the single pass over the history.
type procState struct {
	pending     int // invocation in flight, -1 if none
	pendingW    int // its write record, if it is a write
	open        int // hold not yet ended (index in holds), -1 if none
	openSession int
	last        int // latest entry of this process
}

// lockHistory is what one pass over a history extracts for the lock checks.
type lockHistory struct {
	ops       []history.Op
	holds     []hold
	writes    []write
	byValue   map[writeKey]int   // index into writes
	acquires  map[sessionKey]int // position of the acquire ok
	counts    map[string]int
	latencies []time.Duration // of ok acquires
	tokens    int
	badValues int
	firstBad  error
}

// Check implements Checker.
func (LockChecker) Check(ctx context.Context, in Input) Result {
	res := Result{Verdict: Valid, Stats: map[string]any{}}
	lh := scanLock(in.History)
	if err := ctx.Err(); err != nil {
		return Result{Verdict: Unknown, Notes: []string{"check cancelled: " + err.Error()}}
	}

	me, meTotal := mutualExclusion(lh)
	var stale []Finding
	var staleTotal, rejected, unmatched int
	switch {
	case len(in.Resource) > 0:
		stale, staleTotal, rejected, unmatched = lh.staleFromResource(in.Resource)
	case len(lh.writes) > 0:
		stale, staleTotal = lh.staleFromHistory()
		res.Notes = append(res.Notes, "no resource log: stale writes were judged from the history alone, which sees only writes whose success a client observed")
	}
	if err := ctx.Err(); err != nil {
		return Result{Verdict: Unknown, Notes: []string{"check cancelled: " + err.Error()}}
	}

	res.Findings = pickFindings(stale, me) // stale writes first: they are the damage done
	res.FindingsTotal = meTotal + staleTotal
	switch {
	case lh.counts["acquires_ok"] == 0:
		res.Verdict = Unknown
		res.Notes = append(res.Notes, "no acquire succeeded, so mutual exclusion was never tested")
	case res.FindingsTotal > 0:
		res.Verdict = Invalid
	}
	if in.ResourceMode == "fenced" && lh.tokens == 0 {
		res.Notes = append(res.Notes, "the lock service handed out no fencing token (Redlock has none), so the fenced resource had nothing to check")
	}
	if unmatched > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d accepted resource writes match no successful acquire in the history (by client and session); they were not judged", unmatched))
	}
	if lh.badValues > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries had unreadable values and were judged without them; first: %v", lh.badValues, lh.firstBad))
	}

	for _, k := range []string{"acquires_attempted", "acquires_ok", "acquires_fail", "acquires_info",
		"writes_ok", "writes_fail", "writes_info", "releases_ok", "releases_fail", "releases_info"} {
		res.Stats[k] = lh.counts[k]
	}
	res.Stats["holds"] = len(lh.holds)
	res.Stats["stale_writes_accepted"] = staleTotal
	res.Stats["stale_writes_rejected"] = rejected
	res.Stats["mutual_exclusion_violations"] = meTotal
	res.Stats["tokens_seen"] = lh.tokens
	holdTimes := make([]time.Duration, len(lh.holds))
	for i, h := range lh.holds {
		holdTimes[i] = h.stop - h.start
	}
	addPercentiles(res.Stats, "hold_time", holdTimes)
	addPercentiles(res.Stats, "acquire_latency", lh.latencies)
	return res
}

// scanLock makes one pass over the history in file order, which is each
// process's own order, pairing invocations with completions and recording
// holds and writes. Nemesis entries and other operations are skipped.
func scanLock(ops []history.Op) *lockHistory {
	lh := &lockHistory{
		ops:      ops,
		byValue:  map[writeKey]int{},
		acquires: map[sessionKey]int{},
		counts:   map[string]int{},
	}
	procs := map[int]*procState{}
	var order []int // processes in order of first appearance, for determinism
	for i := range ops {
		op := &ops[i]
		if op.Process < 0 {
			continue
		}
		ps := procs[op.Process]
		if ps == nil {
			ps = &procState{pending: -1, pendingW: -1, open: -1}
			procs[op.Process] = ps
			order = append(order, op.Process)
		}
		ps.last = i
		switch op.F {
		case history.FAcquire, history.FWrite, history.FRelease:
		default:
			continue
		}
		if op.Type == history.Invoke {
			lh.invoke(ps, i)
			continue
		}
		lh.counts[op.F+"s_"+string(op.Type)]++
		if ps.pending >= 0 && ops[ps.pending].F == op.F {
			lh.complete(ps, ps.pending, i)
		}
		ps.pending, ps.pendingW = -1, -1
	}
	for _, p := range order {
		ps := procs[p]
		if ps.open >= 0 {
			lh.endHold(ps.open, ps.last)
		}
		if ps.pending >= 0 { // never completed: its outcome is unknown
			lh.counts[ops[ps.pending].F+"s_info"]++
		}
	}
	return lh
}

func (lh *lockHistory) invoke(ps *procState, i int) {
	op := &lh.ops[i]
	ps.pending, ps.pendingW = i, -1
	switch op.F {
	case history.FAcquire:
		lh.counts["acquires_attempted"]++
		// A client asking for the lock again has, by its own account,
		// given up the hold it had (it skipped or lost its release).
		if ps.open >= 0 {
			lh.endHold(ps.open, i)
			ps.open = -1
		}
	case history.FRelease:
		var v history.LockValue
		lh.decode(op, &v)
		if ps.open >= 0 && (v.Session == 0 || v.Session == ps.openSession) {
			lh.endHold(ps.open, i)
			ps.open = -1
		}
	case history.FWrite:
		var v history.WriteValue
		lh.decode(op, &v)
		acq, ok := lh.acquires[sessionKey{op.Process, v.Session}]
		if !ok {
			acq = -1
			if ps.open >= 0 {
				acq = lh.holds[ps.open].acq
			}
		}
		ps.pendingW = len(lh.writes)
		lh.byValue[writeKey{op.Process, v.Value}] = len(lh.writes)
		lh.writes = append(lh.writes, write{proc: op.Process, value: v.Value, inv: i, done: -1, acq: acq})
	}
}

func (lh *lockHistory) complete(ps *procState, inv, i int) {
	op := &lh.ops[i]
	switch {
	case op.F == history.FWrite && ps.pendingW >= 0:
		lh.writes[ps.pendingW].done = i
	case op.F == history.FAcquire && op.Type == history.Ok:
		var v history.LockValue
		lh.decode(op, &v)
		if v.Token != nil {
			lh.tokens++
		}
		lh.acquires[sessionKey{op.Process, v.Session}] = i
		lh.latencies = append(lh.latencies, op.Time-lh.ops[inv].Time)
		ps.open, ps.openSession = len(lh.holds), v.Session
		lh.holds = append(lh.holds, hold{proc: op.Process, acq: i, end: -1, session: v.Session, start: op.Time})
	}
}

func (lh *lockHistory) endHold(h, i int) {
	lh.holds[h].end = i
	lh.holds[h].stop = lh.ops[i].Time
}

func (lh *lockHistory) decode(op *history.Op, v any) {
	if err := op.Decode(v); err != nil {
		if lh.badValues == 0 {
			lh.firstBad = err
		}
		lh.badValues++
	}
}

// mutualExclusion sweeps the holds by start time, keeping the one that
// reaches furthest. A process's own holds never overlap (scanLock ends one
// before the next begins), so a hold that overlaps any earlier-starting
// hold overlaps the furthest-reaching one unless that is its own process's,
// in which case it overlaps nothing. One finding per overlapping hold, not
// per pair: O(n log n) however long a paused holder's tenure.
func mutualExclusion(lh *lockHistory) ([]Finding, int) {
	hs := slices.Clone(lh.holds)
	slices.SortStableFunc(hs, func(a, b hold) int { return cmp.Compare(a.start, b.start) })
	var out []Finding
	total := 0
	var reach *hold
	for i := range hs {
		h := &hs[i]
		if reach != nil && h.start < reach.stop && h.proc != reach.proc {
			total++
			if len(out) < maxFindings {
				out = append(out, lh.overlapFinding(reach, h))
			}
		}
		if reach == nil || h.stop > reach.stop {
			reach = h
		}
	}
	return out, total
}

func (lh *lockHistory) overlapFinding(a, b *hold) Finding {
	o := lh.ops
	return Finding{
		Kind: "mutual-exclusion",
		Explanation: fmt.Sprintf("%s and %s both held the lock by their own account: %s from %s (#%d) %s, %s from %s (#%d) %s.",
			history.ProcessName(a.proc), history.ProcessName(b.proc),
			history.ProcessName(a.proc), secs(a.start), o[a.acq].Index, lh.describeEnd(a.end),
			history.ProcessName(b.proc), secs(b.start), o[b.acq].Index, lh.describeEnd(b.end)),
		Ops: []history.Op{o[a.acq], o[a.end], o[b.acq], o[b.end]},
	}
}

func (lh *lockHistory) describeEnd(i int) string {
	op := &lh.ops[i]
	switch {
	case op.Type == history.Invoke && op.F == history.FRelease:
		return fmt.Sprintf("until its release at %s (#%d)", secs(op.Time), op.Index)
	case op.Type == history.Invoke && op.F == history.FAcquire:
		return fmt.Sprintf("until it asked for the lock again at %s (#%d)", secs(op.Time), op.Index)
	}
	return fmt.Sprintf("until its last entry at %s (#%d), never releasing", secs(op.Time), op.Index)
}

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
func (lh *lockHistory) staleFromResource(log []history.ResourceEntry) (out []Finding, total, rejected, unmatched int) {
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
		c := writer{ok: true, proc: e.Client, acq: acq, acqTime: lh.ops[acq].Time, w: -1, value: e.Value, line: cmp.Or(e.Line, i+1)}
		if w, ok := lh.byValue[writeKey{e.Client, e.Value}]; ok {
			c.w = w
		}
		if newer, stale := n.newerThan(c.proc, c.acqTime); stale {
			total++
			if len(out) < maxFindings {
				out = append(out, lh.staleFinding(c, newer))
			}
		}
		n.add(c)
	}
	return out, total, rejected, unmatched
}

// staleFromHistory judges without a resource log: a write W that succeeded is
// stale if a write of another process, under a newer acquisition, had
// already succeeded before W was invoked — the resource certainly took that
// one first. Events are sorted by time since the file is only roughly ordered.
func (lh *lockHistory) staleFromHistory() ([]Finding, int) {
	type event struct {
		t    time.Duration
		done bool
		w    int
	}
	var evs []event
	for i, w := range lh.writes {
		if w.acq >= 0 && w.done >= 0 && lh.ops[w.done].Type == history.Ok {
			evs = append(evs, event{lh.ops[w.inv].Time, false, i}, event{lh.ops[w.done].Time, true, i})
		}
	}
	// At equal times an invocation comes first: "before" means strictly before.
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(a.done), boolInt(b.done))
	})
	var n newest
	var out []Finding
	total := 0
	for _, ev := range evs {
		w := lh.writes[ev.w]
		c := writer{ok: true, proc: w.proc, acq: w.acq, acqTime: lh.ops[w.acq].Time, w: ev.w, value: w.value}
		if ev.done {
			n.add(c)
			continue
		}
		if newer, stale := n.newerThan(c.proc, c.acqTime); stale {
			total++
			if len(out) < maxFindings {
				out = append(out, lh.staleFinding(c, newer))
			}
		}
	}
	return out, total
}

func (lh *lockHistory) staleFinding(s, n writer) Finding {
	f := Finding{Kind: "stale-write"}
	pos := []int{s.acq, n.acq}
	for _, c := range []writer{s, n} {
		if c.w >= 0 {
			pos = append(pos, lh.writes[c.w].inv)
			if d := lh.writes[c.w].done; d >= 0 {
				pos = append(pos, d)
			}
		}
	}
	slices.Sort(pos)
	for _, p := range slices.Compact(pos) {
		f.Ops = append(f.Ops, lh.ops[p])
	}
	sp, np := history.ProcessName(s.proc), history.ProcessName(n.proc)
	if s.line > 0 {
		f.ResourceLines = []int{min(s.line, n.line), max(s.line, n.line)}
		f.Explanation = fmt.Sprintf("%s's write %q%s, made under its acquisition at %s (#%d), was accepted by the resource (line %d) after %s, which acquired the lock later at %s (#%d), had its write %q%s accepted (line %d).",
			sp, s.value, lh.writeRef(s.w), secs(s.acqTime), lh.ops[s.acq].Index, s.line,
			np, secs(n.acqTime), lh.ops[n.acq].Index, n.value, lh.writeRef(n.w), n.line)
		return f
	}
	sw, nw := lh.writes[s.w], lh.writes[n.w]
	f.Explanation = fmt.Sprintf("%s's write %q (#%d, invoked at %s), made under its acquisition at %s (#%d), succeeded although %s, which acquired the lock later at %s (#%d), had already written %q successfully at %s (#%d).",
		sp, s.value, lh.ops[sw.inv].Index, secs(lh.ops[sw.inv].Time), secs(s.acqTime), lh.ops[s.acq].Index,
		np, secs(n.acqTime), lh.ops[n.acq].Index, n.value, secs(lh.ops[nw.done].Time), lh.ops[nw.done].Index)
	return f
}

func (lh *lockHistory) writeRef(w int) string {
	if w < 0 {
		return " (not in the history)"
	}
	return fmt.Sprintf(" (#%d)", lh.ops[lh.writes[w].inv].Index)
}

// pickFindings keeps at most maxFindings, giving each kind at least half
// the room when both have more, so one flood does not hide the other kind.
func pickFindings(a, b []Finding) []Finding {
	na := min(len(a), max(maxFindings-len(b), maxFindings/2))
	nb := min(len(b), maxFindings-na)
	return append(a[:na:na], b[:nb]...)
}

// addPercentiles records p50, p99 and max of ds in seconds (nearest rank).
func addPercentiles(stats map[string]any, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := max(int(math.Ceil(p*float64(len(s))))-1, 0)
		return s[i].Seconds()
	}
	stats[name+"_p50_s"] = rank(0.50)
	stats[name+"_p99_s"] = rank(0.99)
	stats[name+"_max_s"] = s[len(s)-1].Seconds()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
