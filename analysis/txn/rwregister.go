package txn

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
)

// external is a transaction's external read and write of one key, as
// jepsen.txn's ext-reads and ext-writes: the read, if the transaction's
// first micro-op on the key reads it, and the version of its last write.
type external struct {
	key   int32
	read  *mop  // nil if none
	write int32 // -1 if none
}

// externals lists transaction t's external reads and writes, key by key.
func (o *observation) externals(t int32, into []external) []external {
	into = into[:0]
	ms := o.txnMops(t)
	for i := range ms {
		m := &ms[i]
		j := slices.IndexFunc(into, func(e external) bool { return e.key == m.key })
		if j < 0 {
			into = append(into, external{key: m.key, write: -1})
			j = len(into) - 1
			if m.kind == readMop && m.known {
				into[j].read = m
			}
		}
		if m.kind == writeMop {
			into[j].write = m.value
		}
	}
	return into
}

// versionEdge is v1 < v2 in a key's version order, and why: transaction a
// read v1 and then wrote v2 (writes follow reads, b = -1); or v1 was the
// last version of the key a used, and b, which follows a in its process's
// order (sequential keys) or in real time (linearizable keys), used v2
// first.
type versionEdge struct {
	from, to int32
	a, b     int32
	by       string // the source, as Elle names it: wfr-keys, sequential-keys, linearizable-keys
}

// linkRWRegister adds the data dependencies of a register history, as
// Elle's rw-register: wr from the writer of each value a transaction read
// externally; and, from the version order that can be proven, ww from a
// version's writer and rw from its external readers to the writer of the
// next. The version order comes from Elle's sources, in its order: the
// initial nil before every other version; unless opts.WithoutWFR, v1 < v2
// when a committed transaction read v1 and then wrote v2; with
// opts.SequentialKeys and opts.LinearizableKeys, the versions one
// transaction used last and the next to use the key used first, by process
// order and by real time. A source that would make an order cyclic is
// reported (cyclic-versions) and left out whole, as Elle leaves it out.
func (o *observation) linkRWRegister(ctx context.Context, opts Options, found *findings, es *edges) error {
	readers := o.readersOf(true)
	var wfr []versionEdge
	var ext []external
	writersOf := make([][]int32, len(o.keys)) // each key's external writers
	for t, tx := range o.txns {
		if tx.status == aborted {
			continue
		}
		ext = o.externals(int32(t), ext)
		for _, e := range ext {
			if e.read != nil && !o.versions[e.read.value].initial {
				if w := o.writerOf(e.read.value); w >= 0 && !o.versions[e.read.value].intermediate {
					es.link(w, int32(t), wr)
				}
				if e.write >= 0 && e.read.value != e.write {
					wfr = append(wfr, versionEdge{from: e.read.value, to: e.write, a: int32(t), b: -1, by: "wfr-keys"})
				}
			}
			if e.write >= 0 {
				writersOf[e.key] = append(writersOf[e.key], int32(t))
			}
		}
	}
	for k, ws := range writersOf {
		es.fan(readers.of(o.initial[k]), ws, rw)
	}
	var sources [][]versionEdge
	if !opts.WithoutWFR {
		sources = append(sources, wfr)
	}
	if opts.SequentialKeys {
		sources = append(sources, o.orderVersions(o.linkProcesses, "sequential-keys"))
	}
	if opts.LinearizableKeys {
		sources = append(sources, o.orderVersions(o.linkRealtime, "linearizable-keys"))
	}
	vedges, err := o.acceptVersions(ctx, sources, found)
	if err != nil {
		return err
	}
	// Elle relates the external writers and readers of v1 to the external
	// writers of v2; the initial version has neither writer nor, beyond
	// the fan above, anything to add.
	vedges = slices.DeleteFunc(vedges, func(e versionEdge) bool { return o.versions[e.from].initial })
	slices.SortFunc(vedges, func(a, b versionEdge) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	vedges = slices.CompactFunc(vedges, func(a, b versionEdge) bool { return a.from == b.from && a.to == b.to })
	for i := 0; i < len(vedges); {
		j, v := i, vedges[i].from
		var next []int32 // the external writers of the versions after v
		for ; j < len(vedges) && vedges[j].from == v; j++ {
			to := vedges[j].to
			w := o.writerOf(to)
			if w < 0 || o.versions[to].intermediate {
				continue
			}
			next = append(next, w)
			if wv := o.writerOf(v); wv >= 0 && !o.versions[v].intermediate {
				es.link(wv, w, ww)
			}
		}
		es.fan(readers.of(v), next, rw)
		i = j
	}
	// Elle's rw-register explains a dependency by wr before ww (its wr
	// graph comes first), so a cycle through a transaction that read what
	// another wrote and then wrote over it is G1c, not G0: the ww such a
	// pair also has (always, by writes follow reads) explains nothing.
	es.unlinkShadowed(ww, wr)
	return nil
}

// orderVersions infers version edges from an order of transactions (Elle's
// transaction-graph->version-graphs), which link adds to a graph: for each
// committed transaction a and key k it used, the last version of k it used
// (its external write, else its external read) precedes the first each
// next transaction to use k used (its external read of a value, else its
// external write; its read of nil if that is all), the next along every
// path of the order that reaches one without passing through another.
// A transaction of unknown outcome uses only the keys it writes.
func (o *observation) orderVersions(link func(*edges), by string) []versionEdge {
	es := newEdges(len(o.txns))
	link(es)
	g := newGraph(es)
	// uses[t] are the keys t used, with the first and last versions.
	type use struct{ key, first, last int32 }
	uses := make([][]use, len(o.txns))
	var ext []external
	for t, tx := range o.txns {
		if tx.status == aborted || o.pairs[t].Done == nil {
			continue // Elle's orders hold completed transactions only
		}
		ext = o.externals(int32(t), ext)
		for _, e := range ext {
			u := use{key: e.key, first: -1, last: e.write}
			if tx.status == committed && e.read != nil {
				if !o.versions[e.read.value].initial || e.write < 0 {
					u.first = e.read.value
				}
				if u.last < 0 {
					u.last = e.read.value
				}
			}
			if u.first < 0 {
				u.first = e.write
			}
			if u.first >= 0 {
				uses[t] = append(uses[t], u)
			}
		}
	}
	// next[t] maps each key to the first transactions after t to use it;
	// edges go forward in time, so by completion, latest first, every
	// successor's is known before its predecessors need it.
	order := make([]int32, 0, len(o.txns))
	for t := range o.txns {
		if o.pairs[t].Done != nil {
			order = append(order, int32(t))
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(o.pairs[b].Done.Time, o.pairs[a].Done.Time) })
	next := make([]map[int32][]int32, len(o.txns))
	var out []versionEdge
	for _, a := range order {
		m := map[int32][]int32{}
		for _, adj := range g.out(a) {
			b := target(adj)
			for _, u := range uses[b] {
				m[u.key] = append(m[u.key], b)
			}
			for k, ts := range next[b] {
				if !slices.ContainsFunc(uses[b], func(u use) bool { return u.key == k }) {
					m[k] = append(m[k], ts...)
				}
			}
		}
		for k, ts := range m {
			slices.Sort(ts)
			m[k] = slices.Compact(ts)
		}
		next[a] = m
		if o.txns[a].status != committed {
			continue
		}
		for _, u := range uses[a] {
			for _, b := range m[u.key] {
				i := slices.IndexFunc(uses[b], func(w use) bool { return w.key == u.key })
				if v2 := uses[b][i].first; v2 != u.last {
					out = append(out, versionEdge{from: u.last, to: v2, a: a, b: b, by: by})
				}
			}
		}
	}
	return out
}

// acceptVersions adds the sources of version edges one by one, as Elle's
// version-graphs: one that closes a cycle in a key's versions, with the
// initial version before all others, is reported (cyclic-versions: a
// cyclic order proves nothing about the transactions) and left out.
func (o *observation) acceptVersions(ctx context.Context, sources [][]versionEdge, found *findings) ([]versionEdge, error) {
	var accepted []versionEdge
	for _, src := range sources {
		try := append(slices.Clip(accepted), src...)
		comps, err := o.versionCycles(ctx, try)
		if err != nil {
			return nil, err
		}
		if len(comps) == 0 {
			accepted = try
			continue
		}
		for _, c := range comps {
			o.reportCyclicVersions(c, try, found)
		}
	}
	return accepted, nil
}

// versionCycles are the strongly connected components of the version
// order the edges give, with each key's initial version before the rest.
func (o *observation) versionCycles(ctx context.Context, vedges []versionEdge) ([][]int32, error) {
	es := newEdges(len(o.versions))
	for _, e := range vedges {
		es.link(e.from, e.to, ww)
	}
	intoInitial := map[int32]bool{}
	for _, e := range vedges {
		if o.versions[e.to].initial {
			intoInitial[o.versions[e.to].key] = true
		}
	}
	for v, ver := range o.versions {
		if !ver.initial && intoInitial[ver.key] {
			es.link(o.initial[ver.key], int32(v), ww)
		}
	}
	g := newGraph(es)
	all := make([]int32, len(o.versions))
	for i := range all {
		all[i] = int32(i)
	}
	return newTarjan(g).components(ctx, all, allRels, nil)
}

// reportCyclicVersions reports the versions of comp, a cycle, with the
// edges among them.
func (o *observation) reportCyclicVersions(comp []int32, vedges []versionEdge, found *findings) {
	in := map[int32]bool{}
	for _, v := range comp {
		in[v] = true
	}
	found.add("cyclic-versions", func() analysis.Finding {
		var why []string
		var ts []int32
		for _, e := range vedges {
			if !in[e.from] || !in[e.to] {
				continue
			}
			from, to := o.show(e.from), o.show(e.to)
			if e.b < 0 {
				why = append(why, fmt.Sprintf("%s read %s and then wrote %s", o.name(e.a), from, to))
				ts = append(ts, e.a)
				continue
			}
			why = append(why, fmt.Sprintf("%s last used %s, and %s, next after it (%s), first used %s", o.name(e.a), from, o.name(e.b), e.by, to))
			ts = append(ts, e.a, e.b)
		}
		if slices.ContainsFunc(comp, func(v int32) bool { return o.versions[v].initial }) {
			why = append(why, "nil, the initial version, precedes every other")
		}
		shown := make([]string, len(comp))
		for i, v := range comp {
			shown[i] = o.show(v)
		}
		return analysis.Finding{Explanation: fmt.Sprintf("The versions %s of key %s follow each other in a cycle, since %s.",
			strings.Join(shown, ", "), o.keys[o.versions[comp[0]].key], joinAnd(why)), Ops: o.ops(ts...)}
	})
}

// explainRWRegister says why b depends on a by relation r, naming them an
// and bn, as Elle's rw-register explainers.
func (o *observation) explainRWRegister(a, b int32, r rel, an, bn string) string {
	extA, extB := o.externals(a, nil), o.externals(b, nil)
	for _, eb := range extB {
		for _, ea := range extA {
			if ea.key != eb.key {
				continue
			}
			k := o.keys[eb.key]
			switch {
			case r == wr && eb.read != nil && ea.write >= 0 && eb.read.value == ea.write:
				return fmt.Sprintf("%s read key %s = %s, which %s wrote", bn, k, o.text[ea.write], an)
			case r == ww && ea.write >= 0 && eb.write >= 0:
				// Not by writes following reads: that pair is explained by wr.
				return fmt.Sprintf("%s set key %s to %s, and %s set it to %s, a later version (by the order of transactions that uses the key)", an, k, o.text[ea.write], bn, o.text[eb.write])
			case r == rw && ea.read != nil && eb.write >= 0 && o.versions[ea.read.value].initial:
				return fmt.Sprintf("%s read key %s = nil, its initial value, and %s set it to %s, which must come after", an, k, bn, o.text[eb.write])
			case r == rw && ea.read != nil && eb.write >= 0 && eb.read != nil && eb.read.value == ea.read.value:
				return fmt.Sprintf("%s read key %s = %s, and %s read that too and then set it to %s", an, k, o.text[ea.read.value], bn, o.text[eb.write])
			case r == rw && ea.read != nil && eb.write >= 0:
				return fmt.Sprintf("%s read key %s = %s, and %s set it to %s, a later version (by the order of transactions that uses the key)", an, k, o.text[ea.read.value], bn, o.text[eb.write])
			}
		}
	}
	return ""
}
