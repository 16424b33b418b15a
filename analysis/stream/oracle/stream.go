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
// held before), the acknowledgments that said a sequence, and the
// invocations (their indices, in history order) of the reads that no log
// could have returned whatever the others: their sequences are not 1, 2,
// 3.... Beside the verdict, it counts each way the guarantee breaks (a
// read may show several, and the verdict needs none of them). Pairs of
// reads:
//   - Forks: the two hold different values at one sequence;
//   - Lost: one completed before the other was invoked, and holds a
//     sequence past all of the other's;
//   - Moved: both recorded their sequences, and a value sits in each at a
//     sequence where the other does not hold it.
//
// Reads and acknowledgments:
//   - AckMismatch: reads that hold another value at a sequence some
//     publish was acknowledged at, and sequences acknowledged for two
//     values;
//   - AckLost: reads invoked after some publish was acknowledged, that
//     hold no sequence as high as its;
//   - AckFuture: reads that completed before some publish was invoked, and
//     hold a sequence as high as the one it was acknowledged at;
//   - AckOrder: acknowledgments of publishes invoked after another
//     publish was acknowledged at a higher sequence.
//
// A read holds, at a sequence, the first message it returned there.
type StreamResult struct {
	Verdict                                   string
	Reads, Duplicates, Acks                   int
	Impossible                                []int
	Forks, Lost, Moved                        int
	AckMismatch, AckLost, AckFuture, AckOrder int
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

// streamAck is a publish acknowledged with the sequence of its message.
type streamAck struct {
	inv, done *history.Op
	v         int64
	seq       uint64
}

// A look is what a read or an acknowledgment saw of the log, at a moment
// during [inv, done]: where the log had grown to (its length, and, for
// an acknowledgment, 0 for the instant its sequence was appended, before
// any read of that length; 1 for a read), and the values at sequences.
type look struct {
	inv, done time.Duration
	grown     [2]uint64
	at        map[uint64]int64
}

// CheckStream judges a stream history from the guarantee: the reads and
// acknowledgments all agree on the value at each sequence, and some order
// of their moments that real time allows sees the log never shrink (every
// order is tried). "Before" is strictly earlier in recorded time. The
// history must be well formed: it is an error if a value does not decode,
// or a read has sequences but not one for each value.
func CheckStream(ops []history.Op) (StreamResult, error) {
	reads, acks, err := parse(ops)
	if err != nil {
		return StreamResult{}, err
	}
	res := StreamResult{Reads: len(reads), Acks: len(acks), Verdict: "unknown"}
	if len(reads) == 0 {
		return res, nil
	}
	var looks []look
	for _, r := range reads {
		for i, v := range r.vs {
			if slices.Contains(r.vs[:i], v) {
				res.Duplicates++
			}
		}
		if !isLogState(r) {
			res.Impossible = append(res.Impossible, r.inv.Index)
		}
		l := look{inv: r.inv.Time, done: r.done.Time, grown: [2]uint64{uint64(len(r.vs)), 1}, at: map[uint64]int64{}}
		for i, v := range r.vs {
			l.at[uint64(i+1)] = v
		}
		looks = append(looks, l)
	}
	for _, a := range acks {
		looks = append(looks, look{inv: a.inv.Time, done: a.done.Time, grown: [2]uint64{a.seq, 0}, at: map[uint64]int64{a.seq: a.v}})
	}
	res.Verdict = "invalid"
	if len(res.Impossible) == 0 && oneLog(looks) && explained(looks, nil, make([]bool, len(looks))) {
		res.Verdict = "valid"
	}
	countAcks(&res, reads, acks)
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
func shrank(a, b streamRead) bool { return a.done.Time < b.inv.Time && lastSeq(a) > lastSeq(b) }

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

// oneLog says whether the looks agree on the value at every sequence.
func oneLog(looks []look) bool {
	seen := map[uint64]int64{}
	for _, l := range looks {
		for s, v := range l.at {
			if w, ok := seen[s]; ok && w != v {
				return false
			}
			seen[s] = v
		}
	}
	return true
}

// explained says whether the looks not yet placed can follow the order
// placed so far: one at a time, each only once every look that completed
// before it was invoked is placed, and each seeing the log grown at least
// as far as the one before it. It tries every such order.
func explained(looks []look, order []int, placed []bool) bool {
	if len(order) == len(looks) {
		return true
	}
	for i, l := range looks {
		if placed[i] || !mayComeNext(looks, placed, i) {
			continue
		}
		if len(order) > 0 && cmpGrown(looks[order[len(order)-1]].grown, l.grown) > 0 {
			continue
		}
		placed[i] = true
		if explained(looks, append(order, i), placed) {
			return true
		}
		placed[i] = false
	}
	return false
}

func cmpGrown(a, b [2]uint64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }

// mayComeNext says whether no look left to place completed before look i
// was invoked.
func mayComeNext(looks []look, placed []bool, i int) bool {
	for j, o := range looks {
		if j != i && !placed[j] && o.done < looks[i].inv {
			return false
		}
	}
	return true
}

// countAcks counts, into res, each way the acknowledgments disagree with
// the reads or with each other.
func countAcks(res *StreamResult, reads []streamRead, acks []streamAck) {
	for _, r := range reads {
		last := lastSeq(r)
		if slices.ContainsFunc(acks, func(a streamAck) bool { v, ok := holds(r, a.seq); return ok && v != a.v }) {
			res.AckMismatch++
		}
		if slices.ContainsFunc(acks, func(a streamAck) bool { return a.done.Time < r.inv.Time && a.seq > last }) {
			res.AckLost++
		}
		if slices.ContainsFunc(acks, func(a streamAck) bool { return r.done.Time < a.inv.Time && a.seq <= last }) {
			res.AckFuture++
		}
	}
	var split []uint64 // sequences acknowledged for two values
	for _, a := range acks {
		if !slices.Contains(split, a.seq) && slices.ContainsFunc(acks, func(b streamAck) bool { return b.seq == a.seq && b.v != a.v }) {
			split = append(split, a.seq)
		}
		if slices.ContainsFunc(acks, func(b streamAck) bool { return b.done.Time < a.inv.Time && b.seq > a.seq }) {
			res.AckOrder++
		}
	}
	res.AckMismatch += len(split)
}

// lastSeq is the highest sequence r holds, 0 for none.
func lastSeq(r streamRead) uint64 {
	last := uint64(0)
	for _, s := range r.seqs {
		last = max(last, s)
	}
	return last
}

// parse lists the ok reads and the acknowledgments that said a sequence,
// of clients (process ≥ 0), in history order. The completion of an
// invocation is the process's next add or read entry, if that is not
// another invocation.
func parse(ops []history.Op) ([]streamRead, []streamAck, error) {
	var reads []streamRead
	var acks []streamAck
	for i := range ops {
		inv := &ops[i]
		if inv.Process < 0 || inv.Type != history.Invoke || inv.F != setop.FRead && inv.F != setop.FAdd {
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
			return nil, nil, err
		}
		if inv.F == setop.FAdd {
			if v.Element != nil && v.Seq > 0 {
				acks = append(acks, streamAck{inv: inv, done: done, v: *v.Element, seq: v.Seq})
			}
			continue
		}
		r := streamRead{inv: inv, done: done, vs: v.Read, seqs: v.Seqs, recorded: len(v.Seqs) > 0}
		switch {
		case len(v.Seqs) == 0:
			r.seqs = nil
			for k := range v.Read {
				r.seqs = append(r.seqs, uint64(k+1))
			}
		case len(v.Seqs) != len(v.Read):
			return nil, nil, fmt.Errorf("op #%d: %d values, %d sequences", done.Index, len(v.Read), len(v.Seqs))
		}
		reads = append(reads, r)
	}
	return reads, acks, nil
}

// RandomStreamHistory draws a small stream history: 1–4 client processes,
// 1–10 operations, whole reads of a log and (two in five) publishes (adds)
// that grow it, of a few values, repeated at times, each ending ok, fail,
// info or never (a process's last operation only). Each publish that did not
// fail may be stored (an acknowledged one is), once or twice, at an
// instant during it; each ok read returns the log as it was at an instant
// during the read, and a third of them are then spoiled: cut short,
// emptied, a message dropped, changed, swapped, added or returned twice,
// a sequence moved or two swapped. An acknowledgment gives the sequence of
// the publish's last copy, a sixth of them any sequence instead. A
// history's reads and acknowledgments all record sequences, none do, or
// each at even odds. Times are on a coarse clock, so that operations
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
		at   time.Duration
		v    int64
		from int // the publish's place in plan
	}
	var log []stored
	for k, o := range plan {
		if !o.add || o.outcome == history.Fail || o.outcome != history.Ok && r.IntN(2) == 0 {
			continue
		}
		for range 1 + r.IntN(4)/3 {
			log = append(log, stored{during(o), o.v, k})
		}
	}
	slices.SortStableFunc(log, func(a, b stored) int { return cmp.Compare(a.at, b.at) })
	seqMode := r.IntN(4) // 0: nothing records sequences, 1: each read and acknowledgment at even odds, else all
	recorded := func() bool { return seqMode > 1 || seqMode == 1 && r.IntN(2) == 0 }

	lines := make([][]history.Op, procs)
	for k, o := range plan {
		entry := func(at time.Duration, t history.Type, f string, v setop.Value) history.Op {
			return history.Op{Time: at, Type: t, Process: o.proc, F: f, Value: history.MustValue(v)}
		}
		node := fmt.Sprintf("n%d", 1+r.IntN(3))
		if o.add {
			lines[o.proc] = append(lines[o.proc], entry(o.inv, history.Invoke, setop.FAdd, setop.Value{Element: &o.v}))
			done := setop.Value{Element: &o.v, Node: node}
			if o.outcome == history.Ok && recorded() {
				// The sequence of its last copy, or, spoiled, any.
				for i, m := range log {
					if m.from == k {
						done.Seq = uint64(i + 1)
					}
				}
				if r.IntN(6) == 0 {
					done.Seq = uint64(1 + r.IntN(len(log)+1))
				}
			}
			if o.outcome != "" {
				lines[o.proc] = append(lines[o.proc], entry(o.done, o.outcome, setop.FAdd, done))
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
			if !recorded() {
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
