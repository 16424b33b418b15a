// The search for a linearization of one part: porcupine's algorithm
// (checker.go's checkSingle: Lowe's depth-first search over the calls
// that can come next, with a cache of the linearized sets and states
// already explored), which decides every key and gives an illegal key's
// witness its longest partial linearization. Porcupine itself runs only to
// draw an illegal key, since its visualization needs porcupine's
// LinearizationInfo: asked for it, porcupine records the partial
// linearizations at every backtrack, and allocates a set per cache entry,
// which made chaos's checks of porcupine's etcd logs a third slower than
// porcupine deciding them alone.

package linear

import (
	"cmp"
	"context"
	"slices"

	"github.com/anishathalye/porcupine"
)

// search looks for a linearization of ops under model until ctx ends
// (then Unknown). longest is the positions in ops of a longest partial
// linearization it found, in order (all of ops when Ok): the first of
// that length, as porcupine's verbose check finds it.
func search(ctx context.Context, model porcupine.Model, ops []porcupine.Operation) (res porcupine.CheckResult, longest []int) {
	l := newEntryList(ops)
	step := model.Step
	if step == nil {
		step = func(s, i, o any) (bool, any) { return model.StepContext(ctx, s, i, o) }
	}
	states := newStateTable(model)
	c := &cache{index: newIndex()}
	lin := newLinearized(len(ops))
	type frame struct{ call, state int32 } // a call's node, and the state before it
	var calls []frame
	var path []int // the operations of calls
	var best bestPrefix
	state := states.id(model.Init())
	e := l.nodes[0].next
	for untilCheck := 0; l.nodes[0].next >= 0; untilCheck-- {
		if untilCheck <= 0 { // as seldom as costs nothing
			if ctx.Err() != nil {
				return porcupine.Unknown, best.ids
			}
			untilCheck = 1024
		}
		nd := &l.nodes[e]
		if nd.ret < 0 { // a return: every call that can come next was tried
			if len(calls) == 0 {
				return porcupine.Illegal, best.ids
			}
			top := calls[len(calls)-1]
			calls, path = calls[:len(calls)-1], path[:len(path)-1]
			best.pop(len(path))
			lin.flip(l.nodes[top.call].op)
			state = top.state
			l.unlift(top.call)
			e = l.nodes[top.call].next
			continue
		}
		o := &ops[nd.op]
		ok, next := step(states.all[state], o.Input, o.Output)
		if !ok {
			e = nd.next
			continue
		}
		lin.flip(nd.op)
		nextID := states.id(next)
		if !c.add(lin, nextID) {
			lin.flip(nd.op)
			e = nd.next
			continue
		}
		calls, path = append(calls, frame{e, state}), append(path, int(nd.op))
		best.push(path)
		state = nextID
		l.lift(e)
		e = l.nodes[0].next
	}
	return porcupine.Ok, best.ids
}

// entryList is the history as the search walks it: a doubly linked list
// of call and return entries in time order (calls first at equal times),
// after a head at node 0, from which a call is lifted, with its return,
// while it is in the linearization.
type entryList struct{ nodes []entryNode }

type entryNode struct {
	op         int32 // the operation's position in ops
	ret        int32 // a call's return node; -1 for a return
	prev, next int32 // -1 past the ends
}

func newEntryList(ops []porcupine.Operation) *entryList {
	type entry struct {
		time int64
		ret  bool
		op   int32
	}
	es := make([]entry, 0, 2*len(ops))
	for i, o := range ops {
		es = append(es, entry{o.Call, false, int32(i)}, entry{o.Return, true, int32(i)})
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.time, b.time); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(a.ret), boolInt(b.ret))
	})
	nodes := make([]entryNode, len(es)+1)
	nodes[0] = entryNode{op: -1, ret: -1, prev: -1, next: 1}
	retOf := make([]int32, len(ops))
	for i, en := range es {
		n := int32(i + 1)
		nodes[n] = entryNode{op: en.op, ret: -1, prev: n - 1, next: n + 1}
		if en.ret {
			retOf[en.op] = n
		}
	}
	nodes[len(es)].next = -1
	for n := range nodes[1:] {
		if nd := &nodes[n+1]; retOf[nd.op] != int32(n+1) {
			nd.ret = retOf[nd.op]
		}
	}
	return &entryList{nodes}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lift takes call node c and its return out of the list.
func (l *entryList) lift(c int32) {
	l.unlink(c)
	l.unlink(l.nodes[c].ret)
}

func (l *entryList) unlink(n int32) {
	nd := l.nodes[n]
	l.nodes[nd.prev].next = nd.next
	if nd.next >= 0 {
		l.nodes[nd.next].prev = nd.prev
	}
}

// unlift puts back call node c and its return, lifted last.
func (l *entryList) unlift(c int32) {
	l.relink(l.nodes[c].ret)
	l.relink(c)
}

func (l *entryList) relink(n int32) {
	nd := l.nodes[n]
	l.nodes[nd.prev].next = n
	if nd.next >= 0 {
		l.nodes[nd.next].prev = n
	}
}

// linearized is the set of operations in the linearization, with a hash
// kept as it changes (the xor of a random-looking word per member, keys),
// where porcupine hashes every word of the set at each step.
type linearized struct {
	words []uint64
	keys  []uint64
	hash  uint64
}

func newLinearized(n int) *linearized {
	s := &linearized{words: make([]uint64, (n+63)/64), keys: make([]uint64, n)}
	for op := range s.keys {
		s.keys[op] = mix(uint64(op))
	}
	return s
}

// flip adds operation op to the set, or takes it out.
func (s *linearized) flip(op int32) {
	s.words[uint32(op)/64] ^= 1 << (uint32(op) % 64)
	s.hash ^= s.keys[op]
}

// mix is splitmix64's finalizer: distinct inputs give unrelated words.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// stateTable numbers the model's states, equal ones (by its Hash and
// Equal) alike, so that the cache and the search's stack hold numbers:
// nothing for the collector to follow, and states compared as numbers.
type stateTable struct {
	hash  func(any) uint64
	equal func(a, b any) bool
	all   []any
	index index
}

func newStateTable(model porcupine.Model) *stateTable {
	t := &stateTable{hash: model.Hash, equal: model.Equal, index: newIndex()}
	if t.hash == nil { // porcupine's default: every state compared
		t.hash = func(any) uint64 { return 0 }
	}
	if t.equal == nil {
		t.equal = func(a, b any) bool { return a == b } // porcupine's default
	}
	return t
}

// id is the number of state s.
func (t *stateTable) id(s any) int32 {
	h := t.hash(s)
	i := t.index.slot(h)
	for ; t.index.slots[i].entry != 0; i = t.index.next(i) {
		if sl := t.index.slots[i]; sl.hash == h && t.equal(s, t.all[sl.entry-1]) {
			return sl.entry - 1
		}
	}
	t.all = append(t.all, s)
	t.index.put(i, h, len(t.all))
	return int32(len(t.all) - 1)
}

// cache is the set of (linearized set, state) pairs the search has been
// in, in one flat array, where porcupine allocates a set per pair.
type cache struct {
	pairs []uint64 // the state, then the set's words, of each pair in turn
	n     int
	index index
}

// add adds the pair and reports whether it was new.
func (c *cache) add(lin *linearized, state int32) bool {
	h := lin.hash ^ mix(uint64(state))
	w := 1 + len(lin.words)
	i := c.index.slot(h)
	for ; c.index.slots[i].entry != 0; i = c.index.next(i) {
		if sl := c.index.slots[i]; sl.hash == h {
			p := c.pairs[int(sl.entry-1)*w:][:w]
			if p[0] == uint64(state) && slices.Equal(p[1:], lin.words) {
				return false
			}
		}
	}
	c.pairs = append(append(c.pairs, uint64(state)), lin.words...)
	c.n++
	c.index.put(i, h, c.n)
	return true
}

// index finds entries by their hashes, by open addressing: its owner
// keeps the entries and tells which one matches.
type index struct {
	slots []slot // a power of two long
	shift uint   // 64 - log2(len(slots))
	used  int
}

type slot struct {
	hash  uint64
	entry int32 // 1 + the entry's number, 0 if the slot is free
}

func newIndex() index { return index{slots: make([]slot, 1024), shift: 64 - 10} }

// slot is where the search for hash h starts: its top bits, multiplied
// by 2^64/φ, so that hashes differing only in their low bits spread out.
func (x *index) slot(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> x.shift) }

func (x *index) next(i int) int { return (i + 1) & (len(x.slots) - 1) }

// put gives free slot i to entry number e-1, of hash h, and keeps the
// slots at most half full.
func (x *index) put(i int, h uint64, e int) {
	x.slots[i] = slot{h, int32(e)}
	if x.used++; 2*x.used <= len(x.slots) {
		return
	}
	old := x.slots
	x.slots, x.shift = make([]slot, 2*len(old)), x.shift-1
	for _, sl := range old {
		if sl.entry != 0 {
			i := x.slot(sl.hash)
			for x.slots[i].entry != 0 {
				i = x.next(i)
			}
			x.slots[i] = sl
		}
	}
}

// bestPrefix keeps the longest linearization the search has held, which
// shares its first same operations with the current one: extending it
// copies only what changed since, so that keeping it costs no more than
// the pushes and pops themselves.
type bestPrefix struct {
	ids  []int
	same int
}

// push notes that the linearization grew to path.
func (b *bestPrefix) push(path []int) {
	if len(path) <= len(b.ids) {
		return
	}
	b.ids = append(b.ids[:b.same], path[b.same:]...)
	b.same = len(path)
}

// pop notes that the linearization is now depth long.
func (b *bestPrefix) pop(depth int) { b.same = min(b.same, depth) }
