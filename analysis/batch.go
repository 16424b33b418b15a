package analysis

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// BatchChecker is a checker that can judge a history given to it in
// batches of whole parts (history.PartOf), so that a history too long to
// hold in memory is judged a few parts at a time (RunStream). Judged in
// batches or whole, a history gets the same result.
type BatchChecker interface {
	Checker
	// Parts says how the checker's history divides: nil if it does not,
	// and the checker must see it whole.
	Parts() history.PartOf
	// Begin starts a check of the run in, whose History holds the
	// nemesis's entries (at least: a checker ignores the rest), for the
	// fault windows findings are shown with. Result must be called.
	Begin(ctx context.Context, in Input) Batches
}

// Batches is one check of a history given in batches: together they hold
// every entry once, each part whole in one batch, and an operation in no
// part whole in one batch; each batch in file order, with the entries'
// indices.
type Batches interface {
	Add(batch []history.Op)
	Result() Result
}

// Source reads a history from its first entry, giving each entry, in file
// order and with its index, to each. It may be called more than once and
// gives the same entries each time; an error from each stops it and is
// returned.
type Source func(each func(history.Op) error) error

// Streamable reports whether every checker can judge a history in
// batches, so that RunStream can.
func Streamable(checkers []Checker) bool {
	for _, c := range checkers {
		if bc, batched := c.(BatchChecker); !batched || bc.Parts() == nil {
			return false
		}
	}
	return true
}

// RunStream is Run for a history too long to hold in memory. It reads src
// twice: first to learn where each checker's parts end and to gather the
// nemesis's entries, then to hand each checker its batches of whole parts
// (of about batch entries). Memory holds the parts begun and not ended,
// a batch per checker and the faults, not the history. The checkers must
// be Streamable.
func RunStream(ctx context.Context, cs []Checker, in Input, src Source, batch int) (Report, error) {
	start := time.Now()
	checkers := make([]BatchChecker, len(cs))
	parts := make([]*history.Parts, len(cs))
	for i, c := range cs {
		checkers[i] = c.(BatchChecker)
		parts[i] = history.NewParts(checkers[i].Parts())
	}
	in.History = nil
	entries := 0
	err := src(func(op history.Op) error {
		entries++
		if op.Process == history.Nemesis {
			in.History = append(in.History, op)
		}
		for _, p := range parts {
			p.See(&op)
		}
		return ctx.Err()
	})
	if err != nil {
		return Report{}, err
	}
	checks := make([]*safeBatches, len(cs))
	batchers := make([]*history.Batcher, len(cs))
	for i, c := range checkers {
		in.TellProgress(c.Name(), 0, 0)
		checks[i] = beginSafely(ctx, c, in)
		batchers[i] = parts[i].Batcher(batch, func(b []history.Op) error {
			checks[i].add(b)
			return ctx.Err()
		})
	}
	err = src(func(op history.Op) error {
		for _, b := range batchers {
			if err := b.Add(op); err != nil {
				return err
			}
		}
		return nil
	})
	for _, b := range batchers {
		err = cmp.Or(err, b.Close())
	}
	if err != nil {
		return Report{}, err
	}
	rep := Report{Verdict: Valid, Ops: entries}
	want := map[int][]*history.Op{} // entry index -> findings' digests of it
	for _, c := range checks {
		r := c.result()
		r.countKinds()
		if _, digests := c.b.(Digesting); digests {
			for _, f := range r.Findings {
				for i := range f.Ops {
					want[f.Ops[i].Index] = append(want[f.Ops[i].Index], &f.Ops[i])
				}
			}
		}
		rep.Results = append(rep.Results, r)
		rep.Verdict = Worst(rep.Verdict, r.Verdict)
	}
	if len(want) > 0 { // a third pass, for the entries findings name
		err := src(func(op history.Op) error {
			for _, d := range want[op.Index] {
				*d = op
			}
			return ctx.Err()
		})
		if err != nil {
			return Report{}, err
		}
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// Digesting is a Batches that keeps a digest of each entry, not the entry:
// the operations its findings name carry their Index, Time, Type, Process
// and F only, and RunStream reads the history once more to fill them in.
type Digesting interface{ DigestsOnly() }

// safeBatches runs a batched check as safeCheck runs a check: a checker
// that panics is a bug in chaos, and its verdict becomes Unknown.
type safeBatches struct {
	name    string
	b       Batches
	crashed any
}

func beginSafely(ctx context.Context, c BatchChecker, in Input) (s *safeBatches) {
	s = &safeBatches{name: c.Name()}
	defer s.catch()
	s.b = c.Begin(ctx, in)
	return s
}

func (s *safeBatches) catch() {
	if p := recover(); p != nil && s.crashed == nil {
		s.crashed = p
	}
}

func (s *safeBatches) add(batch []history.Op) {
	if s.crashed != nil {
		return
	}
	defer s.catch()
	s.b.Add(batch)
}

func (s *safeBatches) result() (r Result) {
	defer func() {
		s.catch()
		if s.crashed != nil {
			r = Result{Verdict: Unknown, Notes: []string{fmt.Sprintf("checker crashed: %v", s.crashed)}}
		}
		r.Checker = s.name
	}()
	if s.crashed != nil {
		return r
	}
	return s.b.Result()
}
