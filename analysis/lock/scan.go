// The single pass of the lock checker over a history: each process's
// invocations paired with their completions, giving the holds (tenures of
// the lock by the holder's own account), the writes, and the acquisitions
// they were made under. The pass keeps a digest of each entry it needs, not
// the entry, so that a history too long to hold in memory can be judged as
// a stream.

package lock

import (
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// digest is what the lock checks keep of an entry: enough to order and
// describe it, in 32 bytes. at is where the whole entry is found: its
// position in the history judged whole (lockHistory.full), its Index in one
// judged as a stream, whose findings RunStream fills in by a further pass.
type digest struct {
	at, Index int
	Time      time.Duration
	Process   int32
	f         fn
	typ       uint8 // index in entryTypes
}

// fn is which of the vocabulary's three functions an entry is, if any.
type fn uint8

const (
	otherFn fn = iota
	acquireFn
	actFn
	releaseFn
)

var entryTypes = [...]history.Type{history.Invoke, history.Ok, history.Fail, history.Info}

// Type is the entry's type.
func (d digest) Type() history.Type { return entryTypes[d.typ] }

// digestOf is what the checks keep of op, found at at.
func (v *vocab) digestOf(op *history.Op, at int) digest {
	d := digest{at: at, Index: op.Index, Time: op.Time, Process: int32(op.Process)}
	d.typ = uint8(max(slices.Index(entryTypes[:], op.Type), 0)) // a history's types are checked when it is read
	switch op.F {
	case v.acquire:
		d.f = acquireFn
	case v.act:
		d.f = actFn
	case v.release:
		d.f = releaseFn
	}
	return d
}

// name is the function f names in the vocabulary, "" for another.
func (v *vocab) name(f fn) string {
	return [...]string{"", v.acquire, v.act, v.release}[f]
}

// hold is one process's tenure of the lock by its own account: from its
// acquire's ok completion (start, included) to the entry that ends it (stop,
// excluded), which is the process's next acquire invocation or its release
// invocation; or, if none comes, to the process's last entry, included
// (kept: it held the lock then still). Positions (acq, end) index
// lockHistory's digests.
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
	last        digest // latest entry of this process
}

// lockHistory is what one pass over a history extracts for the lock checks.
// Positions (pending, acq, end, inv, done, ok) index ops.
type lockHistory struct {
	v         *vocab
	ops       []digest
	full      []history.Op // the history judged whole, nil for a stream
	procs     map[int]*procState
	order     []int // processes in order of first appearance, for determinism
	holds     []hold
	writes    []write
	byValue   map[writeKey]int   // index into writes
	acquires  map[sessionKey]int // position of the acquire ok
	counts    map[string]int
	latencies []time.Duration   // of ok acquires
	grants    []tokenGrant      // successful acquires that carried a token
	granted   map[grantKey]bool // the grants in grants that have a session
	bad       analysis.ErrCount // unreadable values
}

// scanLock starts a pass over a history, fed its entries by see in file
// order or in any order that keeps each process's own, pairing invocations
// with completions and recording holds and writes. Nemesis entries and
// other operations are skipped. full is the history if it is judged whole.
func scanLock(v *vocab, full []history.Op) *lockHistory {
	return &lockHistory{
		v:        v,
		full:     full,
		procs:    map[int]*procState{},
		byValue:  map[writeKey]int{},
		acquires: map[sessionKey]int{},
		counts:   map[string]int{},
		granted:  map[grantKey]bool{},
	}
}

// see takes the next entry, found at at (a position in full, or the
// entry's Index).
func (lh *lockHistory) see(op *history.Op, at int) {
	if op.Process < 0 {
		return
	}
	ps := lh.procs[op.Process]
	if ps == nil {
		ps = &procState{pending: -1, pendingW: -1, open: -1}
		lh.procs[op.Process] = ps
		lh.order = append(lh.order, op.Process)
	}
	d := lh.v.digestOf(op, at)
	ps.last = d
	switch {
	case d.f == otherFn:
	case op.Type == history.Invoke:
		lh.invoke(op, ps, lh.keep(d))
	default:
		lh.counts[op.F+"s_"+string(op.Type)]++
		if ps.pending >= 0 && lh.ops[ps.pending].f == d.f {
			lh.complete(op, ps, ps.pending, d)
		}
		ps.pending, ps.pendingW = -1, -1
	}
}

// keep keeps d, returning its position.
func (lh *lockHistory) keep(d digest) int {
	lh.ops = append(lh.ops, d)
	return len(lh.ops) - 1
}

// finish ends the pass: the holds still open are kept to each process's
// last entry, and operations never completed are counted as info.
func (lh *lockHistory) finish() {
	for _, p := range lh.order {
		ps := lh.procs[p]
		if ps.open >= 0 {
			lh.holds[ps.open].kept = true
			lh.endHold(ps, lh.keep(ps.last))
		}
		if ps.pending >= 0 { // never completed: its outcome is unknown
			lh.counts[lh.v.name(lh.ops[ps.pending].f)+"s_info"]++
		}
	}
	lh.procs = nil
}

func (lh *lockHistory) invoke(op *history.Op, ps *procState, i int) {
	ps.pending, ps.pendingW = i, -1
	switch op.F {
	case lh.v.acquire:
		lh.counts[op.F+"s_attempted"]++
		// A client asking for the lock again has, by its own account,
		// given up the hold it had (it skipped or lost its release).
		lh.endHold(ps, i)
	case lh.v.release:
		var v lockop.Value
		lh.decode(op, &v)
		if v.Session == 0 || v.Session == ps.openSession {
			lh.endHold(ps, i)
		}
	case lh.v.act:
		var v lockop.WriteValue
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

// complete takes the completion d, of op, of the process's operation
// invoked at inv, keeping d if a write or hold refers to it.
func (lh *lockHistory) complete(op *history.Op, ps *procState, inv int, d digest) {
	switch {
	case d.f == actFn && ps.pendingW >= 0:
		lh.writes[ps.pendingW].done = lh.keep(d)
	case d.f == acquireFn && op.Type == history.Ok:
		i := lh.keep(d)
		var v lockop.Value
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
		lh.bad.Add(err)
	}
}

// opsAt lists the entries at the given positions, in history order and once
// each.
func (lh *lockHistory) opsAt(pos []int) []history.Op {
	slices.SortFunc(pos, func(a, b int) int { return lh.ops[a].at - lh.ops[b].at })
	return lh.entries(slices.CompactFunc(pos, func(a, b int) bool { return lh.ops[a].at == lh.ops[b].at }))
}

// entries lists the entries at the given positions, in that order: whole,
// from the history judged whole; else their digests, which RunStream fills
// in.
func (lh *lockHistory) entries(pos []int) []history.Op {
	ops := make([]history.Op, len(pos))
	for i, p := range pos {
		d := lh.ops[p]
		if lh.full != nil {
			ops[i] = lh.full[d.at]
		} else {
			ops[i] = history.Op{Index: d.Index, Time: d.Time, Type: d.Type(), Process: int(d.Process), F: lh.v.name(d.f)}
		}
	}
	return ops
}
