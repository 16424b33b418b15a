package compare

import (
	"fmt"
	"html"
	"html/template"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// The charts of compare.html are inline SVG drawn here, so that the page
// stays one file that opens offline: horizontal bars, a line per row of
// the table (and sub-lines under it), each row's label linking to its
// row in the table, whose last column links its runs.

// Chart is one chart of the page: a heading, what it shows, and the SVG.
type Chart struct {
	ID, Title, Note string
	SVG             template.HTML
}

// Layout of a chart, in SVG user units (pixels at 100%).
const (
	chartWidth = 1100
	labelWidth = 370 // row labels, right-aligned against the plot
	plotLeft   = labelWidth + 10
	plotWidth  = 480
	textLeft   = plotLeft + plotWidth + 10 // the figures beside a bar
	lineHeight = 20
	axisHeight = 24
	labelChars = 58 // a label longer than this is cut, the whole in its tooltip
)

// line is one line of a bar chart: a row's (label set, linked to the
// row) or a sub-line under it (sub set, indented).
type line struct {
	label, href, tooltip string
	sub                  string // a sub-line's name, under a heading line
	heading              bool   // a line with the row's label alone, over its sub-lines
	segs                 []seg  // drawn over each other from the axis, in order
	text                 string
	runs                 []runMark // instead of bars: a square per run
}

// seg is a bar from the start of the axis to frac (0-1) of its width.
type seg struct {
	frac  float64
	fill  string
	title string
}

// runMark is a run drawn as a square coloured by its verdict, linked to
// its report.
type runMark struct{ href, fill, title string }

// tick is a mark on the axis at frac of its width.
type tick struct {
	frac  float64
	label string
}

// Colours: the report's verdict colours, and the fault colour for
// operations during faults.
const (
	colInvalid  = "#d64545"
	colUnknown  = "#e8a33d"
	colValid    = "#2e9d4a"
	colOther    = "#999999"
	colFindings = "#b03a3a"
	colP99      = "#c9d7ee"
	colP95      = "#8fb0dd"
	colP50      = "#2f5f9f"
	colDuring   = "#d9822b"
	colOutside  = "#4a7bb7"
)

// charts draws the table's charts, with runs linked relative to dir.
func (t *Table) charts(dir string) []Chart {
	if len(t.Rows) == 0 {
		return nil
	}
	lockRows := t.LockTable()
	var findShare, findPerRun, verdicts, latency, avail []line
	maxPerRun := 0.0
	for _, r := range t.Rows {
		maxPerRun = max(maxPerRun, float64(r.FindingsCounted())/float64(max(1, len(r.Runs))))
	}
	perRunAxis := niceMax(maxPerRun)
	var lats []time.Duration
	for i, r := range t.Rows {
		head := line{label: t.label(r), href: fmt.Sprintf("#row-%d", i+1), tooltip: t.label(r)}
		n := len(r.Runs)

		l := head
		with := r.RunsWithFindings()
		l.segs = []seg{{frac(with, n), colInvalid, ""}}
		l.text = fmt.Sprintf("%d of %s (%.0f%%)", with, plural(n, "run"), 100*frac(with, n))
		findShare = append(findShare, l)

		l = head
		per := float64(r.FindingsCounted()) / float64(max(1, n))
		l.segs = []seg{{per / perRunAxis, colFindings, ""}}
		l.text = fmt.Sprintf("%s per run (%s in %s)", trimFloat(per), plural(r.FindingsCounted(), "finding"), plural(n, "run"))
		findPerRun = append(findPerRun, l)

		l = head
		for j, run := range r.Runs {
			v, found := analysis.Verdict(""), 0
			if j < len(r.RunVerdicts) {
				v, found = r.RunVerdicts[j], r.RunFindings[j]
			}
			l.runs = append(l.runs, runMark{
				href:  href(rel(dir, run) + "/report.html"),
				fill:  verdictColour(v),
				title: fmt.Sprintf("%s: %s, %d findings", filepath.Base(run), v, found),
			})
		}
		verdicts = append(verdicts, l)

		heading := head
		heading.heading = true
		l = line{sub: "all ok operations"}
		if r.Lock {
			l.sub = "acquire, waiting included"
		}
		latency = append(latency, heading, latencyLine(l, r.Latency))
		lats = append(lats, r.Latency...)
		if fs := slices.Sorted(maps.Keys(r.LatencyByF)); len(fs) > 1 {
			for _, f := range fs {
				if r.Lock && f == lockop.FAcquire {
					continue // the line above
				}
				latency = append(latency, latencyLine(line{sub: f}, r.LatencyByF[f]))
				lats = append(lats, r.LatencyByF[f]...)
			}
		}

		what := "operations"
		if r.Lock {
			what = "acquisitions"
		}
		avail = append(avail, heading, shareLine(line{sub: "during faults"}, r.DuringFaultsOK, r.DuringFaults, colDuring, what), shareLine(line{sub: "outside faults"}, r.OutsideFaultsOK, r.OutsideFaults, colOutside, what))
	}
	measured := "client operation"
	if lockRows {
		measured = "acquisition (and, below it, every other kind of operation)"
	}
	lo, hi, logTicks := logAxis(lats)
	for i := range latency {
		for j := range latency[i].segs {
			latency[i].segs[j].frac = logFrac(latency[i].segs[j].frac, lo, hi)
		}
	}
	percent := []tick{{0, "0%"}, {0.25, "25%"}, {0.5, "50%"}, {0.75, "75%"}, {1, "100%"}}
	return []Chart{
		{"chart-findings", "Runs with findings", "The share of each row's runs in which a checker found an anomaly.", barChart(findShare, percent)},
		{"chart-findings-per-run", "Findings per run", "Every finding the checkers counted (listed or not), over the row's runs.", barChart(findPerRun, linearTicks(perRunAxis))},
		{"chart-runs", "Runs by verdict", "A square per run, red invalid, orange undecided, green valid; each opens the run's report.", barChart(verdicts, nil)},
		{"chart-latency", "Latency of ok operations", "p50 (dark), p95 and p99 (light) of each " + measured + " that completed ok, from invocation to completion, on a logarithmic scale.", barChart(latency, logTicks)},
		{"chart-availability", "Operations completed ok, during faults and outside them", "Of the measured operations that completed (ok, failed or unknown), the share that was ok, by whether a fault was in force when they completed.", barChart(avail, percent)},
	}
}

// label names a row as the table does: its backend, and its resource.
func (t *Table) label(r *Row) string {
	if r.Resource != "" {
		return r.backend() + ", " + r.Resource
	}
	return r.backend()
}

// latencyLine is l with bars at the p99, p95 and p50 of ds (as
// durations in frac, made fractions of the axis by the caller).
func latencyLine(l line, ds []time.Duration) line {
	if len(ds) == 0 {
		l.text = "no ok operations"
		return l
	}
	p50, p95, p99 := percentile(ds, 50), percentile(ds, 95), percentile(ds, 99)
	l.segs = []seg{{float64(p99), colP99, "p99 " + ms(p99)}, {float64(p95), colP95, "p95 " + ms(p95)}, {float64(p50), colP50, "p50 " + ms(p50)}}
	l.text = fmt.Sprintf("%s / %s / %s (%d)", ms(p50), ms(p95), ms(p99), len(ds))
	return l
}

// shareLine is l with a bar at the share of all that was ok.
func shareLine(l line, ok, all int, fill, what string) line {
	if all == 0 {
		l.text = "no " + what + " completed"
		return l
	}
	l.segs = []seg{{frac(ok, all), fill, ""}}
	l.text = fmt.Sprintf("%.0f%% ok (%d of %d)", 100*frac(ok, all), ok, all)
	return l
}

// plural is "1 run", "2 runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func frac(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

func verdictColour(v analysis.Verdict) string {
	switch v {
	case analysis.Invalid:
		return colInvalid
	case analysis.Unknown:
		return colUnknown
	case analysis.Valid:
		return colValid
	}
	return colOther
}

// trimFloat writes v with up to two decimals, without trailing zeros.
func trimFloat(v float64) string {
	s := strings.TrimRight(fmt.Sprintf("%.2f", v), "0")
	return strings.TrimSuffix(s, ".")
}

// niceMax is the smallest 1, 2 or 5 times a power of ten not below v (1
// for v ≤ 0), the end of a linear axis.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func linearTicks(end float64) []tick {
	var out []tick
	for i := 0; i <= 4; i++ {
		out = append(out, tick{float64(i) / 4, trimFloat(end * float64(i) / 4)})
	}
	return out
}

// logAxis spans the durations in whole decades, with a tick at each (and
// at 2 and 5 times each when it spans fewer than three).
func logAxis(ds []time.Duration) (lo, hi float64, ticks []tick) {
	lo, hi = math.Inf(1), 0
	for _, d := range ds {
		if d > 0 {
			lo, hi = min(lo, float64(d)), max(hi, float64(d))
		}
	}
	if hi == 0 {
		lo, hi = float64(time.Millisecond), float64(time.Second)
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	decades := int(math.Round(math.Log10(hi / lo)))
	for d := lo; d <= hi*1.0001; d *= 10 {
		ticks = append(ticks, tick{logFrac(d, lo, hi), durationTick(d)})
		if decades < 3 && d < hi/2 {
			for _, m := range []float64{2, 5} {
				ticks = append(ticks, tick{logFrac(m*d, lo, hi), durationTick(m * d)})
			}
		}
	}
	return lo, hi, ticks
}

// logFrac places the duration v (in ns) on the logarithmic axis lo-hi;
// 0 and below stay at 0.
func logFrac(v, lo, hi float64) float64 {
	if v <= lo {
		return 0
	}
	return min(1, math.Log10(v/lo)/math.Log10(hi/lo))
}

// durationTick labels an axis tick: "1 ms", "0.1 ms", "10 s".
func durationTick(ns float64) string {
	if ns >= float64(time.Second) {
		return trimFloat(ns/float64(time.Second)) + " s"
	}
	if ns >= float64(time.Microsecond) {
		return trimFloat(ns/float64(time.Millisecond)) + " ms"
	}
	return trimFloat(ns) + " ns"
}

// href is a relative path as a link.
func href(path string) string { return (&url.URL{Path: path}).String() }

// barChart draws lines as horizontal bars on one axis (none for ticks
// nil), or as rows of run squares.
func barChart(lines []line, ticks []tick) template.HTML {
	const square, gap = 14, 3
	perLine := (chartWidth - plotLeft) / (square + gap)
	height := func(l line) int {
		if l.runs == nil {
			return lineHeight
		}
		return max(1, (len(l.runs)+perLine-1)/perLine) * lineHeight
	}
	total := 8
	for _, l := range lines {
		total += height(l)
	}
	if ticks != nil {
		total += axisHeight
	}
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui,sans-serif" font-size="12">`,
		chartWidth, total, chartWidth, total)
	y := 4
	if ticks != nil {
		bottom := total - 4 - axisHeight
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#999"/>`, plotLeft, plotLeft+plotWidth, bottom, bottom)
		for _, t := range ticks {
			x := float64(plotLeft) + t.frac*plotWidth
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e2e2e2"/>`, x, x, y, bottom)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#999"/>`, x, x, bottom, bottom+4)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555" font-size="11">%s</text>`, x, bottom+16, esc(t.label))
		}
	}
	for i, l := range lines {
		h := height(l)
		if l.label != "" && i > 0 {
			fmt.Fprintf(&b, `<line x1="0" x2="%d" y1="%d" y2="%d" stroke="#e4e4e4"/>`, chartWidth, y, y)
		}
		mid := y + lineHeight/2 + 4
		switch {
		case l.heading:
			fmt.Fprintf(&b, `<a href="%s"><text x="4" y="%d" font-weight="600" fill="#1a4f8b">%s</text></a>`, esc(l.href), mid, esc(l.label))
		case l.label != "":
			text := l.label
			if r := []rune(text); len(r) > labelChars {
				text = string(r[:labelChars-1]) + "…"
			}
			fmt.Fprintf(&b, `<a href="%s"><text x="%d" y="%d" text-anchor="end" fill="#1a4f8b"><title>%s</title>%s</text></a>`,
				esc(l.href), labelWidth, mid, esc(l.tooltip), esc(text))
		case l.sub != "":
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555">%s</text>`, labelWidth, mid, esc(l.sub))
		}
		for j, m := range l.runs {
			x := plotLeft + (j%perLine)*(square+gap)
			sy := y + (j/perLine)*lineHeight + (lineHeight-square)/2
			fmt.Fprintf(&b, `<a class="run" href="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="%s"><title>%s</title></rect></a>`,
				esc(m.href), x, sy, square, square, m.fill, esc(m.title))
		}
		for _, s := range l.segs {
			w := max(0, min(1, s.frac)) * plotWidth
			if w > 0 && w < 1 {
				w = 1 // a value above zero stays visible
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s">`, plotLeft, y+4, w, lineHeight-8, s.fill)
			if s.title != "" {
				fmt.Fprintf(&b, `<title>%s</title>`, esc(s.title))
			}
			b.WriteString(`</rect>`)
		}
		if l.text != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#222">%s</text>`, textLeft, mid, esc(l.text))
		}
		y += h
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
