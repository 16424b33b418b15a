package report

import (
	"fmt"
	"html"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// Plot geometry, in SVG user units (pixels at 100%).
const (
	plotWidth = 1100
	labelW    = 70 // left margin for row labels and axis figures
	rowH      = 14
	axisH     = 20
)

// outcomeColors are the colours of an operation by how it ended.
var outcomeColors = map[history.Type]string{
	history.Ok: "#2e9d4a", history.Fail: "#d64545", history.Info: "#e8a33d", history.Invoke: "#999999",
}

// span is the stretch of the run a plot covers.
type span struct{ from, to time.Duration }

func (s span) x(t time.Duration) float64 {
	if s.to <= s.from {
		return labelW
	}
	return labelW + float64(t-s.from)/float64(s.to-s.from)*(plotWidth-labelW-10)
}

// shade draws the fault windows that meet s as bands of height h, each
// with its description as a tooltip.
func shade(b *strings.Builder, s span, faults []history.FaultWindow, h float64) {
	for _, f := range faults {
		if f.End < s.from || f.Start > s.to {
			continue
		}
		x0, x1 := s.x(max(f.Start, s.from)), s.x(min(f.End, s.to))
		fmt.Fprintf(b, `<rect x="%.1f" y="0" width="%.1f" height="%.1f" fill="%s" opacity="0.6"><title>%s</title></rect>`,
			x0, max(x1-x0, 1), h, history.FaultColor(f.Kind), html.EscapeString(describeFault(f)))
	}
}

func describeFault(f history.FaultWindow) string {
	return fmt.Sprintf("%s %s, %.3fs to %.3fs", f.Kind, strings.Join(f.Victims, " "), f.Start.Seconds(), f.End.Seconds())
}

// timeAxis draws ticks along the bottom at y.
func timeAxis(b *strings.Builder, s span, y float64) {
	step := niceStep((s.to - s.from).Seconds() / 10)
	for t := math.Ceil(s.from.Seconds()/step) * step; t <= s.to.Seconds(); t += step {
		x := s.x(time.Duration(t * float64(time.Second)))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/><text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%gs</text>`,
			x, y, x, y+4, x, y+14, t)
	}
}

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// timeline draws one row per process (the nemesis's faults first), each
// operation a bar from its invocation to its completion coloured by how it
// ended, over s, with the fault windows shaded behind.
func timeline(s span, procs []int, ops []history.Pair, faults []history.FaultWindow) string {
	row := map[int]int{}
	for i, p := range procs {
		row[p] = i + 1 // row 0 is the nemesis
	}
	h := float64(len(procs)+1)*rowH + axisH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	shade(&b, s, faults, h-axisH)
	fmt.Fprintf(&b, `<text x="2" y="%d" font-size="10">nemesis</text>`, rowH-3)
	for _, f := range faults {
		if f.End < s.from || f.Start > s.to {
			continue
		}
		x0, x1 := s.x(max(f.Start, s.from)), s.x(min(f.End, s.to))
		fmt.Fprintf(&b, `<rect x="%.1f" y="2" width="%.1f" height="%d" fill="#555"><title>%s</title></rect>`, x0, max(x1-x0, 1), rowH-4, html.EscapeString(describeFault(f)))
	}
	for _, p := range procs {
		fmt.Fprintf(&b, `<text x="2" y="%d" font-size="10">%s</text>`, (row[p]+1)*rowH-3, history.ProcessName(p))
	}
	for _, o := range ops {
		end, typ := s.to, history.Invoke
		if o.Done != nil {
			end, typ = o.Done.Time, o.Done.Type
		}
		x0, x1 := s.x(o.Inv.Time), s.x(min(end, s.to))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`,
			x0, row[o.Inv.Process]*rowH+2, max(x1-x0, 1), rowH-4, outcomeColors[typ], html.EscapeString(describeOp(o)))
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg>`)
	return b.String()
}

func describeOp(o history.Pair) string {
	if o.Done == nil {
		return o.Inv.String() + " — never completed"
	}
	return o.Inv.String() + " → " + o.Done.String()
}

// maxPoints bounds the points of the latency plot: beyond it, ok
// operations are sampled evenly; failed and unknown ones are all kept
// (up to the bound), since they are what a reader looks for.
const maxPoints = 20000

// latency plots each completed operation's latency (log scale) at its
// completion time, coloured by how it ended.
func latency(s span, ops []history.Pair, faults []history.FaultWindow) string {
	var pts, bad []history.Pair
	for _, o := range ops {
		if o.Done == nil {
			continue
		}
		if o.Done.Type == history.Ok {
			pts = append(pts, o)
		} else {
			bad = append(bad, o)
		}
	}
	bad = sample(bad, maxPoints/2)
	pts = append(sample(pts, maxPoints-len(bad)), bad...)
	const h = 220.0
	lo, hi := math.Log10(1e-4), math.Log10(10) // 0.1 ms to 10 s
	y := func(d time.Duration) float64 {
		v := math.Log10(max(d.Seconds(), 1e-4))
		return (h - axisH) * (1 - (min(v, hi)-lo)/(hi-lo))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	shade(&b, s, faults, h-axisH)
	for _, l := range []struct {
		d     time.Duration
		label string
	}{{time.Millisecond, "1ms"}, {10 * time.Millisecond, "10ms"}, {100 * time.Millisecond, "100ms"}, {time.Second, "1s"}} {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="2" y="%.1f" font-size="10">%s</text>`,
			labelW, y(l.d), plotWidth-10, y(l.d), y(l.d)+3, l.label)
	}
	for _, o := range pts {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.6" fill="%s"/>`, s.x(o.Done.Time), y(o.Done.Time-o.Inv.Time), outcomeColors[o.Done.Type])
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg>`)
	return b.String()
}

// sample keeps at most n of ps, evenly spread.
func sample(ps []history.Pair, n int) []history.Pair {
	if len(ps) <= n || n <= 0 {
		return ps[:min(len(ps), max(n, 0))]
	}
	out := make([]history.Pair, 0, n)
	for i := range n {
		out = append(out, ps[i*len(ps)/n])
	}
	return out
}

// throughput plots completions per second, one line per outcome, each
// completion counting as scale: a sample of one operation in scale
// stands for them all.
func throughput(s span, ops []history.Pair, faults []history.FaultWindow, scale int) string {
	secs := int((s.to-s.from)/time.Second) + 1
	counts := map[history.Type][]int{}
	peak := 1
	for _, o := range ops {
		if o.Done == nil {
			continue
		}
		c := counts[o.Done.Type]
		if c == nil {
			c = make([]int, secs)
			counts[o.Done.Type] = c
		}
		i := min(int((o.Done.Time-s.from)/time.Second), secs-1)
		c[i] += scale
		peak = max(peak, c[i])
	}
	const h = 160.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	shade(&b, s, faults, h-axisH)
	fmt.Fprintf(&b, `<text x="2" y="12" font-size="10">%d/s</text><text x="2" y="%.0f" font-size="10">0</text>`, peak, h-axisH)
	for _, typ := range []history.Type{history.Ok, history.Fail, history.Info} {
		c := counts[typ]
		if c == nil {
			continue
		}
		var pts []string
		for i, n := range c {
			t := s.from + time.Duration(i)*time.Second + time.Second/2
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", s.x(t), (h-axisH)*(1-float64(n)/float64(peak))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s per second</title></polyline>`,
			outcomeColors[typ], strings.Join(pts, " "), typ)
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg>`)
	return b.String()
}

// processes lists the processes of ops, observer first, then clients.
func processes(ops []history.Pair) []int {
	var ps []int
	for _, o := range ops {
		if !slices.Contains(ps, o.Inv.Process) {
			ps = append(ps, o.Inv.Process)
		}
	}
	slices.Sort(ps)
	return ps
}

// clockFault is what a clock fault window says it did to one process:
// "n2 +30s (realtime)", "n1 strobe 0/+3s every 100ms (all)".
var clockFault = regexp.MustCompile(`^(\S+) (strobe 0/)?([+-]?[0-9][^ ]*)`)

// clocks plots, for each process a clock fault hit, its clock offset over
// the run: 0, then the offset while the fault was in force (a strobe, which
// flips between 0 and the offset, is drawn as a band between the two).
func clocks(s span, faults []history.FaultWindow) string {
	type shift struct {
		from, to time.Duration
		offset   time.Duration
		strobe   bool
		label    string
	}
	byProc := map[string][]shift{}
	var procs []string
	peak := time.Second
	for _, f := range faults {
		if f.Kind != "clock" {
			continue
		}
		for _, v := range f.Victims {
			m := clockFault.FindStringSubmatch(v)
			if m == nil {
				continue
			}
			d, err := time.ParseDuration(m[3])
			if err != nil {
				continue
			}
			if _, ok := byProc[m[1]]; !ok {
				procs = append(procs, m[1])
			}
			byProc[m[1]] = append(byProc[m[1]], shift{f.Start, f.End, d, m[2] != "", v})
			peak = max(peak, d.Abs())
		}
	}
	if len(procs) == 0 {
		return ""
	}
	slices.Sort(procs)
	const rowH = 60.0
	h := float64(len(procs))*rowH + axisH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	for i, p := range procs {
		top := float64(i) * rowH
		zero := top + rowH/2
		y := func(d time.Duration) float64 { return zero - (rowH/2-6)*d.Seconds()/peak.Seconds() }
		fmt.Fprintf(&b, `<text x="2" y="%.0f" font-size="10">%s</text><line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#bbb"/>`,
			zero+3, html.EscapeString(p), labelW, zero, plotWidth-10, zero)
		for _, sh := range byProc[p] {
			x0, x1 := s.x(sh.from), s.x(sh.to)
			top, bottom := min(y(sh.offset), zero), max(y(sh.offset), zero)
			opacity := "0.9"
			if sh.strobe {
				opacity = "0.35"
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#3b7dd8" opacity="%s"><title>%s, %.3fs to %.3fs</title></rect><text x="%.1f" y="%.1f" font-size="10">%s</text>`,
				x0, top, max(x1-x0, 1), max(bottom-top, 1), opacity, html.EscapeString(sh.label), sh.from.Seconds(), sh.to.Seconds(),
				x1+3, zero-3, html.EscapeString(strings.TrimPrefix(sh.label, p+" ")))
		}
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg>`)
	return b.String()
}
