package oracle

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// LockCase is a random lock or election history and its resource log.
type LockCase struct {
	History  []history.Op
	Resource []history.ResourceEntry // nil: no resource log
	Mode     string                  // the resource's: "fenced", "unfenced", or "" without a log
	Election bool                    // campaign/resign rather than acquire/release
}

// Names are the case's operation names.
func (c LockCase) Names() LockNames {
	if c.Election {
		return LockNames{Acquire: lockop.FCampaign, Release: lockop.FResign}
	}
	return LockNames{Acquire: lockop.FAcquire, Release: lockop.FRelease}
}

// lockSent is a write as the resource may have seen it.
type lockSent struct {
	proc      int
	v         lockop.WriteValue
	inv, done time.Duration
	outcome   history.Type // "" if it never completed
}

// RandomLockHistory draws a small history in which 1 to 4 processes loop
// acquire -> 0 to 2 writes -> release (sometimes skipping the release, or
// naming another session or none), each operation ending ok, fail, info or
// never (the process stops there). Tokens, when the lock service gives
// them, come from 1..5, so that equal and decreasing tokens are common; now
// and then a grant is reported twice (same session and token). Two thirds
// of the cases have a resource log consistent with the writes' outcomes,
// with entries of unknown outcome accepted or not, and now and then an
// entry no acquisition accounts for. Lines are out of time order across
// processes: either freely interleaved, or written late by a few ticks.
func RandomLockHistory(r randhistory.Rand) LockCase {
	c := LockCase{Election: r.IntN(4) == 0}
	names := c.Names()
	withTokens := r.IntN(4) != 0
	locks := []string{"l"}
	if r.IntN(5) == 0 {
		locks = append(locks, "m")
	}
	var lines [][]history.Op
	var sent []lockSent
	for p := range 1 + r.IntN(4) {
		g := lockProc{r: r, proc: p, t: time.Duration(r.IntN(4)) * randhistory.Tick}
		g.run(names, locks, withTokens, &sent)
		lines = append(lines, g.ops)
	}
	c.History = randhistory.InterleavedOrLate(r, lines)
	if r.IntN(3) != 0 {
		c.Mode = randhistory.OneOf(r, "fenced", "unfenced")
		c.Resource = lockResourceLog(r, sent)
	}
	return c
}

// lockProc draws one process's entries.
type lockProc struct {
	r    randhistory.Rand
	proc int
	t    time.Duration
	ops  []history.Op
}

// emit appends an entry 0 to 2 ticks after the previous one.
func (g *lockProc) emit(typ history.Type, f string, v any) time.Duration {
	g.t += time.Duration(g.r.IntN(3)) * randhistory.Tick
	g.ops = append(g.ops, history.Op{Time: g.t, Type: typ, Process: g.proc, F: f, Value: history.MustValue(v)})
	return g.t
}

func (g *lockProc) run(names LockNames, locks []string, withTokens bool, sent *[]lockSent) {
	session := 0
	var token *int64
	for range 1 + g.r.IntN(3) {
		lock := randhistory.OneOf(g.r, locks...)
		g.emit(history.Invoke, names.Acquire, lockop.Value{Lock: lock})
		out := randhistory.AnyOutcome(g.r)
		if out == "" {
			return
		}
		if out != history.Ok {
			g.emit(out, names.Acquire, lockop.Value{Lock: lock})
			continue
		}
		if session == 0 || g.r.IntN(8) != 0 { // else this reports the last grant again
			session++
			token = nil
			if withTokens {
				tk := int64(1 + g.r.IntN(5))
				token = &tk
			}
		}
		g.emit(history.Ok, names.Acquire, lockop.Value{Lock: lock, Session: session, Token: token})
		for a := range g.r.IntN(3) {
			w := lockop.WriteValue{Key: "k", Value: fmt.Sprintf("p%d-s%d-a%d", g.proc, session, a), Session: session, Token: token}
			if g.r.IntN(10) == 0 {
				w.Session = 0 // tied to the hold it is made in
			}
			s := lockSent{proc: g.proc, v: w, inv: g.emit(history.Invoke, lockop.FWrite, w)}
			s.outcome = randhistory.AnyOutcome(g.r)
			s.done = s.inv + 3*randhistory.Tick
			if s.outcome != "" {
				s.done = g.emit(s.outcome, lockop.FWrite, w)
			}
			*sent = append(*sent, s)
			if s.outcome == "" {
				return
			}
		}
		if g.r.IntN(6) == 0 {
			continue // no release: the next acquire ends the hold
		}
		rv := lockop.Value{Lock: lock, Session: randhistory.OneOf(g.r, session, session, session, 0, session+1), Token: token}
		g.emit(history.Invoke, names.Release, rv)
		out = randhistory.AnyOutcome(g.r)
		if out == "" {
			return
		}
		g.emit(out, names.Release, rv)
	}
}

// lockResourceLog is what the resource decided, in its order: an ok write
// was accepted, a failed one rejected or never seen, one of unknown outcome
// any of the three; each decided while it was in flight. Now and then an
// accepted entry of a session no acquisition had.
func lockResourceLog(r randhistory.Rand, sent []lockSent) []history.ResourceEntry {
	type decided struct {
		e   history.ResourceEntry
		tie int
	}
	var ds []decided
	for _, s := range sent {
		e := history.ResourceEntry{Client: s.proc, Key: s.v.Key, Value: s.v.Value, Session: s.v.Session, Token: s.v.Token}
		switch s.outcome {
		case history.Ok:
			e.Accepted = true
		case history.Fail:
			if r.IntN(4) == 0 {
				continue
			}
		default:
			switch r.IntN(3) {
			case 0:
				continue
			case 1:
				e.Accepted = true
			}
		}
		if !e.Accepted {
			e.Reason = "token lower than the highest accepted"
		}
		e.Time = s.inv + time.Duration(r.IntN(int((s.done-s.inv)/randhistory.Tick)+1))*randhistory.Tick
		ds = append(ds, decided{e, r.IntN(4)})
	}
	if r.IntN(6) == 0 && len(sent) > 0 {
		s := randhistory.OneOf(r, sent...)
		ds = append(ds, decided{history.ResourceEntry{Time: s.inv, Client: s.proc, Key: "k", Value: "stray", Session: 99, Accepted: true}, r.IntN(4)})
	}
	slices.SortStableFunc(ds, func(a, b decided) int { return cmp.Or(cmp.Compare(a.e.Time, b.e.Time), cmp.Compare(a.tie, b.tie)) })
	log := make([]history.ResourceEntry, len(ds))
	for i, d := range ds {
		log[i] = d.e
		log[i].Line = i + 1
	}
	return log
}
