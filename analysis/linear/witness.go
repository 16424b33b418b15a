// The finding for an illegal key: which operations porcupine could not
// order, and why, in words a reader can check against the history.

package linear

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// witness explains why a key is illegal from the longest partial
// linearization P its search found (best): after P the model is in some state, and none of the
// operations that must come next (those invoked before the earliest
// completion among the rest) extends P any further. Those operations, the
// one whose completion forces the order first, and P's last operation are
// the proof; their entries are listed, at most MaxOps of them. also,
// given the last completion among those candidates, may add a clause and
// the entries it rests on (a failure that took effect, witness_failed.go).
func witness(h []history.Op, m *Model, model porcupine.Model, p *Part, best []int, file string, also func(horizon int64) (string, []int)) analysis.Finding {
	state := model.Init()
	in := make([]bool, len(p.Ops))
	for _, id := range best {
		_, state = model.Step(state, p.Ops[id].Input, p.Ops[id].Output)
		in[id] = true
	}
	first := int64(math.MaxInt64)
	for id, o := range p.Ops {
		if !in[id] {
			first = min(first, o.Return)
		}
	}
	var next []int
	for id, o := range p.Ops {
		if !in[id] && o.Call <= first {
			next = append(next, id)
		}
	}
	// The operation completing first leads (it forces the order); the others
	// follow by invocation.
	slices.SortStableFunc(next, func(a, b int) int { return cmp.Compare(p.Ops[a].Call, p.Ops[b].Call) })
	if lead := slices.IndexFunc(next, func(id int) bool { return p.Ops[id].Return == first }); lead > 0 {
		id := next[lead]
		copy(next[1:lead+1], next[:lead])
		next[0] = id
	}
	describe := func(id int) string { return describeOp(model, &h[p.Refs[id].Inv], p.Ops[id]) }

	var b strings.Builder
	fmt.Fprintf(&b, "%s is not linearizable: ", capitalize(keyName(m, p.key)))
	when := "next"
	if len(best) == 0 {
		fmt.Fprintf(&b, "in its initial state %s, ", model.DescribeState(state))
		when = "first"
	} else {
		fmt.Fprintf(&b, "at most %d of its %d operations can be ordered consistently with real time and the %s model, ending in state %s after %s; ",
			len(best), len(p.Ops), m.Name, model.DescribeState(state), describe(best[len(best)-1]))
	}
	fits := false // does some candidate fit the state, only to lead nowhere later?
	var list []string
	for i, id := range next {
		if ok, _ := model.Step(state, p.Ops[id].Input, p.Ops[id].Output); ok {
			fits = true
		}
		if i < 3 {
			list = append(list, describe(id))
		}
	}
	if len(next) > 3 {
		list = append(list, fmt.Sprintf("%d more", len(next)-3))
	}
	switch {
	case len(next) == 1 && fits:
		fmt.Fprintf(&b, "the one operation that can come %s, %s, leads to no full order", when, list[0])
	case len(next) == 1:
		fmt.Fprintf(&b, "the one operation that can come %s, %s, does not fit that state", when, list[0])
	case fits:
		fmt.Fprintf(&b, "none of the %d operations that can come %s (%s) leads to a full order", len(next), when, strings.Join(list, ", "))
	default:
		fmt.Fprintf(&b, "none of the %d operations that can come %s (%s) fits that state", len(next), when, strings.Join(list, ", "))
	}
	// The last completion among the candidates; one that never completed
	// bounds nothing.
	horizon := first
	for _, id := range next {
		if r := p.Ops[id].Return; r != math.MaxInt64 {
			horizon = max(horizon, r)
		}
	}
	clause, pos := also(horizon)
	if clause != "" {
		b.WriteString("; " + clause)
	}
	if file != "" {
		fmt.Fprintf(&b, "; see %s", file)
	}
	b.WriteString(".")

	// The proof: what also rests on, the candidates, then P's last
	// operation.
	if len(best) > 0 {
		next = append(next, best[len(best)-1])
	}
	for _, id := range next {
		r := p.Refs[id]
		if len(pos)+2 > analysis.MaxOps && len(pos) > 0 {
			break
		}
		pos = append(pos, r.Inv)
		if r.Done >= 0 {
			pos = append(pos, r.Done)
		}
	}
	return analysis.Finding{Kind: "nonlinearizable", Explanation: b.String(), Ops: analysis.OpsAt(h, pos)}
}

// describeOp is how a finding names operation o, invoked by entry inv.
func describeOp(model porcupine.Model, inv *history.Op, o porcupine.Operation) string {
	return fmt.Sprintf("#%d %s %s", inv.Index, history.ProcessName(inv.Process), model.DescribeOperation(o.Input, o.Output))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
