package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// Cycle drawing geometry: transactions as boxes on an ellipse, T1 at the
// top and the rest clockwise, each edge a curve bulging outwards so that
// the two edges of a two-transaction cycle do not overlap.
const (
	boxW, boxH = 240, 40
	// txnChars is how much of a transaction's micro-ops a box shows; the
	// whole is its tooltip.
	txnChars = 34
	// maxDrawn is the longest cycle drawn: a longer one (a history that
	// lost writes can make cycles of hundreds) would be a wall of boxes;
	// its explanation lists it.
	maxDrawn = 12
)

// edgeColors tell the relations apart; real time is dashed besides.
var edgeColors = map[string]string{
	"ww": "#1f6fb4", "wr": "#2e9d4a", "rw": "#d64545", "process": "#777777", "realtime": "#8a5bb8",
}

// cycleSVG draws a cycle of transactions, each edge labelled with its
// relation, as Elle's plots do.
func cycleSVG(steps []analysis.CycleStep) template.HTML {
	n := len(steps)
	if n == 0 {
		return ""
	}
	if n > maxDrawn {
		return template.HTML(fmt.Sprintf("<p>A cycle of %d transactions: too long to draw; the explanation above goes through it.</p>", n))
	}
	rx, ry := 110+45*float64(n), 60+28*float64(n)
	w, h := 2*rx+boxW+40, 2*ry+boxH+40
	cx, cy := w/2, h/2
	at := make([][2]float64, n)
	for i := range steps {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		at[i] = [2]float64{cx + rx*math.Cos(a), cy + ry*math.Sin(a)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-size="12">`, w, h, w, h)
	b.WriteString(`<defs>`)
	for rel, c := range edgeColors {
		fmt.Fprintf(&b, `<marker id="arrow-%s" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="%s"/></marker>`, rel, c)
	}
	b.WriteString(`</defs>`)
	for i, s := range steps {
		edge(&b, at[i], at[(i+1)%n], [2]float64{cx, cy}, s.Next)
	}
	for i, s := range steps {
		x, y := at[i][0]-boxW/2, at[i][1]-boxH/2
		txn := s.Txn
		if r := []rune(txn); len(r) > txnChars {
			txn = string(r[:txnChars-1]) + "…"
		}
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%d" height="%d" rx="4" fill="#fff" stroke="%s" stroke-width="1.5"/>`,
			html.EscapeString(fmt.Sprintf("%s: %s's txn #%d (%s): %s", s.Name, history.ProcessName(s.Process), s.Op, s.Type, s.Txn)), x, y, boxW, boxH, outcomeColors[s.Type])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="600">%s · %s · #%d %s</text>`, x+8, y+16, s.Name, history.ProcessName(s.Process), s.Op, s.Type)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-family="monospace" font-size="11">%s</text></g>`, x+8, y+32, html.EscapeString(txn))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// edge draws the dependency from box p to box q as a curve bulging away
// from the centre c, from border to border, with its relation halfway.
func edge(b *strings.Builder, p, q, c [2]float64, rel string) {
	dx, dy := q[0]-p[0], q[1]-p[1]
	d := math.Hypot(dx, dy)
	nx, ny := dy/d, -dx/d // a normal of the chord
	mx, my := (p[0]+q[0])/2, (p[1]+q[1])/2
	if (mx-c[0])*nx+(my-c[1])*ny < 0 {
		nx, ny = -nx, -ny
	}
	bulge := math.Max(70, 0.3*d)
	ctl := [2]float64{mx + nx*bulge, my + ny*bulge}
	from, to := border(p, ctl), border(q, ctl)
	colour, ok := edgeColors[rel]
	if !ok {
		colour, rel = "#777777", "process"
	}
	dash := ""
	if rel == "realtime" {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(b, `<path d="M%.1f,%.1fQ%.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="1.6"%s marker-end="url(#arrow-%s)"/>`,
		from[0], from[1], ctl[0], ctl[1], to[0], to[1], colour, dash, rel)
	lx, ly := 0.25*from[0]+0.5*ctl[0]+0.25*to[0], 0.25*from[1]+0.5*ctl[1]+0.25*to[1]
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s" stroke="#fff" stroke-width="4" paint-order="stroke" font-weight="600">%s</text>`, lx, ly+4, colour, rel)
}

// border is where the line from box centre p towards t leaves the box.
func border(p, t [2]float64) [2]float64 {
	dx, dy := t[0]-p[0], t[1]-p[1]
	s := math.Inf(1)
	if dx != 0 {
		s = math.Min(s, boxW/2/math.Abs(dx))
	}
	if dy != 0 {
		s = math.Min(s, boxH/2/math.Abs(dy))
	}
	if math.IsInf(s, 1) {
		return p
	}
	return [2]float64{p[0] + dx*s, p[1] + dy*s}
}
