// Package stream is the stream-order checker: the final reads of a log
// read whole, which must each be the one log as it was at some moment.
package stream

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

func init() { analysis.Register(OrderChecker{}) }

// OrderChecker judges the ok reads of a log read whole (a NATS stream
// read in order). A stream is one log: its messages sit at sequences 1,
// 2, 3... in the order it stored them, and in this workload nothing is
// ever removed (no limits, no deletes). A whole read returns the log as
// it was at some moment between the read's invocation and its
// completion, by ascending sequence. So every read is a prefix of one
// log, and a read invoked after another completed holds at least what
// that one held. Two concurrent reads may end at different sequences.
// What breaks it, each its kind of finding:
//
//   - stream-fork: two reads hold different messages at one sequence:
//     neither is a prefix of the other.
//   - stream-lost-message: a read invoked after another completed ends
//     before a message the other returned (acknowledged or not: it was
//     stored).
//   - stream-skipped-sequence: a read lacks sequences below its last one.
//     A log's sequences are consecutive from 1, so the read's own later
//     message shows they were stored; another read that holds one is
//     named too.
//   - stream-moved-message: a message sits at one sequence in one read
//     and at another in a second read, and neither read holds it where
//     the other does (it was lost at one and stored again, or served
//     from two logs).
//   - stream-unordered-read: a read's sequences do not ascend.
//
// A publish acknowledged with its sequence is a look at the log too: the
// log reached that sequence, with that message, during the publish. Reads
// and other acknowledgments that disagree with one are findings of their
// own kinds (judgeAcks).
//
// A message held at two sequences by every read that reaches both was
// stored twice (the clients never publish one number again): JetStream
// promises at least once, so such duplicates are counted, not anomalies.
// A read recorded without sequences (histories from before they were
// recorded) is taken to hold sequences 1, 2, 3..., as a whole read must:
// values alone cannot tell a skipped sequence from a fork, so a skip shows
// there as a fork, and moved messages are not judged. Messages lost from
// every read, or never published, are the set checker's.
type OrderChecker struct{}

func (OrderChecker) Name() string { return "stream-order" }

// message is one message of a read: its stream sequence and its value.
type message struct {
	seq uint64
	v   int64
}

// read is one ok read of the whole log.
type read struct {
	history.Pair
	// msgs are its messages in the order read; bySeq the same by
	// ascending sequence, the first of any sequence read twice.
	msgs, bySeq []message
	// recorded says the read recorded its sequences; without them msgs
	// are numbered 1, 2, 3...
	recorded bool
	// last is the highest sequence it holds, 0 for none.
	last uint64
	node string
	// where lists the sequences of each value, built when first asked.
	where map[int64][]uint64
}

func newRead(p history.Pair, v setop.Value) (*read, error) {
	if len(v.Seqs) > 0 && len(v.Seqs) != len(v.Read) {
		return nil, fmt.Errorf("op #%d: a read of %d messages with %d sequences", p.Done.Index, len(v.Read), len(v.Seqs))
	}
	r := &read{Pair: p, recorded: len(v.Seqs) > 0, node: v.Node}
	for i, x := range v.Read {
		seq := uint64(i + 1)
		if r.recorded {
			seq = v.Seqs[i]
		}
		if seq == 0 {
			return nil, fmt.Errorf("op #%d: sequence 0, which no stream has", p.Done.Index)
		}
		r.msgs = append(r.msgs, message{seq, x})
		r.last = max(r.last, seq)
	}
	r.bySeq = slices.Clone(r.msgs)
	slices.SortStableFunc(r.bySeq, func(a, b message) int { return cmp.Compare(a.seq, b.seq) })
	r.bySeq = slices.CompactFunc(r.bySeq, func(a, b message) bool { return a.seq == b.seq })
	return r, nil
}

// from is the position in r.bySeq of the first message at seq or after.
func (r *read) from(seq uint64) int {
	i, _ := slices.BinarySearchFunc(r.bySeq, seq, func(m message, s uint64) int { return cmp.Compare(m.seq, s) })
	return i
}

// at is the value r holds at seq, if any.
func (r *read) at(seq uint64) (int64, bool) {
	if i := r.from(seq); i < len(r.bySeq) && r.bySeq[i].seq == seq {
		return r.bySeq[i].v, true
	}
	return 0, false
}

// sequencesOf lists the sequences at which r holds v.
func (r *read) sequencesOf(v int64) []uint64 {
	if r.where == nil {
		r.where = map[int64][]uint64{}
		for _, m := range r.bySeq {
			r.where[m.v] = append(r.where[m.v], m.seq)
		}
	}
	return r.where[v]
}

func (r *read) String() string {
	from := ""
	if r.node != "" {
		from = " from " + r.node
	}
	return fmt.Sprintf("%s's read%s (#%d, answered at #%d)", history.ProcessName(r.Inv.Process), from, r.Inv.Index, r.Done.Index)
}

func (r *read) ops() []history.Op { return []history.Op{*r.Inv, *r.Done} }

// end says where r ends, in the words of a finding.
func (r *read) end() string {
	if r.last == 0 {
		return "holds nothing"
	}
	return fmt.Sprintf("ends at %s %d", place(r), r.last)
}

// place is how a finding names a place in the log: a sequence when the
// reads recorded theirs, else a position.
func place(rs ...*read) string {
	for _, r := range rs {
		if !r.recorded {
			return "position"
		}
	}
	return "sequence"
}

func (OrderChecker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var bad analysis.ErrCount
	var reads []*read
	var acks []*ack
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return (op.F == setop.FRead || op.F == setop.FAdd) && op.Process >= 0
	}) {
		if p.Done == nil || p.Done.Type != history.Ok {
			continue
		}
		var v setop.Value
		if err := p.Done.Decode(&v); err != nil {
			bad.Add(err)
			continue
		}
		if p.Inv.F == setop.FAdd {
			if v.Element != nil && v.Seq > 0 {
				acks = append(acks, &ack{Pair: p, v: *v.Element, seq: v.Seq, node: v.Node})
			}
			continue
		}
		r, err := newRead(p, v)
		if err != nil {
			bad.Add(err)
			continue
		}
		reads = append(reads, r)
	}
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d reads or acknowledgments could not be read; first: %v", bad.N, bad.First))
	}
	if len(reads) == 0 {
		return analysis.UnknownResult("no final read succeeded: no order to compare")
	}
	duplicates, withSeqs := 0, 0
	var found analysis.FindingList
	for _, r := range reads {
		seen := map[int64]bool{}
		for _, m := range r.msgs {
			if seen[m.v] {
				duplicates++
			}
			seen[m.v] = true
		}
		if r.recorded {
			withSeqs++
		}
		unordered(r, &found)
		skipped(r, reads, &found)
	}
	for i, a := range reads {
		for _, b := range reads[i+1:] {
			compare(a, b, &found)
			lost(a, b, &found)
			lost(b, a, &found)
		}
	}
	judgeAcks(acks, reads, &found)
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"reads": len(reads), "reads_with_sequences": withSeqs, "duplicates": duplicates, "acknowledged_sequences": len(acks)}}
	found.Put(&res)
	if found.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	return res
}

// unordered finds the first sequence r read after one as high or higher.
func unordered(r *read, found *analysis.FindingList) {
	for i := 1; i < len(r.msgs); i++ {
		if prev, m := r.msgs[i-1], r.msgs[i]; m.seq <= prev.seq {
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "stream-unordered-read", Explanation: fmt.Sprintf(
					"%s holds %d at sequence %d after %d at sequence %d: a whole read returns the log by ascending sequence.",
					r, m.v, m.seq, prev.v, prev.seq), Ops: r.ops()}
			})
			return
		}
	}
}

// skipped finds the sequences below r's last that r lacks, and names
// another read that holds one of them, if any.
func skipped(r *read, reads []*read, found *analysis.FindingList) {
	var gaps setop.SeqRanges
	next := uint64(1)
	for _, m := range r.bySeq {
		gaps.Add(next, m.seq-1)
		next = m.seq + 1
	}
	if len(gaps) == 0 {
		return
	}
	found.Add(func() analysis.Finding {
		f := analysis.Finding{Kind: "stream-skipped-sequence", Explanation: fmt.Sprintf(
			"%s lacks sequences %s (%d in all) below its last, %d. A stream's sequences are consecutive and nothing is deleted here, so they were stored.",
			r, gaps, gaps.Count(), r.last), Ops: r.ops()}
		if o, m, ok := holderOf(gaps, r, reads); ok {
			f.Explanation += fmt.Sprintf(" %s holds %d at sequence %d.", o, m.v, m.seq)
			f.Ops = append(f.Ops, o.ops()...)
		}
		return f
	})
}

// holderOf finds the first read but r that holds a message in gaps.
func holderOf(gaps setop.SeqRanges, r *read, reads []*read) (*read, message, bool) {
	for _, o := range reads {
		for _, g := range gaps {
			if i := o.from(g[0]); o != r && i < len(o.bySeq) && o.bySeq[i].seq <= g[1] {
				return o, o.bySeq[i], true
			}
		}
	}
	return nil, message{}, false
}

// compare finds where a and b, read by the same log, would hold the same
// message: the first sequence where they hold different ones (a fork),
// and the first message held at a sequence by one and elsewhere by the
// other, and not at the first (a moved message, judged only when both
// recorded their sequences).
func compare(a, b *read, found *analysis.FindingList) {
	forked, moved := false, false
	judgeMoved := a.recorded && b.recorded
	upto := min(a.last, b.last)
	for i, j := 0, 0; (i < len(a.bySeq) || j < len(b.bySeq)) && !(forked && (moved || !judgeMoved)); {
		var x, y *message
		if i < len(a.bySeq) {
			x = &a.bySeq[i]
		}
		if j < len(b.bySeq) {
			y = &b.bySeq[j]
		}
		switch {
		case x != nil && (y == nil || x.seq < y.seq):
			i++
			y = nil
		case y != nil && (x == nil || y.seq < x.seq):
			j++
			x = nil
		default:
			i++
			j++
		}
		if (x != nil && x.seq > upto) || (y != nil && y.seq > upto) {
			break // past the shorter read: nothing more to compare
		}
		if x != nil && y != nil && x.v == y.v {
			continue
		}
		if x != nil && y != nil && !forked {
			forked = true
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "stream-fork", Explanation: fmt.Sprintf(
					"%s holds %d at %s %d; %s holds %d there: two logs, neither read a prefix of the other.",
					a, x.v, place(a, b), x.seq, b, y.v), Ops: append(a.ops(), b.ops()...)}
			})
		}
		if judgeMoved && !moved {
			moved = movedFrom(a, b, x, found) || movedFrom(b, a, y, found)
		}
	}
}

// movedFrom says whether the message m, which from holds and other does
// not hold at m's sequence, sits in other at a sequence where from does
// not hold it, and if so adds the finding.
func movedFrom(from, other *read, m *message, found *analysis.FindingList) bool {
	if m == nil {
		return false
	}
	for _, t := range other.sequencesOf(m.v) {
		if v, ok := from.at(t); ok && v == m.v {
			continue
		}
		found.Add(func() analysis.Finding {
			return analysis.Finding{Kind: "stream-moved-message", Explanation: fmt.Sprintf(
				"%s holds %d at sequence %d; %s holds it at sequence %d and not at %d: a message does not move in a log.",
				from, m.v, m.seq, other, t, m.seq), Ops: append(from.ops(), other.ops()...)}
		})
		return true
	}
	return false
}

// lost finds messages that a, completed before b was invoked, held past
// b's last sequence: the log shrank between them.
func lost(a, b *read, found *analysis.FindingList) {
	if !(a.Done.Time < b.Inv.Time) || a.last <= b.last {
		return
	}
	i := a.from(b.last + 1)
	m := a.bySeq[i]
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: "stream-lost-message", Explanation: fmt.Sprintf(
			"%s holds %d messages past %s %d, the first %d at %d; %s, invoked at %s, after the first was answered at %s, %s: the log lost messages it had stored.",
			a, len(a.bySeq)-i, place(a, b), b.last, m.v, m.seq, b, analysis.Secs(b.Inv.Time), analysis.Secs(a.Done.Time), b.end()),
			Ops: append(a.ops(), b.ops()...)}
	})
}
