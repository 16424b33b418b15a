package txn

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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

// versionEdge is v1 < v2 in a key's version order, because transaction
// txn read v1 and then wrote v2 (writes follow reads).
type versionEdge struct{ from, to, txn int32 }

// linkRWRegister adds the data dependencies of a register history, as
// Elle's rw-register with writes-follow-reads: wr from the writer of each
// value a transaction read externally; and, from the version order that
// can be proven (the initial nil before every written value, and v1 before
// v2 when a committed transaction read v1 and then wrote v2), ww from a
// version's writer and rw from its external readers to the writer of the
// next. Version orders that come out cyclic are reported and dropped.
func (o *observation) linkRWRegister(ctx context.Context, found *findings, es *edges) error {
	readers := o.readersOf(true)
	var vedges []versionEdge
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
					vedges = append(vedges, versionEdge{e.read.value, e.write, int32(t)})
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
	vedges, err := o.dropCyclicVersions(ctx, vedges, found)
	if err != nil {
		return err
	}
	slices.SortFunc(vedges, func(a, b versionEdge) int { return cmp.Compare(a.from, b.from) })
	for i := 0; i < len(vedges); {
		j, v := i, vedges[i].from
		var next []int32 // the transactions that read v and then wrote over it
		for ; j < len(vedges) && vedges[j].from == v; j++ {
			next = append(next, vedges[j].txn)
			if w := o.writerOf(v); w >= 0 && !o.versions[v].intermediate {
				es.link(w, vedges[j].txn, ww)
			}
		}
		es.fan(readers.of(v), next, rw)
		i = j
	}
	return nil
}

// dropCyclicVersions reports each cycle among the version edges (Elle's
// cyclic-versions) and returns the edges outside every cycle: a cyclic
// order proves nothing about the transactions.
func (o *observation) dropCyclicVersions(ctx context.Context, vedges []versionEdge, found *findings) ([]versionEdge, error) {
	es := newEdges(len(o.versions))
	for _, e := range vedges {
		es.link(e.from, e.to, ww)
	}
	g := newGraph(es)
	all := make([]int32, len(o.versions))
	for i := range all {
		all[i] = int32(i)
	}
	comps, err := newTarjan(g).components(ctx, all, allRels, nil)
	if err != nil || len(comps) == 0 {
		return vedges, err
	}
	compOf := make([]int32, len(o.versions))
	for i, c := range comps {
		for _, v := range c {
			compOf[v] = int32(i) + 1
		}
	}
	var kept []versionEdge
	byComp := make([][]versionEdge, len(comps))
	for _, e := range vedges {
		if c := compOf[e.from]; c != 0 && c == compOf[e.to] {
			byComp[c-1] = append(byComp[c-1], e)
			continue
		}
		kept = append(kept, e)
	}
	for i, c := range comps {
		inCycle := byComp[i]
		found.add("cyclic-versions", func() analysis.Finding {
			var why []string
			var ts []int32
			for _, e := range inCycle {
				why = append(why, fmt.Sprintf("%s read %s and then wrote %s", o.name(e.txn), o.text[e.from], o.text[e.to]))
				ts = append(ts, e.txn)
			}
			return analysis.Finding{Explanation: fmt.Sprintf("The versions %s of key %s follow each other in a cycle, since %s.",
				o.showVersions(c, true), o.keys[o.versions[c[0]].key], joinAnd(why)), Ops: o.ops(ts...)}
		})
	}
	return kept, nil
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
			case r == ww && ea.write >= 0 && eb.read != nil && eb.write >= 0 && eb.read.value == ea.write:
				return fmt.Sprintf("%s set key %s to %s, and %s read that and then set it to %s", an, k, o.text[ea.write], bn, o.text[eb.write])
			case r == rw && ea.read != nil && eb.write >= 0 && o.versions[ea.read.value].initial:
				return fmt.Sprintf("%s read key %s = nil, its initial value, and %s set it to %s, which must come after", an, k, bn, o.text[eb.write])
			case r == rw && ea.read != nil && eb.write >= 0 && eb.read != nil && eb.read.value == ea.read.value:
				return fmt.Sprintf("%s read key %s = %s, and %s read that too and then set it to %s", an, k, o.text[ea.read.value], bn, o.text[eb.write])
			}
		}
	}
	return ""
}
