package history

// Sample keeps an evenly spread sample of a history read as a stream, in
// bounded memory, for drawing a run too long to draw whole: every entry
// of the nemesis and the observer, and both entries of every Every-th
// client operation (by invocation), Every doubling whenever more than max
// operations are kept.
type Sample struct {
	max     int
	every   int
	seq     int         // client invocations seen
	kept    []sampled   // in file order
	pending map[int]int // process -> number of its operation in flight, if kept
	ops     int         // client operations kept
}

type sampled struct {
	op  Op
	seq int // the operation's number; -1 for the nemesis's entries
}

// NewSample starts a sample of at most about max client operations.
func NewSample(max int) *Sample {
	return &Sample{max: max, every: 1, pending: map[int]int{}}
}

// See takes the next entry of the history.
func (s *Sample) See(op Op) {
	switch {
	case op.Process < 0:
		s.kept = append(s.kept, sampled{op, -1})
	case op.Type == Invoke:
		s.seq++
		delete(s.pending, op.Process)
		if s.seq%s.every == 0 {
			s.pending[op.Process] = s.seq
			s.kept = append(s.kept, sampled{op, s.seq})
			s.ops++
		}
	default:
		if n, ok := s.pending[op.Process]; ok {
			delete(s.pending, op.Process)
			s.kept = append(s.kept, sampled{op, n})
		}
	}
	if s.ops > s.max {
		s.thin()
	}
}

// thin doubles Every, keeping the operations whose number it divides.
func (s *Sample) thin() {
	s.every *= 2
	kept, ops := s.kept[:0], 0
	for _, e := range s.kept {
		if e.seq >= 0 && e.seq%s.every != 0 {
			continue
		}
		if e.seq >= 0 && e.op.Type == Invoke {
			ops++
		}
		kept = append(kept, e)
	}
	s.kept, s.ops = kept, ops
	for p, n := range s.pending {
		if n%s.every != 0 {
			delete(s.pending, p)
		}
	}
}

// Every is how many client operations the sample holds one of.
func (s *Sample) Every() int { return s.every }

// Ops is the sample, in file order.
func (s *Sample) Ops() []Op {
	out := make([]Op, len(s.kept))
	for i, e := range s.kept {
		out[i] = e.op
	}
	return out
}
