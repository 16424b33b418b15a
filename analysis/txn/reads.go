package txn

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
)

// checkReads looks at every read of a committed transaction for the
// anomalies one read shows alone, as Elle's g1a-cases, g1b-cases and
// duplicates do, and for garbage: a value nobody wrote (the paper's
// garbage reads).
func (o *observation) checkReads(found *findings) {
	seenIn := make([]int32, len(o.versions)) // the read (mop index + 1) that last saw a version
	for t := range o.txns {
		if o.txns[t].status != committed {
			continue
		}
		for i, m := range o.txnMops(int32(t)) {
			if m.kind != readMop {
				continue
			}
			mopID := o.txns[t].mops.from + int32(i) + 1
			var dups []int32
			for _, v := range o.seen(m) {
				if seenIn[v] == mopID && !slices.Contains(dups, v) {
					dups = append(dups, v)
				}
				seenIn[v] = mopID
				o.checkElement(found, int32(t), m, v)
			}
			if len(dups) > 0 {
				found.add("duplicate-elements", func() analysis.Finding {
					return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s = %s, which holds %s more than once: each value is appended once.",
						o.name(int32(t)), o.keys[m.key], o.showRead(m), o.showVersions(dups, true)), Ops: o.ops(int32(t))}
				})
			}
			// Only a read's last value is the state it saw: earlier ones of a
			// list are states other appends went past.
			if m.seen.len() > 0 {
				v := m.value
				if w := o.versions[v].writer; o.versions[v].intermediate && w != int32(t) {
					found.add("G1b", func() analysis.Finding {
						return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s = %s, ending with %s, which %s wrote and then overwrote within itself (intermediate read).",
							o.name(int32(t)), o.keys[m.key], o.showRead(m), o.text[v], o.name(w)), Ops: o.ops(int32(t), w)}
					})
				}
			}
		}
	}
}

// checkElement judges one value v read by committed transaction t.
func (o *observation) checkElement(found *findings, t int32, m mop, v int32) {
	ver := o.versions[v]
	switch {
	case ver.writer < 0:
		found.add(garbageRead, func() analysis.Finding {
			return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s = %s, but no transaction wrote %s to that key.",
				o.name(t), o.keys[m.key], o.showRead(m), o.text[v]), Ops: o.ops(t)}
		})
	case o.txns[ver.writer].status == aborted:
		found.add("G1a", func() analysis.Finding {
			return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s = %s, holding %s, which only %s wrote, and that transaction failed (aborted read).",
				o.name(t), o.keys[m.key], o.showRead(m), o.text[v], o.name(ver.writer)), Ops: o.ops(t, ver.writer)}
		})
	}
}

// keyState is what a transaction's own micro-ops say a key holds: exactly
// base followed by tail when known, else something ending with tail.
type keyState struct {
	key   int32
	known bool
	base  span
	tail  []int32
}

// checkInternal looks in each committed transaction for a read that
// disagrees with the transaction's own earlier reads and writes (Elle's
// internal), and for a read of a value the transaction itself writes only
// later (Elle's future-read).
func (o *observation) checkInternal(found *findings) {
	readBy := make([]int32, len(o.versions)) // the transaction (+1) whose read saw a version
	var states []keyState
	for t := range o.txns {
		if o.txns[t].status != committed {
			continue
		}
		states = states[:0]
		internalDone, futureDone := false, false
		for _, m := range o.txnMops(int32(t)) {
			i := slices.IndexFunc(states, func(s keyState) bool { return s.key == m.key })
			if i < 0 {
				states, i = addState(states, m.key), len(states)
			}
			s := &states[i]
			if m.kind == writeMop {
				if readBy[m.value] == int32(t)+1 && !futureDone {
					futureDone = true
					found.add("future-read", func() analysis.Finding {
						return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s holding %s before writing that value itself.",
							o.name(int32(t)), o.keys[m.key], o.text[m.value]), Ops: o.ops(int32(t))}
					})
				}
				if !o.lists {
					s.known, s.base, s.tail = true, span{}, s.tail[:0]
				}
				s.tail = append(s.tail, m.value)
				continue
			}
			seen := o.seen(m)
			for _, v := range seen {
				readBy[v] = int32(t) + 1
			}
			if !internalDone && !s.agrees(o, seen) {
				internalDone = true
				expected := s.expected(o)
				found.add("internal", func() analysis.Finding {
					return analysis.Finding{Explanation: fmt.Sprintf("%s read key %s = %s, but its own earlier reads and writes of that key say it held %s.",
						o.name(int32(t)), o.keys[m.key], o.showRead(m), expected), Ops: o.ops(int32(t))}
				})
			}
			s.known, s.base, s.tail = true, m.seen, s.tail[:0]
		}
	}
}

// addState appends a state for key, nothing known, reusing the slot's tail.
func addState(states []keyState, key int32) []keyState {
	if len(states) == cap(states) {
		return append(states, keyState{key: key})
	}
	states = states[:len(states)+1]
	s := &states[len(states)-1]
	s.key, s.known, s.base, s.tail = key, false, span{}, s.tail[:0]
	return states
}

// agrees says whether a read of seen fits the state.
func (s *keyState) agrees(o *observation, seen []int32) bool {
	if !s.known {
		return len(seen) >= len(s.tail) && slices.Equal(seen[len(seen)-len(s.tail):], s.tail)
	}
	base := o.elems[s.base.from:s.base.to]
	return len(seen) == len(base)+len(s.tail) && slices.Equal(seen[:len(base)], base) && slices.Equal(seen[len(base):], s.tail)
}

// expected renders the state: [1 2 3], or [… 3] with an unknown start.
func (s *keyState) expected(o *observation) string {
	if !s.known {
		shown := o.showVersions(s.tail, true)
		return "[… " + strings.TrimPrefix(shown, "[")
	}
	all := append(slices.Clone(o.elems[s.base.from:s.base.to]), s.tail...)
	return o.showVersions(all, o.lists)
}

// checkLostUpdates finds committed transactions that read the same version
// of a key and then both wrote that key, as Elle's lost-update-cases: one
// of the two writes was made without seeing the other.
func (o *observation) checkLostUpdates(found *findings) {
	type readThenWrite struct{ version, txn int32 }
	var cases []readThenWrite
	for t := range o.txns {
		if o.txns[t].status != committed {
			continue
		}
		ms := o.txnMops(int32(t))
		for i, m := range ms {
			if m.kind != readMop || !firstOnKey(ms, i) {
				continue
			}
			if slices.ContainsFunc(ms[i+1:], func(w mop) bool { return w.kind == writeMop && w.key == m.key }) {
				cases = append(cases, readThenWrite{m.value, int32(t)})
			}
		}
	}
	slices.SortFunc(cases, func(a, b readThenWrite) int {
		return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(a.txn, b.txn))
	})
	for i := 0; i < len(cases); {
		j := i + 1
		for j < len(cases) && cases[j].version == cases[i].version {
			j++
		}
		if j-i > 1 {
			v, ts := cases[i].version, make([]int32, 0, j-i)
			for _, c := range cases[i:j] {
				ts = append(ts, c.txn)
			}
			found.add("lost-update", func() analysis.Finding {
				names := make([]string, len(ts))
				for k, t := range ts {
					names[k] = o.name(t)
				}
				return analysis.Finding{Explanation: fmt.Sprintf("%s all read key %s at %s and then wrote it, each without seeing the others' writes.",
					strings.Join(names, ", "), o.keys[o.versions[v].key], o.show(v)), Ops: o.ops(ts...)}
			})
		}
		i = j
	}
}
