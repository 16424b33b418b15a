package txn

import (
	"fmt"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// dataExplainer says why transaction b depends on a by data relation r
// (ww, wr or rw), naming them an and bn; "" if it cannot.
type dataExplainer func(a, b int32, r rel, an, bn string) string

// explainCycle renders a cycle as Elle's cycle explainer does: it names
// the transactions T1, T2, …, then says why each precedes the next, the
// last step closing the contradiction.
func (o *observation) explainCycle(c cycle, data dataExplainer) analysis.Finding {
	names := make([]string, len(c.txns))
	lets := make([]string, len(c.txns))
	steps := make([]analysis.CycleStep, len(c.txns))
	for i, t := range c.txns {
		names[i] = fmt.Sprintf("T%d", i+1)
		lets[i] = names[i] + " = " + o.name(t)
		p, first := o.pairs[t], o.first(t)
		steps[i] = analysis.CycleStep{Name: names[i], Op: first.Index, Process: first.Process, Type: history.Invoke, Txn: o.showTxn(t), Next: c.rels[i].String()}
		if p.Done != nil {
			steps[i].Type = p.Done.Type
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Let %s. Then ", strings.Join(lets, ", "))
	for i, t := range c.txns {
		j := (i + 1) % len(c.txns)
		why := o.explainEdge(t, c.txns[j], c.rels[i], names[i], names[j], data)
		switch {
		case j == 0:
			fmt.Fprintf(&b, "; however, %s < %s, because %s (%s): a contradiction!", names[i], names[j], why, c.rels[i])
		case i > 0:
			fmt.Fprintf(&b, "; %s < %s, because %s (%s)", names[i], names[j], why, c.rels[i])
		default:
			fmt.Fprintf(&b, "%s < %s, because %s (%s)", names[i], names[j], why, c.rels[i])
		}
	}
	return analysis.Finding{Explanation: b.String(), Ops: o.ops(c.txns...), Cycle: steps}
}

// showTxn renders what transaction t did, as Elle writes micro-ops: `r "x"
// [1 2], append "y" 3`; a read whose value is unknown shows "?".
func (o *observation) showTxn(t int32) string {
	write := "w"
	if o.lists {
		write = "append"
	}
	ms := o.mops[o.txns[t].mops.from:o.txns[t].mops.to]
	parts := make([]string, len(ms))
	for i, m := range ms {
		switch {
		case m.kind == writeMop:
			parts[i] = fmt.Sprintf("%s %s %s", write, o.keys[m.key], o.text[m.value])
		case m.known:
			parts[i] = fmt.Sprintf("r %s %s", o.keys[m.key], o.showRead(m))
		default:
			parts[i] = fmt.Sprintf("r %s ?", o.keys[m.key])
		}
	}
	return strings.Join(parts, ", ")
}

// explainEdge says why b depends on a by r.
func (o *observation) explainEdge(a, b int32, r rel, an, bn string, data dataExplainer) string {
	pa, pb := o.pairs[a], o.pairs[b]
	switch r {
	case process:
		return fmt.Sprintf("%s ran %s and then %s", history.ProcessName(pa.Done.Process), an, bn)
	case realtime:
		done, began := showTimes(pa.Done.Time, pb.Inv.Time)
		return fmt.Sprintf("%s completed at %s (#%d), before %s began at %s (#%d)", an, done, pa.Done.Index, bn, began, pb.Inv.Index)
	}
	if why := data(a, b, r, an, bn); why != "" {
		return why
	}
	return fmt.Sprintf("%s depends on %s", bn, an)
}

// showTimes renders two times in the run in seconds, to the millisecond,
// or exactly when that would make them look equal.
func showTimes(a, b time.Duration) (string, string) {
	if a.Milliseconds() == b.Milliseconds() {
		return a.String(), b.String()
	}
	return fmt.Sprintf("%.3fs", a.Seconds()), fmt.Sprintf("%.3fs", b.Seconds())
}

// joinAnd joins phrases as a sentence does: "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
