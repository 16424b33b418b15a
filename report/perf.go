package report

// Latency and throughput, per f: an acquire that waits out a lease and a
// write that returns at once are different stories, and one cloud of dots
// mixing them tells neither. Each f has a colour, named in a legend.

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// fColors are the colours of the fs, in order of first appearance; none
// is the green or red of an outcome.
var fColors = []string{"#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"}

// fNames lists the fs of ops in order of first appearance, each with its colour.
func fNames(ops []history.Pair) ([]string, map[string]string) {
	var names []string
	colour := map[string]string{}
	for _, o := range ops {
		if _, ok := colour[o.Inv.F]; !ok {
			colour[o.Inv.F] = fColors[len(names)%len(fColors)]
			names = append(names, o.Inv.F)
		}
	}
	return names, colour
}

// quantileBuckets is how many stretches of the run the quantile lines
// are computed over.
const quantileBuckets = 40

var quantiles = []struct {
	q    float64
	name string
	dash string
	w    float64
}{{0.5, "p50", "", 2}, {0.95, "p95", "5 3", 1.3}, {0.99, "p99", "1.5 2.5", 1.3}}

// latency plots each completed operation's latency (log scale) at its
// completion, coloured by f (hollow: failed or unknown), and, per f, its
// p50, p95 and p99 over stretches of the run; a legend gives each f's
// quantiles over the whole run.
func latency(s span, ops []history.Pair, faults []history.FaultWindow) string {
	names, colour := fNames(ops)
	var pts, bad []history.Pair
	lat := map[string][][]float64{} // f -> bucket -> seconds
	all := map[string][]float64{}
	for _, o := range ops {
		if o.Done == nil {
			continue
		}
		if o.Done.Type == history.Ok {
			pts = append(pts, o)
		} else {
			bad = append(bad, o)
		}
		d := (o.Done.Time - o.Inv.Time).Seconds()
		if lat[o.Inv.F] == nil {
			lat[o.Inv.F] = make([][]float64, quantileBuckets)
		}
		i := s.bucket(o.Done.Time, quantileBuckets)
		lat[o.Inv.F][i] = append(lat[o.Inv.F][i], d)
		all[o.Inv.F] = append(all[o.Inv.F], d)
	}
	bad = sample(bad, maxPoints/2)
	pts = append(sample(pts, maxPoints-len(bad)), bad...)
	const h = 240.0
	lo, hi := math.Log10(1e-4), math.Log10(10) // 0.1 ms to 10 s
	y := func(secs float64) float64 {
		v := math.Log10(max(secs, 1e-4))
		return 4 + (h-axisH-4)*(1-(min(v, hi)-lo)/(hi-lo))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	shade(&b, s, faults, h-axisH)
	for _, l := range []struct {
		d     float64
		label string
	}{{1e-4, "0.1ms"}, {1e-3, "1ms"}, {1e-2, "10ms"}, {0.1, "100ms"}, {1, "1s"}, {10, "10s"}} {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`,
			labelW, y(l.d), plotWidth-10, y(l.d), labelW-4, y(l.d)+3, l.label)
	}
	fmt.Fprintf(&b, `<text x="2" y="%.0f" font-size="10" transform="rotate(-90 10 %.0f)">latency</text>`, h/2, h/2)
	for _, o := range pts {
		c := colour[o.Inv.F]
		fill := `fill="` + c + `" fill-opacity="0.45"`
		if o.Done.Type != history.Ok {
			fill = `fill="none" stroke="` + c + `"`
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.8" %s/>`, s.x(o.Done.Time), y((o.Done.Time - o.Inv.Time).Seconds()), fill)
	}
	for _, f := range names {
		for _, q := range quantiles {
			var segs [][]string
			var cur []string
			for i, ds := range lat[f] {
				if len(ds) == 0 {
					if len(cur) > 0 {
						segs, cur = append(segs, cur), nil
					}
					continue
				}
				slices.Sort(ds)
				cur = append(cur, fmt.Sprintf("%.1f,%.1f", s.x(s.bucketMid(i, quantileBuckets)), y(quantile(ds, q.q))))
			}
			segs = append(segs, cur)
			for _, seg := range segs {
				if len(seg) == 1 { // a lone bucket: a short tick, so it shows
					seg = append(seg, seg[0])
				}
				if len(seg) == 0 {
					continue
				}
				fmt.Fprintf(&b, `<polyline class="q" fill="none" stroke="%s" stroke-width="%g" stroke-dasharray="%s" stroke-linecap="round" points="%s"><title>%s %s</title></polyline>`,
					colour[f], q.w, q.dash, strings.Join(seg, " "), html.EscapeString(f), q.name)
			}
		}
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg>`)
	// The legend: per f, its colour and its quantiles over the run.
	b.WriteString(`<div class="legend">`)
	for _, f := range names {
		ds := all[f]
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		fmt.Fprintf(&b, `<span style="background:%s"></span><b>%s</b> p50 %s · p95 %s · p99 %s · max %s (%d)`, colour[f], html.EscapeString(f),
			secsShort(quantile(ds, 0.5)), secsShort(quantile(ds, 0.95)), secsShort(quantile(ds, 0.99)), secsShort(ds[len(ds)-1]), len(ds))
	}
	b.WriteString(`<br>lines: <svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#333" stroke-width="2"/></svg> p50 <svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#333" stroke-width="1.3" stroke-dasharray="5 3"/></svg> p95 <svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#333" stroke-width="1.3" stroke-dasharray="1.5 2.5" stroke-linecap="round"/></svg> p99 over stretches of the run · dots: filled ok, hollow failed or unknown</div>`)
	return b.String()
}

// quantile is the q-quantile of sorted ds (nearest rank).
func quantile(ds []float64, q float64) float64 {
	return ds[min(len(ds)-1, max(0, int(math.Ceil(q*float64(len(ds))))-1))]
}

func secsShort(secs float64) string {
	switch {
	case secs < 1e-3:
		return fmt.Sprintf("%.0fµs", secs*1e6)
	case secs < 1:
		return fmt.Sprintf("%.3gms", secs*1e3)
	}
	return fmt.Sprintf("%.3gs", secs)
}

func (s span) bucket(t time.Duration, n int) int {
	if s.to <= s.from {
		return 0
	}
	return min(n-1, max(0, int(float64(t-s.from)/float64(s.to-s.from)*float64(n))))
}

func (s span) bucketMid(i, n int) time.Duration {
	return s.from + time.Duration((float64(i)+0.5)/float64(n)*float64(s.to-s.from))
}

// throughput plots completions per second of each f, each completion
// counting as scale (a sample of one operation in scale stands for them
// all), and those that did not succeed, of every f, dashed.
func throughput(s span, ops []history.Pair, faults []history.FaultWindow, scale int) string {
	names, colour := fNames(ops)
	secs := int((s.to-s.from)/time.Second) + 1
	counts := map[string][]int{}
	const notOk = "\x00not ok"
	peak := 1
	count := func(key string, i int) {
		c := counts[key]
		if c == nil {
			c = make([]int, secs)
			counts[key] = c
		}
		c[i] += scale
		peak = max(peak, c[i])
	}
	for _, o := range ops {
		if o.Done == nil {
			continue
		}
		i := min(max(int((o.Done.Time-s.from)/time.Second), 0), secs-1)
		count(o.Inv.F, i)
		if o.Done.Type != history.Ok {
			count(notOk, i)
		}
	}
	const h = 180.0
	top := 8.0
	y := func(n int) float64 { return top + (h-axisH-top)*(1-float64(n)/float64(peak)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %.0f" width="%d" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, plotWidth, h, plotWidth, h)
	shade(&b, s, faults, h-axisH)
	step := max(1, int(niceStep(float64(peak)/4)))
	for n := 0; n < peak; n += step {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/><text x="%d" y="%.1f" font-size="10" text-anchor="end">%d</text>`,
			labelW, y(n), plotWidth-10, y(n), labelW-4, y(n)+3, n)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/><text x="%d" y="%.1f" font-size="10" text-anchor="end">%d/s</text>`,
		labelW, y(peak), plotWidth-10, y(peak), labelW-4, y(peak)+3, peak)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%d" y2="%.0f" stroke="#888"/>`, labelW, top, labelW, h-axisH)
	keys := append(slices.Clone(names), notOk)
	for _, key := range keys {
		c := counts[key]
		if c == nil {
			continue
		}
		var pts []string
		for i, n := range c {
			t := s.from + time.Duration(i)*time.Second + time.Second/2
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", s.x(t), y(n)))
		}
		stroke, name := colour[key], key
		if key == notOk {
			stroke, name = "#d64545", "failed or unknown, every f"
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.2" stroke-dasharray="4 3" points="%s"><title>%s per second</title></polyline>`, stroke, strings.Join(pts, " "), name)
			continue
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"><title>%s completions per second</title></polyline>`,
			stroke, strings.Join(pts, " "), html.EscapeString(name))
	}
	timeAxis(&b, s, h-axisH)
	b.WriteString(`</svg><div class="legend">completions per second:`)
	for _, f := range names {
		total := 0
		for _, n := range counts[f] {
			total += n
		}
		fmt.Fprintf(&b, `<span style="background:%s"></span>%s (%d in all)`, colour[f], html.EscapeString(f), total)
	}
	if counts[notOk] != nil {
		b.WriteString(`<span style="background:repeating-linear-gradient(90deg,#d64545 0 4px,#fff 4px 7px);height:3px;vertical-align:middle"></span>failed or unknown (every f)`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// maxPoints bounds the points of the latency plot: beyond it, ok
// operations are sampled evenly; failed and unknown ones are all kept
// (up to the bound), since they are what a reader looks for.
const maxPoints = 20000

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
