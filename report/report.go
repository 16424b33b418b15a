// Package report renders a run's results folder as report.html: one page
// that opens offline (inline CSS and SVG; no script, font or request),
// showing the verdict and each finding with its operations (a cycle of
// transactions drawn as boxes and labelled edges), what ran, a
// timeline of every process's operations with the faults shaded, latency
// and throughput over time, and links to porcupine's visualizations and
// the nodes' and clients' logs.
package report

import (
	"errors"
	"fmt"
	"html/template"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/runfolder"
)

// Run is what the report shows of one run.
type Run struct {
	Dir      string // the run's folder, where report.html is written
	Plan     string
	Seed     int64
	Target   string
	Nodes    int
	Workload string
	Resource string
	Started  time.Time
	Versions map[string]string
	// Servers are the versions the servers reported, by node.
	Servers map[string]string
	// Config is the server settings the target ran with.
	Config  map[string]string
	Report  analysis.Report
	History []history.Op
	// SampledEvery, above 1, says that History is a sample of a run too
	// long to draw whole (history.Sample): every fault, and one client
	// operation in SampledEvery.
	SampledEvery int
	// Incomplete says why the run did not finish cleanly; "" if it did.
	Incomplete string
	// Expect is the plan's expect field, and AsExpected whether the
	// verdict met it (nil: the plan expects nothing).
	Expect     string
	AsExpected *bool
}

// pageOps is how many operations one page of the timeline draws: more
// would make a page too heavy to scroll.
const pageOps = 2000

// Write renders r as r.Dir/report.html, with junit.xml (a test case per
// checker) and summary.md (for a CI job summary) beside it, and the timeline's further pages,
// if the run has more operations than one page holds, as
// r.Dir/timeline/page-N.html.
func Write(r Run) error {
	if r.SampledEvery > 1 {
		r.History = withFindingOps(r.History, r.Report)
	}
	ops := history.Pairs(r.History, func(op *history.Op) bool { return op.Process != history.Nemesis })
	faults := history.FaultWindows(r.History)
	whole := span{}
	if len(r.History) > 0 {
		whole.to = r.History[len(r.History)-1].Time
	}
	procs := processes(ops)
	pages := paginate(ops, whole)
	if err := os.RemoveAll(filepath.Join(r.Dir, "timeline")); err != nil {
		return err
	}
	drawn := choosePages(pages, r.Report)
	checkers, marked := listFindings(r.Report, placeOps(pages, drawn, r.Report))
	holds := lockHolds(r.History, whole.to)
	v := view{Run: r, Ops: len(ops), Duration: whole.to.Round(time.Millisecond),
		Timeline:   template.HTML(timeline(pages[0].span, procs, pages[0].ops, faults, holds, marked, "")),
		Latency:    template.HTML(latency(whole, ops, faults)),
		Throughput: template.HTML(throughput(whole, ops, faults, max(1, r.SampledEvery))),
		Clocks:     template.HTML(clocks(whole, faults)),
		Checkers:   checkers,
		Holds:      len(holds) > 0,
		Faults:     faults,
		Missed:     history.FaultsMissed(r.History),
		FaultKinds: map[string]string{},
		Links:      links(r.Dir)}
	for _, f := range faults {
		v.FaultKinds[f.Kind] = history.FaultColor(f.Kind)
	}
	v.PagesLeftOut = len(pages) - len(drawn)
	for i, p := range pages {
		if drawn[i] {
			v.Pages = append(v.Pages, pageLink{N: i + 1, From: p.span.from.Seconds(), To: p.span.to.Seconds(), Ops: len(p.ops)})
		}
	}
	for k, l := range v.Pages[1:] {
		p := pages[l.N-1]
		page := pageView{Plan: r.Plan, N: l.N, Of: len(pages), From: l.From, To: l.To, Prev: v.Pages[k].N, Holds: v.Holds,
			Timeline: template.HTML(timeline(p.span, procs, p.ops, faults, holds, marked, "../report.html"))}
		if k+2 < len(v.Pages) {
			page.Next = v.Pages[k+2].N
		}
		if err := render(filepath.Join(r.Dir, "timeline", fmt.Sprintf("page-%d.html", l.N)), pageTemplate, page); err != nil {
			return err
		}
	}
	if err := errors.Join(writeJUnit(r, whole.to.Seconds()), writeSummary(r)); err != nil {
		return err
	}
	return render(runfolder.Folder(r.Dir).Path(runfolder.ReportFile), reportTemplate, v)
}

// maxPages bounds the timeline pages drawn: a million operations would
// make 500 pages and hundreds of megabytes.
const maxPages = 60

// choosePages picks the pages to draw, at most maxPages: the first, those
// holding a finding's operations, then pages spread evenly over the run.
func choosePages(pages []page, rep analysis.Report) map[int]bool {
	drawn := map[int]bool{0: true}
	pageOf := func(index int) int {
		return max(0, sort.Search(len(pages), func(i int) bool { return pages[i].ops[0].Inv.Index > index })-1)
	}
	if len(pages[0].ops) > 0 {
		for _, r := range rep.Results {
			for _, f := range r.Findings {
				for _, op := range f.Ops {
					if len(drawn) < maxPages/2 {
						drawn[pageOf(op.Index)] = true
					}
				}
			}
		}
	}
	for i := 0; i < len(pages) && len(drawn) < maxPages; i += max(1, len(pages)/maxPages) {
		drawn[i] = true
	}
	return drawn
}

// page is one page of the timeline: pageOps operations by invocation,
// over the time from the first's invocation to the last's completion.
type page struct {
	span span
	ops  []history.Pair
}

func paginate(ops []history.Pair, whole span) []page {
	if len(ops) == 0 {
		return []page{{span: whole}}
	}
	var pages []page
	for len(ops) > 0 {
		n := min(len(ops), pageOps)
		p := page{ops: ops[:n], span: span{from: ops[0].Inv.Time}}
		for _, o := range p.ops {
			end := whole.to
			if o.Done != nil {
				end = o.Done.Time
			}
			p.span.to = max(p.span.to, end)
		}
		if len(pages) == 0 {
			p.span.from = whole.from // the first page starts with the run
		}
		pages = append(pages, p)
		ops = ops[n:]
	}
	return pages
}

// link is a file of the run's folder the report points at.
type link struct{ Name, Path string }

// links lists porcupine's visualizations, the logs and the raw files.
func links(dir string) map[string][]link {
	out := map[string][]link{}
	add := func(group, pattern string) {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		slices.Sort(files)
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			out[group] = append(out[group], link{Name: filepath.Base(f), Path: filepath.ToSlash(rel)})
		}
	}
	add("visualizations", "linearizability-*.html")
	add("logs", runfolder.LogsDir+"/*.log")
	for _, f := range []string{runfolder.HistoryFile, runfolder.ResourceFile, runfolder.AnalysisFile, runfolder.InfoFile, runfolder.PlanFile, runfolder.JUnitFile, runfolder.SummaryFile} {
		add("files", f)
	}
	return out
}

type view struct {
	Run
	Ops                           int
	Duration                      time.Duration
	Timeline, Latency, Throughput template.HTML
	Clocks                        template.HTML // empty when no clock fault ran
	Checkers                      []checkerView // the results, findings numbered
	Holds                         bool          // the timeline draws lock holds
	Faults                        []history.FaultWindow
	Missed                        []history.FaultWindow // faults that hit nobody
	FaultKinds                    map[string]string     // kind -> colour, of the kinds in Faults
	Pages                         []pageLink
	PagesLeftOut                  int // pages of the timeline not drawn
	Links                         map[string][]link
}

type pageLink struct {
	N        int
	From, To float64
	Ops      int
}

type pageView struct {
	Plan  string
	N, Of int
	// Prev and Next are the drawn pages before and after; Next is 0 at the end.
	Prev, Next int
	From, To   float64
	Timeline   template.HTML
	Holds      bool
}

func render(path string, t *template.Template, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := t.Execute(f, v); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

var funcs = template.FuncMap{
	"join":           strings.Join,
	"secs":           func(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) },
	"op":             func(o history.Op) string { return o.String() },
	"colour":         history.FaultColor,
	"stat":           func(v any) string { return strings.TrimSuffix(fmt.Sprint(v), ".000") },
	"sorted":         func(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) },
	"sortedVersions": func(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) },
	"status":         runStatus,
	"expectation":    expectation,
	"incompleteNote": func() string { return incompleteNote },
	"cycle":          cycleSVG,
}

const style = `<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1160px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.valid{background:#2e9d4a}.invalid{background:#d64545}.unknown{background:#e8a33d}.incomplete{background:#7a6f9b}.not-analyzed{background:#999}.as-expected{background:#fff;color:#2e7d3e;border:1px solid #2e7d3e}.unexpected{background:#fff;color:#c03030;border:1px solid #c03030}
table{border-collapse:collapse} td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
pre{background:#f6f6f6;padding:6px 8px;overflow-x:auto;font-size:12px;margin:4px 0 12px}
.finding{margin:10px 0 0} .kind{font-weight:600} .legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
svg.plot{display:block;max-width:100%;height:auto;border:1px solid #eee;margin:6px 0}
</style>`

var reportTemplate = template.Must(template.Must(template.Must(badgeTemplate.Clone()).AddParseTree("legend", legendTemplate.Tree)).New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos: {{.Plan}} (seed {{.Seed}})</title>` + style + timelineCSS + `</head><body>
<h1>{{.Plan}} {{template "badge" status (print .Report.Verdict) .Incomplete}}{{with expectation .Expect .AsExpected}} {{template "badge" .}}{{end}}</h1>
{{with .Incomplete}}<p><b>incomplete: {{.}}</b><br>{{incompleteNote}}</p>{{end}}
<div>seed {{.Seed}} · {{.Nodes}} {{.Target}} nodes · workload {{.Workload}}{{with .Resource}} · resource {{.}}{{end}} · started {{.Started.Format "2006-01-02 15:04:05 MST"}} · {{.Duration}} · {{.Report.Ops}} history entries</div>
{{with .Report.Truncated}}<p><b>History truncated:</b> {{.}}</p>{{end}}

<h2>Verdict</h2>
<table><tr><th>checker</th><th>verdict</th><th>findings</th></tr>
{{range .Report.Results}}<tr><td><a href="#{{.Checker}}">{{.Checker}}</a></td><td><span class="verdict {{.Verdict}}">{{.Verdict}}</span></td><td>{{.FindingsTotal}}</td></tr>{{end}}
</table>

<h2>Timeline</h2>
{{template "legend" .Holds}}<div class="legend">faults (the nemesis's lane names each and what it hit):{{range $k, $c := .FaultKinds}}<span style="background:{{$c}};border:1px solid #8a8a8a"></span>{{$k}}{{end}}</div>
{{if gt .SampledEvery 1}}<p>The run is too long to draw whole: the timeline, latency and throughput show one client operation in {{.SampledEvery}}, spread evenly over the run (throughput scaled up to match), and every fault. The findings below are from the whole history.</p>{{end}}
{{.Timeline}}
{{if gt (len .Pages) 1}}<p>Pages of the timeline ({{len .Pages}} drawn{{with .PagesLeftOut}}, {{.}} more not drawn: drawn are the first, those with findings, and pages spread over the run{{end}}; {{.Ops}} operations in all):
{{range .Pages}}{{if eq .N 1}}1 (above){{else}} · <a href="timeline/page-{{.N}}.html">{{.N}}</a>{{end}} <small>({{printf "%.1f" .From}}–{{printf "%.1f" .To}}s)</small>{{end}}</p>{{end}}

<h2>Latency</h2>
<p>Each completed operation at its completion time, its latency on a log scale, coloured by f; for each f, lines of its p50, p95 and p99 over stretches of the run; faults shaded.</p>
{{.Latency}}
<h2>Throughput</h2>
<p>Completions per second of each f, and of those that failed or whose outcome is unknown; faults shaded.</p>
{{.Throughput}}
{{with .Clocks}}<h2>Clock offsets</h2>
<p>Each process a clock fault hit: its offset while the fault was in force (pale: a strobe, flipping between 0 and the offset).</p>
{{.}}{{end}}

<h2>Findings</h2>
{{range .Checkers}}
<h3 id="{{.Checker}}">{{.Checker}}: <span class="verdict {{.Verdict}}">{{.Verdict}}</span>{{if .FindingsTotal}} {{.FindingsTotal}} findings{{if gt .FindingsTotal (len .Findings)}}, the first {{len .Findings}} listed{{end}}{{end}}</h3>
{{range .Notes}}<p>{{.}}</p>{{end}}
{{if .Stats}}<details{{if not .Findings}} open{{end}}><summary>statistics</summary>{{.Stats}}</details>{{end}}
{{range .Groups}}<div class="kindhead">{{.Kind}}: {{.Total}}{{if gt .Total (len .Findings)}} ({{len .Findings}} listed){{end}}</div>
{{range $i, $f := .Findings}}<details class="finding" id="finding-{{$f.N}}"{{if lt $i 3}} open{{end}}><summary><b>{{$f.N}}.</b> {{$f.Explanation}} <a class="on" href="{{$f.Show}}">on the timeline</a></summary>
{{with $f.Cycle}}{{cycle .}}{{end}}<pre>{{range $f.Ops}}{{if .Href}}<a href="{{.Href}}">#{{.Index}}</a>{{else}}#{{.Index}}{{end}}{{.Rest}}
{{end}}{{with $f.ResourceLines}}resource.jsonl lines {{.}}{{end}}</pre></details>{{end}}
{{end}}{{end}}

<h2>Faults</h2>
{{if .Faults}}<table><tr><th>kind</th><th>what was hit</th><th>from</th><th>to</th></tr>
{{range .Faults}}<tr><td><span style="background:{{colour .Kind}}">&nbsp;{{.Kind}}&nbsp;</span></td><td>{{join .Victims ", "}}</td><td>{{secs .Start}} (#{{.From}})</td><td>{{secs .End}}{{if lt .To 0}} (never healed){{else}} (#{{.To}}){{end}}</td></tr>
{{end}}</table>{{else}}<p>No fault was injected.</p>{{end}}
{{with .Missed}}<p>Faults that hit nobody (no one held the role they target, such as the lock, before their time was up): {{range $i, $m := .}}{{if $i}}, {{end}}{{$m.Kind}} from {{secs $m.Start}} (#{{$m.From}}) to {{secs $m.End}}{{end}}.</p>{{end}}

<h2>Software</h2>
<table>{{$s := .Servers}}{{range sortedVersions .Servers}}<tr><td>server {{.}}</td><td>{{index $s .}}</td></tr>{{end}}
{{$v := .Versions}}{{range sortedVersions .Versions}}<tr><td>{{.}}</td><td>{{index $v .}}</td></tr>{{end}}
{{$c := .Config}}{{range sortedVersions .Config}}<tr><td>setting {{.}}</td><td>{{index $c .}}</td></tr>{{end}}</table>

<h2>Files</h2>
{{with index .Links "visualizations"}}<p>porcupine's visualization of each illegal key: {{range .}}<a href="{{.Path}}">{{.Name}}</a> {{end}}</p>{{end}}
{{with index .Links "logs"}}<p>logs: {{range .}}<a href="{{.Path}}">{{.Name}}</a> {{end}}</p>{{end}}
{{with index .Links "files"}}<p>raw: {{range .}}<a href="{{.Path}}">{{.Name}}</a> {{end}}</p>{{end}}
` + timelineScript + `
</body></html>
`))

// legendTemplate says what the timeline's marks mean; its argument says
// whether lock holds are drawn.
var legendTemplate = template.Must(template.New("legend").Funcs(funcs).Parse(`<div class="legend">operations, one lane per process:<span style="background:#2e9d4a"></span>ok<span style="background:#d64545"></span>fail<span style="background:#e8a33d"></span>info (unknown)<span style="background:#999"></span>never completed<span style="background:#fff;border:1.5px solid #000"></span>part of a finding (click: to the finding)
{{if .}}<span style="background:#dbe9fb;border:1px solid #3b7dd8;width:22px"></span>the lock held, by the holder's account, labelled with its fencing token (or session when the lock gives none){{end}} · hover for the whole operation</div>`))

var pageTemplate = template.Must(template.Must(legendTemplate.Clone()).New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos: {{.Plan}}, timeline {{.N}}/{{.Of}}</title>` + style + timelineCSS + `</head><body>
<h1>{{.Plan}}: timeline, page {{.N}} of {{.Of}}</h1>
<p>{{printf "%.3f" .From}}s to {{printf "%.3f" .To}}s · <a href="../report.html">back to the report</a>{{if gt .Prev 1}} · <a href="page-{{.Prev}}.html">previous</a>{{else}} · <a href="../report.html">previous</a>{{end}}{{with .Next}} · <a href="page-{{.}}.html">next</a>{{end}}</p>
{{template "legend" .Holds}}
{{.Timeline}}
` + timelineScript + `
</body></html>
`))
