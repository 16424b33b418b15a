package oracle

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/randhistory"
	"github.com/chaos-testing/chaos/ops/setop"
)

// StreamResult is the reference judgement of a stream history: the
// verdict ("valid", "invalid", or "unknown" when no read succeeded), how
// many reads succeeded, the duplicates (each time a read holds a value it
// held before), and the invocations (their indices, in history order) of
// the reads that no log could have returned whatever the others: their
// sequences are not 1, 2, 3.... Beside the verdict, it counts the pairs of
// reads that show each way the guarantee breaks (a pair may show several,
// and the verdict needs none of them):
//   - Forks: the two hold different values at one sequence;
//   - Lost: one completed before the other was invoked, and holds a
//     sequence past all of the other's;
//   - Moved: both recorded their sequences, and a value sits in each at a
//     sequence where the other does not hold it.
//
// A read holds, at a sequence, the first message it returned there.
type StreamResult struct {
	Verdict            string
	Reads, Duplicates  int
	Impossible         []int
	Forks, Lost, Moved int
}

// streamRead is an ok read of the whole log: its invocation and
// completion, its values and their sequences, recorded or numbered 1, 2,
// 3....
type streamRead struct {
	inv, done *history.Op
	vs        []int64
	seqs      []uint64
	recorded  bool
}

// CheckStream judges a stream history from the guarantee, by trying every
// order of the reads' moments. "Before" is strictly earlier in recorded
// time. The history must be well formed: it is an error if a value does
// not decode, or a read has sequences but not one for each value.
func CheckStream(ops []history.Op) (StreamResult, error) {
	reads, err := okReads(ops)
	if err != nil {
		return StreamResult{}, err
	}
	res := StreamResult{Reads: len(reads), Verdict: "unknown"}
	if len(reads) == 0 {
		return res, nil
	}
	for _, r := range reads {
		for i, v := range r.vs {
			if slices.Contains(r.vs[:i], v) {
				res.Duplicates++
			}
		}
		if !isLogState(r) {
			res.Impossible = append(res.Impossible, r.inv.Index)
		}
	}
	res.Verdict = "invalid"
	if len(res.Impossible) == 0 && explained(reads, nil, make([]bool, len(reads))) {
		res.Verdict = "valid"
	}
	for i, a := range reads {
		for _, b := range reads[i+1:] {
			if forked(a, b) {
				res.Forks++
			}
			if moved(a, b) {
				res.Moved++
			}
			if shrank(a, b) {
				res.Lost++
			}
			if shrank(b, a) {
				res.Lost++
			}
		}
	}
	return res, nil
}

// holds is the value r holds at seq: the first it returned there.
func holds(r streamRead, seq uint64) (int64, bool) {
	for i, s := range r.seqs {
		if s == seq {
			return r.vs[i], true
		}
	}
	return 0, false
}

// forked says whether a and b hold different values at some sequence.
func forked(a, b streamRead) bool {
	for _, s := range a.seqs {
		x, _ := holds(a, s)
		if y, ok := holds(b, s); ok && x != y {
			return true
		}
	}
	return false
}

// moved says whether a and b, both with recorded sequences, hold a value
// at sequences s and t where the other does not hold it.
func moved(a, b streamRead) bool {
	if !a.recorded || !b.recorded {
		return false
	}
	for _, s := range a.seqs {
		for _, t := range b.seqs {
			v, _ := holds(a, s)
			if w, _ := holds(b, t); w != v || s == t {
				continue
			}
			if x, ok := holds(b, s); ok && x == v {
				continue
			}
			if y, ok := holds(a, t); ok && y == v {
				continue
			}
			return true
		}
	}
	return false
}

// shrank says whether a completed before b was invoked and holds a
// sequence past every one of b's.
func shrank(a, b streamRead) bool {
	if !(a.done.Time < b.inv.Time) {
		return false
	}
	for _, s := range a.seqs {
		if !slices.ContainsFunc(b.seqs, func(t uint64) bool { return t >= s }) {
			return true
		}
	}
	return false
}

// isLogState says whether r could be the whole log at some moment: its
// messages sit at sequences 1, 2, 3..., in that order.
func isLogState(r streamRead) bool {
	for i, s := range r.seqs {
		if s != uint64(i+1) {
			return false
		}
	}
	return true
}

// explained says whether the reads not yet placed can follow the order
// placed so far: one at a time, each only once every read that completed
// before it was invoked is placed, and each holding the one before it as a
// prefix (the log only grows). It tries every such order.
func explained(reads []streamRead, order []int, placed []bool) bool {
	if len(order) == len(reads) {
		return true
	}
	for i, r := range reads {
		if placed[i] || !mayComeNext(reads, placed, i) {
			continue
		}
		if len(order) > 0 && !isPrefix(reads[order[len(order)-1]].vs, r.vs) {
			continue
		}
		placed[i] = true
		if explained(reads, append(order, i), placed) {
			return true
		}
		placed[i] = false
	}
	return false
}

// mayComeNext says whether no read left to place completed before read i
// was invoked.
func mayComeNext(reads []streamRead, placed []bool, i int) bool {
	for j, o := range reads {
		if j != i && !placed[j] && o.done.Time < reads[i].inv.Time {
			return false
		}
	}
	return true
}

func isPrefix(a, b []int64) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

// okReads lists the ok reads of clients (process ≥ 0), in history order.
// The completion of an invocation is the process's next add or read
// entry, if that is not another invocation.
func okReads(ops []history.Op) ([]streamRead, error) {
	var reads []streamRead
	for i := range ops {
		inv := &ops[i]
		if inv.Process < 0 || inv.Type != history.Invoke || inv.F != setop.FRead {
			continue
		}
		var done *history.Op
		for j := i + 1; j < len(ops); j++ {
			if ops[j].Process == inv.Process && (ops[j].F == setop.FAdd || ops[j].F == setop.FRead) {
				if ops[j].Type == history.Ok {
					done = &ops[j]
				}
				break
			}
		}
		if done == nil {
			continue
		}
		var v setop.Value
		if err := done.Decode(&v); err != nil {
			return nil, err
		}
		r := streamRead{inv: inv, done: done, vs: v.Read, seqs: v.Seqs, recorded: len(v.Seqs) > 0}
		switch {
		case len(v.Seqs) == 0:
			r.seqs = nil
			for k := range v.Read {
				r.seqs = append(r.seqs, uint64(k+1))
			}
		case len(v.Seqs) != len(v.Read):
			return nil, fmt.Errorf("op #%d: %d values, %d sequences", done.Index, len(v.Read), len(v.Seqs))
		}
		reads = append(reads, r)
	}
	return reads, nil
}

// RandomStreamHistory draws a small stream history: 1–4 client processes,
// 1–10 operations, reads and (two in five) publishes (adds) of a few values, repeated at times,
// ending ok, fail, info or never (a process's last operation only), and
// whole reads of a log those publishes grew. Each publish that did not
// fail may be stored (an acknowledged one is), once or twice, at an
// instant during it; each ok read returns the log as it was at an instant
// during the read, and a third of them are then spoiled: cut short,
// emptied, a message dropped, changed, swapped, added or returned twice,
// a sequence moved or two swapped. A history's reads all record their sequences, none do,
// or each at even odds. Times are on a coarse clock, so that operations
// overlap and times tie, and the processes' lines are interleaved at
// random.
func RandomStreamHistory(r randhistory.Rand) []history.Op {
	type op struct {
		proc      int
		inv, done time.Duration
		outcome   history.Type // "" for never completed
		add       bool
		v         int64
	}
	procs := 1 + r.IntN(4)
	owner := make([]int, 1+r.IntN(10))
	for k := range owner {
		owner[k] = r.IntN(procs)
	}
	clock := make([]time.Duration, procs)
	var plan []op
	for k, p := range owner {
		o := op{proc: p, inv: clock[p] + time.Duration(r.IntN(3))*randhistory.Tick, add: r.IntN(5) < 2, v: int64(r.IntN(4))}
		o.done = o.inv + time.Duration(r.IntN(4))*randhistory.Tick
		clock[p] = o.done
		o.outcome = randhistory.OneOf(r, history.Ok, history.Ok, history.Ok, history.Fail, history.Info, "")
		if o.outcome == "" && slices.Contains(owner[k+1:], p) {
			o.outcome = history.Info // only a process's last operation may be left unfinished
		}
		plan = append(plan, o)
	}
	// during is an instant of o, or after its invocation if it never ended.
	during := func(o op) time.Duration {
		span := int((o.done - o.inv) / randhistory.Tick)
		if o.outcome == "" {
			span = 4
		}
		return o.inv + time.Duration(r.IntN(span+1))*randhistory.Tick
	}
	type stored struct {
		at time.Duration
		v  int64
	}
	var log []stored
	for _, o := range plan {
		if !o.add || o.outcome == history.Fail || o.outcome != history.Ok && r.IntN(2) == 0 {
			continue
		}
		for range 1 + r.IntN(4)/3 {
			log = append(log, stored{during(o), o.v})
		}
	}
	slices.SortStableFunc(log, func(a, b stored) int { return cmp.Compare(a.at, b.at) })
	seqMode := r.IntN(4) // 0: no read records sequences, 1: each at even odds, else all

	lines := make([][]history.Op, procs)
	for _, o := range plan {
		entry := func(at time.Duration, t history.Type, f string, v setop.Value) history.Op {
			return history.Op{Time: at, Type: t, Process: o.proc, F: f, Value: history.MustValue(v)}
		}
		node := fmt.Sprintf("n%d", 1+r.IntN(3))
		if o.add {
			lines[o.proc] = append(lines[o.proc], entry(o.inv, history.Invoke, setop.FAdd, setop.Value{Element: &o.v}))
			if o.outcome != "" {
				lines[o.proc] = append(lines[o.proc], entry(o.done, o.outcome, setop.FAdd, setop.Value{Element: &o.v, Node: node}))
			}
			continue
		}
		lines[o.proc] = append(lines[o.proc], entry(o.inv, history.Invoke, setop.FRead, setop.Value{}))
		switch o.outcome {
		case history.Ok:
			moment := during(o)
			var vs []int64
			var seqs []uint64
			for _, m := range log {
				if m.at <= moment {
					vs = append(vs, m.v)
					seqs = append(seqs, uint64(len(seqs)+1))
				}
			}
			if r.IntN(3) == 0 {
				vs, seqs = spoil(r, vs, seqs)
			}
			if seqMode == 0 || seqMode == 1 && r.IntN(2) == 0 {
				seqs = nil
			}
			lines[o.proc] = append(lines[o.proc], entry(o.done, history.Ok, setop.FRead, setop.Value{Read: vs, Seqs: seqs, Node: node}))
		case history.Fail, history.Info:
			lines[o.proc] = append(lines[o.proc], entry(o.done, o.outcome, setop.FRead, setop.Value{Node: node}))
		}
	}
	return randhistory.Interleave(r, lines)
}

// spoil changes a read of the log, its values vs at sequences seqs, in one
// of the ways a faulty stream might, and returns it.
func spoil(r randhistory.Rand, vs []int64, seqs []uint64) ([]int64, []uint64) {
	n := len(vs)
	switch r.IntN(9) {
	case 0: // cut short
		k := r.IntN(n + 1)
		return vs[:k], seqs[:k]
	case 1: // the stream gone
		return []int64{}, []uint64{}
	case 2: // a message dropped, the others at their sequences
		if n > 0 {
			i := r.IntN(n)
			return slices.Delete(vs, i, i+1), slices.Delete(seqs, i, i+1)
		}
	case 3: // a message changed
		if n > 0 {
			vs[r.IntN(n)] = int64(r.IntN(5))
		}
	case 4: // two messages swapped
		if n > 1 {
			i := r.IntN(n - 1)
			vs[i], vs[i+1] = vs[i+1], vs[i]
		}
	case 5: // a message past the last
		return append(vs, int64(r.IntN(5))), append(seqs, uint64(n+1))
	case 6: // the messages from one on a sequence later
		if n > 0 {
			for i := r.IntN(n); i < n; i++ {
				seqs[i]++
			}
		}
	case 7: // two sequences swapped
		if n > 1 {
			i := r.IntN(n - 1)
			seqs[i], seqs[i+1] = seqs[i+1], seqs[i]
		}
	case 8: // a message returned twice at its sequence
		if n > 0 {
			i := r.IntN(n)
			return slices.Insert(vs, i, vs[i]), slices.Insert(seqs, i, seqs[i])
		}
	}
	return vs, seqs
}
