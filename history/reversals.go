package history

import "fmt"

// Reversals counts the entries stamped earlier than the entry before them
// of the same client process. A client stamps its entries from the run's
// monotonic clock, one after another, so none should be (the nemesis is
// left out: its faults run side by side and may write their entries out
// of order, as may different clients); every checker orders
// operations by these times, so a verdict on a history with reversals
// rests on times that cannot all be right.
type Reversals struct {
	Count int
	// First is the first such entry, and Before the entry of its process
	// before it.
	First, Before Op
}

// FindReversals scans a history for time reversals within each client.
func FindReversals(ops []Op) Reversals {
	var s ReversalScan
	for _, op := range ops {
		s.See(op)
	}
	return s.Reversals
}

// ReversalScan finds reversals entry by entry, for a history read as a
// stream: it keeps one entry per process.
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
	}
	op.Value = nil // only its line and time are told
	s.last[op.Process] = op
}

// Note says what was found, naming the first reversal by its lines in the
// history file (entries are numbered from 0, lines from 1), or "" if none.
func (r Reversals) Note() string {
	if r.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d entries are stamped earlier than the entry before them of the same process (first: line %d, %s at %.6fs, after line %d at %.6fs); "+
		"every checker orders operations by these times, so the verdict rests on times that cannot all be right",
		r.Count, r.First.Index+1, ProcessName(r.First.Process), r.First.Time.Seconds(), r.Before.Index+1, r.Before.Time.Seconds())
}
