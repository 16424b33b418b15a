package report

// The timeline: a lane per process, the nemesis's on top with each fault
// a labelled bar (its kind and victims), each client's operations as
// boxes naming their f and value, its lock holds as spans behind them.
// Each operation's box has the id op-N (N its invocation's history index;
// the box inside it carries its completion's), so that a finding can
// point at it, and lists the findings it belongs to (data-findings),
// which the page's script highlights.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
)

const (
	laneH     = 30 // a client's lane
	faultRowH = 18 // one row of the nemesis's lane; overlapping faults stack
	opBoxTop  = 11 // an op's box within its lane, below its holds' labels
	opBoxH    = 16
	// minBox is the narrowest box drawn, and minFound that of an operation
	// in a finding: a stale write of a millisecond in a minute's run would
	// otherwise be a sliver no one finds.
	minBox, minFound = 2.0, 7.0
	charW            = 5.6 // width of a character at font-size 10, roughly
)

// timeline draws s: faults, then a lane per process of procs. Its
// operations link back to their findings, listed in the page at home
// ("" for the page itself).
func timeline(s span, procs []int, ops []history.Pair, faults []history.FaultWindow, holds []hold, m marks, home string) string {
	rows, nRows := faultRows(s, faults)
	nemH := float64(max(nRows, 1)*faultRowH + 4)
	lane := map[int]float64{}
	for i, p := range procs {
		lane[p] = nemH + float64(i*laneH)
	}
	h := nemH + float64(len(procs)*laneH) + axisH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot timeline" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	for i, p := range procs { // stripes tell the lanes apart
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="0" y="%.0f" width="%d" height="%d" fill="#f7f7f7"/>`, lane[p], plotWidth, laneH)
		}
	}
	shadeFaults(&b, s, faults, nemH, h-axisH)
	b.WriteString(`<text x="2" y="13" font-size="10" font-weight="600">nemesis</text>`)
	for i, f := range faults {
		if rows[i] < 0 {
			continue
		}
		x0, x1 := s.x(max(f.Start, s.from)), s.x(min(f.End, s.to))
		w := max(x1-x0, minBox)
		y := float64(2 + rows[i]*faultRowH)
		label := f.Kind + " " + strings.Join(f.Victims, " ")
		fmt.Fprintf(&b, `<g class="fault"><rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="%s" stroke="#8a8a8a"/>%s<title>%s</title></g>`,
			x0, y, w, faultRowH-3, history.FaultColor(f.Kind), boxText(x0, y+11, w, label, "#333"), html.EscapeString(describeFault(f)))
	}
	for _, p := range procs {
		fmt.Fprintf(&b, `<text x="2" y="%.0f" font-size="11" font-weight="600">%s</text>`, lane[p]+19, history.ProcessName(p))
	}
	for _, hd := range holds {
		y, ok := lane[hd.proc]
		if !ok || hd.to < s.from || hd.from > s.to {
			continue
		}
		x0, x1 := s.x(max(hd.from, s.from)), s.x(min(hd.to, s.to))
		w := max(x1-x0, minBox)
		fmt.Fprintf(&b, `<g class="hold"><rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="#dbe9fb" stroke="#3b7dd8" stroke-width="1" rx="2"/>%s<title>%s</title></g>`,
			x0, y+2, w, laneH-4, holdLabel(x0, y+10, w, hd.label()), html.EscapeString(hd.describe()))
	}
	// The operations of findings last, on top of their neighbours, and
	// side by side when they would overlap (a stale write and the release
	// a millisecond after it), each at least minFound wide: the tooltip
	// has the exact times.
	for _, found := range []bool{false, true} {
		right := map[int]float64{} // process -> where its last box ends
		for _, o := range ops {
			if inFinding(o, m) == found {
				p := o.Inv.Process
				right[p] = opBox(&b, s, lane[p], o, m, right[p], home)
			}
		}
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg>`)
	return b.String()
}

// opBox draws one operation in its lane, at y; an operation of a finding
// begins no further left than after. It returns where the box ends.
func opBox(b *strings.Builder, s span, y float64, o history.Pair, m marks, after float64, home string) float64 {
	end, typ := s.to, history.Invoke
	if o.Done != nil {
		end, typ = o.Done.Time, o.Done.Type
	}
	refs := m[o.Inv.Index]
	doneID := ""
	if o.Done != nil {
		refs = append(refs, m[o.Done.Index]...)
		doneID = fmt.Sprintf(` id="op-%d"`, o.Done.Index)
	}
	refs = dedupRefs(refs)
	x0, x1 := s.x(o.Inv.Time), s.x(min(end, s.to))
	w := max(x1-x0, minBox)
	class, attrs, stroke := "op "+string(typ), "", ""
	if len(refs) > 0 {
		w = max(w, minFound)
		x0 = min(max(x0, after+1), plotWidth-10-w)
		class += " found"
		ids := make([]string, len(refs))
		for i, r := range refs {
			ids[i] = fmt.Sprintf("finding-%d", r.N)
		}
		attrs = fmt.Sprintf(` data-findings="%s"`, strings.Join(ids, " "))
		stroke = ` stroke="#000" stroke-width="1.2"`
	}
	fmt.Fprintf(b, `<g class="%s" id="op-%d"%s>`, class, o.Inv.Index, attrs)
	if len(refs) > 0 {
		fmt.Fprintf(b, `<a href="%s#finding-%d">`, home, refs[0].N)
	}
	fmt.Fprintf(b, `<rect%s x="%.1f" y="%.0f" width="%.1f" height="%d" fill="%s"%s/>%s<title>%s</title>`,
		doneID, x0, y+opBoxTop, w, opBoxH, outcomeColors[typ], stroke,
		boxText(x0, y+opBoxTop+12, w, boxLabel(o), "#fff"), html.EscapeString(opTooltip(o, refs)))
	if len(refs) > 0 {
		b.WriteString(`</a>`)
	}
	b.WriteString(`</g>`)
	return x0 + w
}

func inFinding(o history.Pair, m marks) bool {
	return len(m[o.Inv.Index]) > 0 || o.Done != nil && len(m[o.Done.Index]) > 0
}

func dedupRefs(refs []findingRef) []findingRef {
	var out []findingRef
	seen := map[int]bool{}
	for _, r := range refs {
		if !seen[r.N] {
			seen[r.N] = true
			out = append(out, r)
		}
	}
	return out
}

// boxText is label written inside a box of width w at x, cut to what
// fits; nothing when not even a few characters do.
func boxText(x, y, w float64, label, colour string) string {
	return boxTextSized(x, y, w, label, colour, 10)
}

// holdLabel is a hold's label when it fits whole: "he…" of a short hold
// says nothing its tooltip does not say better.
func holdLabel(x, y, w float64, label string) string {
	if float64(len(label))*charW*0.8+4 > w {
		return ""
	}
	return boxTextSized(x, y, w, label, "#1d4f91", 8)
}

func boxTextSized(x, y, w float64, label, colour string, size float64) string {
	fit := int((w - 4) / (charW * size / 10))
	r := []rune(strings.TrimSpace(label))
	if fit < 3 {
		return ""
	}
	if len(r) > fit {
		r = append(r[:fit-1], '…')
	}
	return fmt.Sprintf(`<text x="%.1f" y="%.0f" font-size="%g" fill="%s" pointer-events="none">%s</text>`, x+2, y, size, colour, html.EscapeString(string(r)))
}

// opTooltip is the whole operation: index, process, f, value, times, and
// the findings it is part of.
func opTooltip(o history.Pair, refs []findingRef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s %s\ninvoked %.3fs", o.Inv.Index, history.ProcessName(o.Inv.Process), o.Inv.F, compact(o.Inv.Value), o.Inv.Time.Seconds())
	if o.Done == nil {
		b.WriteString(", never completed")
	} else {
		fmt.Fprintf(&b, "\n%s #%d at %.3fs (%s)", o.Done.Type, o.Done.Index, o.Done.Time.Seconds(), (o.Done.Time - o.Inv.Time).Round(time.Microsecond))
		if v := compact(o.Done.Value); v != "" && v != compact(o.Inv.Value) {
			b.WriteString(": " + v)
		}
		if o.Done.Error != "" {
			b.WriteString(" (" + o.Done.Error + ")")
		}
	}
	for _, r := range refs {
		fmt.Fprintf(&b, "\nfinding %d: %s", r.N, r.Kind)
	}
	return b.String()
}

// compact is a value as one line of JSON, cut at maxShown.
func compact(v json.RawMessage) string {
	const maxShown = 300
	var b bytes.Buffer
	s := string(v)
	if json.Compact(&b, v) == nil {
		s = b.String()
	}
	if len(s) > maxShown {
		s = strings.ToValidUTF8(s[:maxShown], "") + "…"
	}
	return s
}

// boxLabel is what an operation's box says: its f and value, or, when it
// did not succeed, its f and why.
func boxLabel(o history.Pair) string {
	if o.Done != nil && o.Done.Type != history.Ok && o.Done.Error != "" {
		return o.Inv.F + ": " + o.Done.Error
	}
	return o.Inv.F + " " + shortValue(o)
}

// shortValue is what a box has room for: a write's value, a lock's token
// or session, a key; otherwise the value's JSON cut short.
func shortValue(o history.Pair) string {
	v := o.Inv.Value
	if o.Done != nil && len(o.Done.Value) > 0 {
		v = o.Done.Value
	}
	var m map[string]any
	if json.Unmarshal(v, &m) == nil {
		if x, ok := m["value"]; ok && x != nil {
			return scalar(x)
		}
		if x, ok := m["token"]; ok && x != nil {
			return "t" + scalar(x)
		}
		if x, ok := m["session"]; ok && x != nil {
			return "s" + scalar(x)
		}
		if x, ok := m["key"]; ok {
			return scalar(x)
		}
		if _, ok := m["lock"]; ok {
			return "" // an acquire: the lock's name says nothing new
		}
	}
	s := compact(v)
	if len(s) > 24 {
		s = s[:24]
	}
	return s
}

func scalar(x any) string {
	switch x := x.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// faultRows assigns each fault window meeting s a row of the nemesis's
// lane, the first free, so that overlapping faults stack; -1 for those
// outside s. It returns the rows used.
func faultRows(s span, faults []history.FaultWindow) ([]int, int) {
	rows := make([]int, len(faults))
	var ends []float64 // x where each row frees
	for i, f := range faults {
		if f.End < s.from || f.Start > s.to {
			rows[i] = -1
			continue
		}
		x0, x1 := s.x(max(f.Start, s.from)), s.x(min(f.End, s.to))
		label := float64(len(f.Kind)+2+len(strings.Join(f.Victims, " "))) * charW
		rows[i] = -1
		for r, e := range ends {
			if e < x0 {
				rows[i] = r
				break
			}
		}
		if rows[i] < 0 {
			rows[i] = len(ends)
			ends = append(ends, 0)
		}
		// A row frees once the bar and, when it fits, its label end.
		ends[rows[i]] = max(x1, x0+min(label, max(x1-x0, minBox)))
	}
	return rows, len(ends)
}

// shadeFaults shades the fault windows behind the clients' lanes, from y0
// to y1, faintly: the nemesis's lane names them.
func shadeFaults(b *strings.Builder, s span, faults []history.FaultWindow, y0, y1 float64) {
	for _, f := range faults {
		if f.End < s.from || f.Start > s.to {
			continue
		}
		x0, x1 := s.x(max(f.Start, s.from)), s.x(min(f.End, s.to))
		fmt.Fprintf(b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s" opacity="0.7"/>`,
			x0, y0, max(x1-x0, 1), y1-y0, history.FaultColor(f.Kind))
	}
}
