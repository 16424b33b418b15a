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
