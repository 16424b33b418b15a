package history

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Reversals counts the entries stamped earlier than the entry before them
// of the same client process. A client stamps its entries from the run's
// monotonic clock, one after another, so none should be (the nemesis is
// left out: its faults run side by side and may write their entries out
// of order, as may different clients); every checker orders operations by
// these times.
//
// A reversal matters when another client's entry is stamped between the
// two (it "is crossed"): then, whichever of the two stamps is wrong, a
// real-time order between that entry and one of them is wrong, and a
// checker may have used it. A reversal nobody's entry falls in is mended,
// with no order changed, by moving either stamp to the other's.
type Reversals struct {
	Count int
	// First is the first such entry, and Before the entry of its process
	// before it.
	First, Before Op
	// Crossed counts the reversals crossed by another client's entry, and
	// CrossedBy names their processes.
	Crossed   int
	CrossedBy []int
	// spans are the reversals still to be tested against the entries, up
	// to maxSpans; with more, each is taken as crossed.
	spans   []reversalSpan
	crossed bool // Cross has seen every entry
}

// reversalSpan is a reversal: of process, from the later entry's stamp to
// the earlier one's.
type reversalSpan struct {
	process  int
	from, to time.Duration
	crossed  bool
}

// maxSpans bounds the reversals tested one by one: a history with more has
// a clock no verdict can rest on.
const maxSpans = 1000

// FindReversals scans a history for time reversals within each client,
// and for the entries that cross them.
func FindReversals(ops []Op) Reversals {
	var s ReversalScan
	for _, op := range ops {
		s.See(op)
	}
	for _, op := range ops {
		s.Cross(op)
	}
	s.Done()
	return s.Reversals
}

// ReversalScan finds reversals entry by entry, for a history read as a
// stream: it keeps one entry per process. A second pass (Cross, then
// Done) finds which are crossed.
type ReversalScan struct {
	Reversals
	last map[int]Op // process -> its latest entry
}

// See takes the next entry of the history.
func (s *ReversalScan) See(op Op) {
	if op.Process < 0 {
		return
	}
	if s.last == nil {
		s.last = map[int]Op{}
	}
	if before, ok := s.last[op.Process]; ok && op.Time < before.Time {
		if s.Count == 0 {
			s.First, s.Before = op, before
		}
		s.Count++
		if len(s.spans) < maxSpans {
			s.spans = append(s.spans, reversalSpan{process: op.Process, from: op.Time, to: before.Time})
		}
	}
	op.Value = nil // only its line and time are told
	s.last[op.Process] = op
}

// Cross takes an entry of the history again, once See has seen them all.
func (s *ReversalScan) Cross(op Op) {
	if op.Process < 0 {
		return
	}
	for i := range s.spans {
		sp := &s.spans[i]
		sp.crossed = sp.crossed || op.Process != sp.process && sp.from < op.Time && op.Time < sp.to
	}
}

// Done ends the second pass.
func (s *ReversalScan) Done() {
	s.crossed = true
	s.Crossed = s.Count - len(s.spans) // untested: taken as crossed
	for _, sp := range s.spans {
		if sp.crossed {
			s.Crossed++
			if !slices.Contains(s.CrossedBy, sp.process) {
				s.CrossedBy = append(s.CrossedBy, sp.process)
			}
		}
	}
	if s.Count > len(s.spans) {
		for p := range s.last {
			if !slices.Contains(s.CrossedBy, p) {
				s.CrossedBy = append(s.CrossedBy, p)
			}
		}
	}
	slices.Sort(s.CrossedBy)
}

// Matter says whether a real-time order that a checker may use is wrong:
// some reversal is crossed, or was not tested.
func (r Reversals) Matter() bool { return r.Crossed > 0 || r.Count > 0 && !r.crossed }

// Note says what was found, naming the first reversal by its lines in the
// history file (entries are numbered from 0, lines from 1), or "" if none.
func (r Reversals) Note() string {
	if r.Count == 0 {
		return ""
	}
	note := fmt.Sprintf("%d entries are stamped earlier than the entry before them of the same process (first: line %d, %s at %.6fs, after line %d at %.6fs)",
		r.Count, r.First.Index+1, ProcessName(r.First.Process), r.First.Time.Seconds(), r.Before.Index+1, r.Before.Time.Seconds())
	if !r.Matter() {
		return note + "; no other client's entry is stamped between any two of them, so no real-time order depends on which stamp is wrong"
	}
	var names []string
	for _, p := range r.Doubtful() {
		names = append(names, ProcessName(p))
	}
	return note + fmt.Sprintf("; %d have other clients' entries stamped between them, so real-time orders the checkers used may be wrong: "+
		"a valid verdict is unknown, and findings involving %s say so", max(r.Crossed, 1), strings.Join(names, ", "))
}

// Doubtful are the processes whose times a reversal that matters makes
// doubtful: those of the crossed reversals, or, untested, of all.
func (r Reversals) Doubtful() []int {
	if r.crossed {
		return r.CrossedBy
	}
	var out []int
	for _, sp := range r.spans {
		if !slices.Contains(out, sp.process) {
			out = append(out, sp.process)
		}
	}
	slices.Sort(out)
	return out
}
