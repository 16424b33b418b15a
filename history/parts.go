package history

import "slices"

// PartOf names the part of a history an operation belongs to, by its
// invocation; "" puts it in no part. A checker whose parts are independent
// (a register's key) can then judge a history too long to hold in memory
// a few parts at a time: Parts finds where each part ends, and its
// Batcher hands the parts over whole.
type PartOf func(inv *Op) string

// partTracker gives every entry its operation's part: an invocation's
// by PartOf, a completion the part of its process's invocation in flight
// (pairing as Pairs does), and "" to a completion without one.
type partTracker struct {
	partOf  PartOf
	pending map[int]string // process -> part of its operation in flight
}

func (t *partTracker) part(op *Op) string {
	if op.Type == Invoke {
		p := t.partOf(op)
		t.pending[op.Process] = p
		return p
	}
	p := t.pending[op.Process]
	delete(t.pending, op.Process)
	return p
}

// Parts is the first of two passes over a history: fed every entry in
// file order, it learns the last entry of each part.
type Parts struct {
	t    partTracker
	last map[string]int // part -> Index of its last entry
}

// NewParts starts a first pass that divides a history by partOf.
func NewParts(partOf PartOf) *Parts {
	return &Parts{t: partTracker{partOf: partOf, pending: map[int]string{}}, last: map[string]int{}}
}

// See takes the next entry of the first pass.
func (ps *Parts) See(op *Op) {
	if p := ps.t.part(op); p != "" {
		ps.last[p] = op.Index
	}
}

// Batcher is the second pass: fed the same entries again, in the same
// order, it hands them to flush in batches of about size entries (more
// when one part alone is larger). A batch holds whole parts, and every
// entry of an operation in no part together with its operation's other
// entry; its entries are in file order. Every entry is in one batch.
// Memory holds the parts begun and not yet ended, and one batch.
type Batcher struct {
	last  map[string]int
	t     partTracker
	open  map[string][]Op // parts begun, not yet ended
	loose map[int]Op      // process -> its invocation in no part, in flight
	batch []Op
	size  int
	flush func([]Op) error
	err   error
}

// Batcher starts the second pass; ps must have seen every entry.
func (ps *Parts) Batcher(size int, flush func([]Op) error) *Batcher {
	return &Batcher{last: ps.last, t: partTracker{partOf: ps.t.partOf, pending: map[int]string{}},
		open: map[string][]Op{}, loose: map[int]Op{}, size: size, flush: flush}
}

// Add takes the next entry of the second pass. It returns flush's error,
// after which the Batcher takes nothing more.
func (b *Batcher) Add(op Op) error {
	if b.err != nil {
		return b.err
	}
	if op.Type == Invoke { // the process's operation before, if in no part, never completed
		b.takeLoose(op.Process)
	}
	switch p := b.t.part(&op); {
	case p != "":
		b.open[p] = append(b.open[p], op)
		if b.last[p] == op.Index {
			b.batch = append(b.batch, b.open[p]...)
			delete(b.open, p)
		}
	case op.Type == Invoke:
		b.loose[op.Process] = op
	default:
		b.takeLoose(op.Process)
		b.batch = append(b.batch, op)
	}
	if len(b.batch) >= b.size {
		b.send()
	}
	return b.err
}

// takeLoose moves the process's invocation in no part into the batch.
func (b *Batcher) takeLoose(process int) {
	if inv, ok := b.loose[process]; ok {
		b.batch = append(b.batch, inv)
		delete(b.loose, process)
	}
}

// Close hands over what is left: the last batch, with the operations
// never completed.
func (b *Batcher) Close() error {
	for _, ops := range b.open { // only if the passes differed
		b.batch = append(b.batch, ops...)
	}
	for _, inv := range b.loose {
		b.batch = append(b.batch, inv)
	}
	b.open, b.loose = nil, nil
	if len(b.batch) > 0 {
		b.send()
	}
	return b.err
}

func (b *Batcher) send() {
	slices.SortFunc(b.batch, func(x, y Op) int { return x.Index - y.Index })
	if b.err == nil {
		b.err = b.flush(b.batch)
	}
	b.batch = nil
}
