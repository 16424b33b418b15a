package txn

import "slices"

// postings maps each version to transactions, in compressed rows.
type postings struct{ start, items []int32 }

func (p postings) of(v int32) []int32 { return p.items[p.start[v]:p.start[v+1]] }

// readersOf indexes the committed transactions by the version each of
// their known reads saw last; externalOnly keeps only a transaction's
// external reads (a read that is its first micro-op on the key), as Elle's
// rw-register does.
func (o *observation) readersOf(externalOnly bool) postings {
	p := postings{start: make([]int32, len(o.versions)+1)}
	each := func(f func(v, t int32)) {
		for t := range o.txns {
			ms := o.txnMops(int32(t))
			for i, m := range ms {
				if m.kind != readMop || !m.known || externalOnly && !firstOnKey(ms, i) {
					continue
				}
				f(m.value, int32(t))
			}
		}
	}
	each(func(v, _ int32) { p.start[v+1]++ })
	for v := range o.versions {
		p.start[v+1] += p.start[v]
	}
	fill := slices.Clone(p.start[:len(o.versions)])
	p.items = make([]int32, p.start[len(o.versions)])
	each(func(v, t int32) {
		p.items[fill[v]] = t
		fill[v]++
	})
	return p
}

// firstOnKey says whether ms[i] is the first of ms on its key.
func firstOnKey(ms []mop, i int) bool {
	return !slices.ContainsFunc(ms[:i], func(p mop) bool { return p.key == ms[i].key })
}
