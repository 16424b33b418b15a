// The single pass of the lock checker over a history: each process's
// invocations paired with their completions, giving the holds (tenures of
// the lock by the holder's own account), the writes, and the acquisitions
// they were made under.
package analysis

import (
	"time"

	"github.com/chaos-testing/chaos/history"
)

// hold is one process's tenure of the lock by its own account: from its
// acquire's ok completion (start, included) to the entry that ends it (stop,
// excluded), which is the process's next acquire invocation or its release
// invocation; or, if none comes, to the process's last entry, included
// (kept: it held the lock then still). Positions (acq, end) index the
// history slice.
type hold struct {
	proc        int
	acq, end    int
	start, stop time.Duration
	kept        bool
}

// holdsAt reports whether the hold had the lock at t, t not before its start.
func (h *hold) holdsAt(t time.Duration) bool { return t < h.stop || h.kept && t == h.stop }

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
	v         *vocab
	ops       []history.Op
	holds     []hold
	writes    []write
	byValue   map[writeKey]int   // index into writes
	acquires  map[sessionKey]int // position of the acquire ok
	counts    map[string]int
	latencies []time.Duration   // of ok acquires
	grants    []tokenGrant      // successful acquires that carried a token
	granted   map[grantKey]bool // the grants in grants that have a session
	bad       errCount          // unreadable values
}

// scanLock makes one pass over the history in file order, which is each
// process's own order, pairing invocations with completions and recording
// holds and writes. Nemesis entries and other operations are skipped.
func scanLock(ops []history.Op, v *vocab) *lockHistory {
	lh := &lockHistory{
		v:        v,
		ops:      ops,
		byValue:  map[writeKey]int{},
		acquires: map[sessionKey]int{},
		counts:   map[string]int{},
		granted:  map[grantKey]bool{},
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
		if op.F != lh.v.acquire && op.F != lh.v.act && op.F != lh.v.release {
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
			lh.holds[ps.open].kept = true
		}
		lh.endHold(ps, ps.last)
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
	case lh.v.acquire:
		lh.counts[op.F+"s_attempted"]++
		// A client asking for the lock again has, by its own account,
		// given up the hold it had (it skipped or lost its release).
		lh.endHold(ps, i)
	case lh.v.release:
		var v history.LockValue
		lh.decode(op, &v)
		if v.Session == 0 || v.Session == ps.openSession {
			lh.endHold(ps, i)
		}
	case lh.v.act:
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
	case op.F == lh.v.act && ps.pendingW >= 0:
		lh.writes[ps.pendingW].done = i
	case op.F == lh.v.acquire && op.Type == history.Ok:
		var v history.LockValue
		lh.decode(op, &v)
		if v.Token != nil {
			lh.addGrant(inv, i, v)
		}
		lh.acquires[sessionKey{op.Process, v.Session}] = i
		lh.latencies = append(lh.latencies, op.Time-lh.ops[inv].Time)
		ps.open, ps.openSession = len(lh.holds), v.Session
		lh.holds = append(lh.holds, hold{proc: op.Process, acq: i, end: -1, start: op.Time})
	}
}

// endHold ends the process's open hold, if it has one, at entry i.
func (lh *lockHistory) endHold(ps *procState, i int) {
	if ps.open < 0 {
		return
	}
	lh.holds[ps.open].end = i
	lh.holds[ps.open].stop = lh.ops[i].Time
	ps.open = -1
}

func (lh *lockHistory) decode(op *history.Op, v any) {
	if err := op.Decode(v); err != nil {
		lh.bad.add(err)
	}
}
