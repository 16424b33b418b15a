package txn

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// A broken history can hold millions of anomalies: under a cap
// (analysis.FindingsCap) the result lists a few of each kind, the worst
// kinds first, and counts them all.
const listedPerKind = 5

// findings collects anomalies by kind (Elle's names).
type findings struct {
	counts map[string]int
	listed map[string][]analysis.Finding
}

func newFindings() *findings {
	return &findings{counts: map[string]int{}, listed: map[string][]analysis.Finding{}}
}

// add counts an anomaly of kind, and builds its finding only while the
// kind has room in the list: under a cap, a flood costs a count each.
func (f *findings) add(kind string, build func() analysis.Finding) {
	f.counts[kind]++
	if analysis.FindingsCap <= 0 || len(f.listed[kind]) < listedPerKind {
		fd := build()
		fd.Kind = kind
		f.listed[kind] = append(f.listed[kind], fd)
	}
}

func (f *findings) total() int {
	n := 0
	for _, c := range f.counts {
		n += c
	}
	return n
}

// list is what the result shows: the kinds in order of severity (Elle's
// anomaly depth), up to the cap in all, if there is one.
func (f *findings) list() []analysis.Finding {
	kinds := slices.SortedFunc(maps.Keys(f.listed), func(a, b string) int {
		return cmp.Or(cmp.Compare(anomalyDepth(a), anomalyDepth(b)), cmp.Compare(a, b))
	})
	var out []analysis.Finding
	for _, k := range kinds {
		out = append(out, f.listed[k]...)
	}
	if analysis.FindingsCap > 0 {
		out = out[:min(len(out), analysis.FindingsCap)]
	}
	return out
}

// describeCounts lists counts by kind: "G0 ×1, G1a ×3".
func describeCounts(counts map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// ops are the invocations and completions of transactions ts, in history
// order, once each: the entries a finding rests on.
func (o *observation) ops(ts ...int32) []history.Op {
	var out []history.Op
	for _, t := range slices.Compact(slices.Sorted(slices.Values(ts))) {
		p := o.pairs[t]
		if p.Inv != nil {
			out = append(out, *p.Inv)
		}
		if p.Done != nil {
			out = append(out, *p.Done)
		}
	}
	slices.SortStableFunc(out, func(a, b history.Op) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

// name is how findings refer to a transaction: "p3's txn #12", by the
// history index of its invocation (or of its completion, without one),
// with how it ended.
func (o *observation) name(t int32) string {
	p, first := o.pairs[t], o.first(t)
	end := "never completed"
	if p.Done != nil {
		end = fmt.Sprintf("%s at #%d", p.Done.Type, p.Done.Index)
	}
	return fmt.Sprintf("%s's txn #%d (%s)", history.ProcessName(first.Process), first.Index, end)
}

// maxShownElements bounds how much of a list an explanation shows: its
// end, where the anomalies are.
const maxShownElements = 8

// showRead renders what read m saw: [1 2 3] for a list, the value or nil
// for a register.
func (o *observation) showRead(m mop) string {
	return o.showVersions(o.seen(m), o.lists)
}

// showVersions renders versions as a list, or, for a register, the one
// value (nil when there is none).
func (o *observation) showVersions(vs []int32, list bool) string {
	if !list {
		if len(vs) == 0 {
			return "nil"
		}
		return o.text[vs[0]]
	}
	var b strings.Builder
	b.WriteByte('[')
	if len(vs) > maxShownElements {
		fmt.Fprintf(&b, "… %d more, ", len(vs)-maxShownElements)
		vs = vs[len(vs)-maxShownElements:]
	}
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o.text[v])
	}
	b.WriteByte(']')
	return b.String()
}

// show renders one version: its value, or nil/[] for the initial one.
func (o *observation) show(v int32) string {
	if o.versions[v].initial {
		return o.showVersions(nil, o.lists)
	}
	return o.text[v]
}
