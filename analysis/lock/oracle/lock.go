package oracle

import (
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// Kinds of lock finding, as the lock checker names them.
const (
	LockExclusion = "mutual-exclusion"
	LockStale     = "stale-write"
	LockTokens    = "token-order"
)

// LockNames are the operation names of a lock-like history: acquire and
// release for locks, campaign and resign for elections. Writes are "write".
type LockNames struct{ Acquire, Release string }

// LockResult is what the lock checker's definitions say of a history.
type LockResult struct {
	// Findings, one per subject (a hold, a stale write, a grant).
	Findings []LockFinding
	// AcquiredOnce: some acquire completed ok (else there is nothing to judge).
	AcquiredOnce bool
	Holds        int
	Grants       int // distinct grants with a token
	// Rejected and Unmatched count resource log entries that were rejected,
	// and accepted entries that no acquire ok of their client and session
	// accounts for.
	Rejected, Unmatched int
}

// LockFinding is one finding the definitions call for. Any one of Proofs
// is a correct way to prove it: each is one partner that, with the
// finding's subject, breaks the rule.
type LockFinding struct {
	Kind   string
	Proofs []LockProof
}

// LockProof is what a finding names: positions of history entries and
// resource log lines, both ascending.
type LockProof struct {
	Ops, Lines []int
}

// lockHold is a tenure of the lock by the holder's own account.
type lockHold struct {
	proc, session int
	acq, end      int // positions: the acquire ok, and the entry that ends the hold
	start, stop   time.Duration
	kept          bool // never ended: it lasts to stop included
}

// at reports whether the hold has the lock at t.
func (h lockHold) at(t time.Duration) bool {
	return h.start <= t && (t < h.stop || h.kept && t == h.stop)
}

// lockWrite is a write's invocation, completion (-1 if none) and the
// acquire ok it relied on (-1 if none).
type lockWrite struct {
	proc, session  int
	value          string
	inv, done, acq int
}

// lockGrant is an acquire ok that carried a token.
type lockGrant struct {
	proc, session int
	lock          string
	token         int64
	inv, ok       int
}

// Lock judges a lock (or election) history h, and its resource log res if
// it has one, by the definitions of the lock checker's doc comment,
// checking every pair of holds, of writes, of log entries and of grants.
// Each process's entries are taken in file order; across processes only
// times count. An entry whose value cannot be read is an error.
func Lock(h []history.Op, res []history.ResourceEntry, names LockNames) (LockResult, error) {
	var out LockResult
	holds, writes, grants, err := lockScan(h, names)
	if err != nil {
		return out, err
	}
	for _, op := range h {
		if op.Process >= 0 && op.F == names.Acquire && op.Type == history.Ok {
			out.AcquiredOnce = true
		}
	}
	out.Holds, out.Grants = len(holds), len(grants)
	out.Findings = append(out.Findings, lockExclusion(holds)...)
	if len(res) > 0 {
		var stale []LockFinding
		stale, out.Rejected, out.Unmatched = lockStaleFromLog(h, res, holds, writes)
		out.Findings = append(out.Findings, stale...)
	} else {
		out.Findings = append(out.Findings, lockStaleFromHistory(h, writes)...)
	}
	out.Findings = append(out.Findings, lockTokenOrder(h, grants)...)
	return out, nil
}

// lockScan reads each process's entries in its own order: its holds, its
// writes with the acquisitions they relied on, and its grants.
func lockScan(h []history.Op, names LockNames) (holds []lockHold, writes []lockWrite, grants []lockGrant, err error) {
	byProc := map[int][]int{}
	var procs []int
	for i, op := range h {
		if op.Process < 0 {
			continue
		}
		if _, ok := byProc[op.Process]; !ok {
			procs = append(procs, op.Process)
		}
		byProc[op.Process] = append(byProc[op.Process], i)
	}
	for _, p := range procs {
		es := byProc[p]
		pending := -1            // invocation of the operation in flight
		hold := -1               // index in holds of the open hold
		lastAcq := map[int]int{} // session -> latest acquire ok
		for _, i := range es {
			op := h[i]
			lockOp := op.F == names.Acquire || op.F == names.Release || op.F == lockop.FWrite
			if !lockOp {
				continue
			}
			if op.Type == history.Invoke {
				pending = i
				switch op.F {
				case names.Acquire:
					if hold >= 0 {
						holds[hold].end, holds[hold].stop, hold = i, op.Time, -1
					}
				case names.Release:
					var v lockop.Value
					if err := op.Decode(&v); err != nil {
						return nil, nil, nil, err
					}
					if hold >= 0 && (v.Session == 0 || v.Session == holds[hold].session) {
						holds[hold].end, holds[hold].stop, hold = i, op.Time, -1
					}
				case lockop.FWrite:
					var v lockop.WriteValue
					if err := op.Decode(&v); err != nil {
						return nil, nil, nil, err
					}
					w := lockWrite{proc: p, session: v.Session, value: v.Value, inv: i, done: -1, acq: -1}
					if a, ok := lastAcq[v.Session]; ok {
						w.acq = a
					} else if hold >= 0 {
						w.acq = holds[hold].acq
					}
					writes = append(writes, w)
				}
				continue
			}
			if pending < 0 || h[pending].F != op.F {
				pending = -1
				continue
			}
			inv := pending
			pending = -1
			switch {
			case op.F == lockop.FWrite:
				writes[len(writes)-1].done = i
			case op.F == names.Acquire && op.Type == history.Ok:
				var v lockop.Value
				if err := op.Decode(&v); err != nil {
					return nil, nil, nil, err
				}
				lastAcq[v.Session] = i
				hold = len(holds)
				holds = append(holds, lockHold{proc: p, session: v.Session, acq: i, start: op.Time})
				if v.Token != nil && !slices.ContainsFunc(grants, func(g lockGrant) bool {
					return v.Session != 0 && g.proc == p && g.session == v.Session && g.lock == v.Lock && g.token == *v.Token
				}) {
					grants = append(grants, lockGrant{proc: p, session: v.Session, lock: v.Lock, token: *v.Token, inv: inv, ok: i})
				}
			}
		}
		if hold >= 0 {
			last := es[len(es)-1]
			holds[hold].end, holds[hold].stop, holds[hold].kept = last, h[last].Time, true
		}
	}
	return holds, writes, grants, nil
}

// lockExclusion: a hold overlaps an earlier hold (earlier start, or the
// same start and a lower process) of another process.
func lockExclusion(holds []lockHold) []LockFinding {
	var out []LockFinding
	for _, b := range holds {
		var f LockFinding
		for _, a := range holds {
			earlier := a.start < b.start || a.start == b.start && a.proc < b.proc
			if a.proc == b.proc || !earlier || !(a.at(b.start) && b.at(b.start)) {
				continue
			}
			f.Proofs = append(f.Proofs, LockProof{Ops: sortedSet(a.acq, a.end, b.acq, b.end)})
		}
		if f.Proofs != nil {
			f.Kind = LockExclusion
			out = append(out, f)
		}
	}
	return out
}

// lockStaleFromHistory: an ok write is stale if an ok write of another
// process, under a newer acquisition, completed before it was invoked.
func lockStaleFromHistory(h []history.Op, writes []lockWrite) []LockFinding {
	okWrite := func(w lockWrite) bool { return w.acq >= 0 && w.done >= 0 && h[w.done].Type == history.Ok }
	var out []LockFinding
	for _, w := range writes {
		if !okWrite(w) {
			continue
		}
		var f LockFinding
		for _, x := range writes {
			if okWrite(x) && x.proc != w.proc && h[x.acq].Time > h[w.acq].Time && h[x.done].Time < h[w.inv].Time {
				f.Proofs = append(f.Proofs, LockProof{Ops: sortedSet(w.acq, w.inv, w.done, x.acq, x.inv, x.done)})
			}
		}
		if f.Proofs != nil {
			f.Kind = LockStale
			out = append(out, f)
		}
	}
	return out
}

// lockStaleFromLog: an accepted entry of the resource log is stale if an
// accepted entry of another client on an earlier line was made under a
// newer acquisition. An entry's acquisition is the latest acquire ok (that
// completed an acquire) of its client and session; its write in the history, if any, the latest write
// invocation of its client with its value, with that write's completion.
func lockStaleFromLog(h []history.Op, res []history.ResourceEntry, holds []lockHold, writes []lockWrite) (out []LockFinding, rejected, unmatched int) {
	acqOf := func(e history.ResourceEntry) int {
		a := -1
		for _, hd := range holds {
			if hd.proc == e.Client && hd.session == e.Session {
				a = hd.acq // holds are in each process's order
			}
		}
		return a
	}
	// proof lists the entries behind a log entry: its acquisition and its write.
	proof := func(e history.ResourceEntry, acq int) []int {
		ps := []int{acq}
		for _, w := range slices.Backward(writes) {
			if w.proc == e.Client && w.value == e.Value {
				ps = append(ps, w.inv)
				if w.done >= 0 {
					ps = append(ps, w.done)
				}
				break
			}
		}
		return ps
	}
	line := func(i int) int {
		if res[i].Line > 0 {
			return res[i].Line
		}
		return i + 1
	}
	for i, e := range res {
		if !e.Accepted {
			rejected++
			continue
		}
		a := acqOf(e)
		if a < 0 {
			unmatched++
			continue
		}
		var f LockFinding
		for j, x := range res[:i] {
			b := acqOf(x)
			if !x.Accepted || b < 0 || x.Client == e.Client || h[b].Time <= h[a].Time {
				continue
			}
			f.Proofs = append(f.Proofs, LockProof{
				Ops:   sortedSet(append(proof(e, a), proof(x, b)...)...),
				Lines: sortedSet(line(i), line(j)),
			})
		}
		if f.Proofs != nil {
			f.Kind = LockStale
			out = append(out, f)
		}
	}
	return out, rejected, unmatched
}

// lockTokenOrder: per lock, a grant whose token is lower than that of a
// grant completed before it was invoked, or equal to that of another grant
// that came first (earlier ok, then lower process, then the process's order).
func lockTokenOrder(h []history.Op, grants []lockGrant) []LockFinding {
	first := func(a, b lockGrant) bool {
		ta, tb := h[a.ok].Time, h[b.ok].Time
		return ta < tb || ta == tb && (a.proc < b.proc || a.proc == b.proc && a.ok < b.ok)
	}
	var out []LockFinding
	for _, g := range grants {
		var f LockFinding
		for _, p := range grants {
			if p.lock != g.lock || p.ok == g.ok {
				continue
			}
			lower := p.token > g.token && h[p.ok].Time < h[g.inv].Time
			same := p.token == g.token && first(p, g)
			if lower || same {
				f.Proofs = append(f.Proofs, LockProof{Ops: sortedSet(p.inv, p.ok, g.inv, g.ok)})
			}
		}
		if f.Proofs != nil {
			f.Kind = LockTokens
			out = append(out, f)
		}
	}
	return out
}

// sortedSet is xs ascending, each once.
func sortedSet(xs ...int) []int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return slices.Compact(s)
}

// String renders a proof for failure messages.
func (p LockProof) String() string {
	if p.Lines == nil {
		return fmt.Sprintf("ops %v", p.Ops)
	}
	return fmt.Sprintf("ops %v, lines %v", p.Ops, p.Lines)
}
