package txn

import (
	"cmp"
	"slices"
)

// rwRule is what a cycle class demands of its anti-dependency (rw) edges.
type rwRule uint8

const (
	noRW          rwRule = iota
	oneRW                // exactly one
	nonadjacentRW        // two or more, no two in a row (around the cycle)
	severalRW            // two or more
)

// cycleClass is one of Elle's cycle anomalies, as a search specification:
// the relations its edges may be explained by, and what it requires.
type cycleClass struct {
	name    string
	allowed rel
	rws     rwRule
	needWR  bool
	// need is a relation at least one edge must be explained by (process or
	// realtime, for the variants), 0 for none.
	need rel
}

// baseClasses are Elle's item cycle anomalies (histories here have no
// predicates, so G-single is G-single-item, and so on).
var baseClasses = []cycleClass{
	{name: "G0", allowed: ww},
	{name: "G1c", allowed: ww | wr, needWR: true},
	{name: "G-single-item", allowed: ww | wr | rw, rws: oneRW},
	{name: "G-nonadjacent-item", allowed: ww | wr | rw, rws: nonadjacentRW},
	{name: "G2-item", allowed: ww | wr | rw, rws: severalRW},
}

// cycleClasses are the base classes and their -process and -realtime
// variants (which need a process or real-time edge; a real-time cycle may
// also use process edges, since each process runs one transaction at a
// time), in Elle's search order: shallowest anomaly first.
var cycleClasses = func() []cycleClass {
	var cs []cycleClass
	for _, c := range baseClasses {
		p, r := c, c
		p.name, p.allowed, p.need = c.name+"-process", c.allowed|process, process
		r.name, r.allowed, r.need = c.name+"-realtime", c.allowed|process|realtime, realtime
		cs = append(cs, c, p, r)
	}
	slices.SortStableFunc(cs, func(a, b cycleClass) int {
		return cmp.Or(cmp.Compare(anomalyDepth(a.name), anomalyDepth(b.name)), cmp.Compare(a.name, b.name))
	})
	return cs
}()

// classify names a cycle by the relations explaining its edges, as Elle's
// cycle explainer does: by its rw edges (one: G-single-item; several, two
// in a row: G2-item; none in a row: G-nonadjacent-item), else G1c with a
// wr edge, else G0; then -realtime if an edge is real-time, else -process
// if one is process order.
func classify(steps []rel) string {
	var count [8]int
	adjacentRW := false
	for i, r := range steps {
		count[bitIndex(r)]++
		if r == rw && steps[(i+1)%len(steps)] == rw {
			adjacentRW = true
		}
	}
	var name string
	switch rws := count[bitIndex(rw)]; {
	case rws == 1:
		name = "G-single-item"
	case rws > 1 && adjacentRW:
		name = "G2-item"
	case rws > 1:
		name = "G-nonadjacent-item"
	case count[bitIndex(wr)] > 0:
		name = "G1c"
	case count[bitIndex(ww)] > 0:
		name = "G0"
	default:
		return "" // order edges alone never close a cycle
	}
	switch {
	case count[bitIndex(realtime)] > 0:
		name += "-realtime"
	case count[bitIndex(process)] > 0:
		name += "-process"
	}
	return name
}

// bitIndex is the position of a single relation's bit.
func bitIndex(r rel) int {
	i := 0
	for r > 1 {
		r >>= 1
		i++
	}
	return i
}

// A search state is what a path so far means for the class: packed bits,
// of which each class uses only those it needs.
const (
	rwCountMask  = 3 // rw edges taken: 0, 1, or 2 for two or more
	lastRWBit    = 4 // the last edge taken was rw
	firstRWBit   = 8 // the first edge was rw
	haveWRBit    = 16
	haveNeedBit  = 32
	stateSpace   = 64
	invalidState = 0xff
)

// stateBits are the state bits class c tracks.
func (c cycleClass) stateBits() uint8 {
	var bits uint8
	if c.rws != noRW {
		bits |= rwCountMask
	}
	if c.rws == nonadjacentRW {
		bits |= lastRWBit | firstRWBit
	}
	if c.needWR {
		bits |= haveWRBit
	}
	if c.need != 0 {
		bits |= haveNeedBit
	}
	return bits
}

// step is the state after taking an edge explained by r from state s
// (first: the path's first edge), or invalidState if the class forbids it.
func (c cycleClass) step(s uint8, r rel, first bool) uint8 {
	if r&c.allowed == 0 {
		return invalidState
	}
	if r == rw {
		n := s & rwCountMask
		switch {
		case c.rws == oneRW && n >= 1, c.rws == nonadjacentRW && s&lastRWBit != 0:
			return invalidState
		}
		s = s&^rwCountMask | min(n+1, 2)
		s |= lastRWBit
		if first {
			s |= firstRWBit
		}
	} else {
		s &^= lastRWBit
	}
	if r == wr {
		s |= haveWRBit
	}
	if r&c.need != 0 {
		s |= haveNeedBit
	}
	return s & c.stateBits()
}

// accepts says whether a path ending in state s closes a cycle of the class.
func (c cycleClass) accepts(s uint8) bool {
	n := s & rwCountMask
	switch c.rws {
	case oneRW:
		if n != 1 {
			return false
		}
	case nonadjacentRW:
		if n < 2 || s&lastRWBit != 0 && s&firstRWBit != 0 {
			return false
		}
	case severalRW:
		if n < 2 {
			return false
		}
	}
	return (!c.needWR || s&haveWRBit != 0) && (c.need == 0 || s&haveNeedBit != 0)
}

// key is the relation every cycle of the class has an edge of, rarest
// first: searches start only from the sources of such edges.
func (c cycleClass) key() rel {
	switch {
	case c.rws != noRW:
		return rw
	case c.needWR:
		return wr
	case c.need != 0:
		return c.need
	}
	return ww
}

// minLength is the fewest edges a cycle of the class can have.
func (c cycleClass) minLength() int {
	if c.rws == nonadjacentRW {
		return 4
	}
	return 2
}
