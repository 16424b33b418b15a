package report

import (
	"fmt"
	"html/template"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
)

// IndexEntry is one run in the results index.
type IndexEntry struct {
	Path    string // the run's folder, relative to the results folder
	Plan    string
	Seed    int64
	Started time.Time
	Verdict string // NotAnalyzed if the run has no analysis
	// Incomplete says why the run did not finish cleanly; "" if it did.
	Incomplete string
	// Expect is the plan's expect field, and AsExpected whether the
	// verdict met it (nil: the plan expects nothing).
	Expect     string
	AsExpected *bool
	// Target is the backend the run tested, Workload what drove it, and
	// Versions the versions its servers reported, each once.
	Target, Workload string
	Versions         []string
	// Chaos is the chaos build that judged the run ("" if unrecorded).
	Chaos string
	// Duration is from the run's start to its end record (0: none).
	Duration time.Duration
	// Findings are each checker's findings, by kind.
	Findings []CheckerFindings
}

// CheckerFindings are the findings of one checker of a run: Kinds counts
// those it listed by kind, Total all it counted (it may list only the
// first few).
type CheckerFindings struct {
	Checker string
	Kinds   []KindCount
	Total   int
}

// KindCount is how many findings of one kind a checker listed.
type KindCount struct {
	Kind  string
	Count int
}

// String is "checker: kind ×count, ..." and how many more were counted
// than listed.
func (c CheckerFindings) String() string {
	var kinds []string
	listed := 0
	for _, k := range c.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k.Kind, k.Count))
		listed += k.Count
	}
	s := c.Checker + ": " + strings.Join(kinds, ", ")
	if more := c.Total - listed; more > 0 {
		if listed == 0 {
			return fmt.Sprintf("%s: %d, kinds not listed", c.Checker, c.Total)
		}
		s += fmt.Sprintf(" (%d in all, %d not listed)", c.Total, more)
	}
	return s
}

// FindingsByKind is, for each checker of rep that found something, the
// findings it listed counted by kind (in the order of their first
// listing) and how many it counted in all.
func FindingsByKind(rep analysis.Report) []CheckerFindings {
	var out []CheckerFindings
	for _, res := range rep.Results {
		c := CheckerFindings{Checker: res.Checker, Total: max(res.FindingsTotal, len(res.Findings))}
		if c.Total == 0 {
			continue
		}
		for _, f := range res.Findings {
			i := slices.IndexFunc(c.Kinds, func(k KindCount) bool { return k.Kind == f.Kind })
			if i < 0 {
				c.Kinds = append(c.Kinds, KindCount{Kind: f.Kind})
				i = len(c.Kinds) - 1
			}
			c.Kinds[i].Count++
		}
		out = append(out, c)
	}
	return out
}

// planRate is, for one plan, how its stored runs came out.
type planRate struct {
	Plan                        string
	Runs                        int
	Valid, Invalid, Undecided   int
	AsExpected, WithExpectation int
}

// index is what the index page shows.
type index struct {
	Runs                     []IndexEntry
	Rates                    []planRate
	Plans, Targets, Verdicts []string
}

// WriteIndex writes results/index.html, listing runs (newest first, as
// given) with their verdicts (a run that did not finish cleanly as
// incomplete, with the reason), whether they met their plans'
// expectations, their findings by kind, duration, target and versions,
// and links to their reports and files; then, for each plan, how its
// stored runs came out. Selects filter the list by plan, target and
// verdict with a small script; without it, the page lists every run.
func WriteIndex(results string, runs []IndexEntry) error {
	x := index{Runs: runs}
	rates := map[string]*planRate{}
	for _, r := range runs {
		p := rates[r.Plan]
		if p == nil {
			p = &planRate{Plan: r.Plan}
			rates[r.Plan] = p
		}
		p.Runs++
		switch runStatus(r.Verdict, r.Incomplete).Class {
		case "valid":
			p.Valid++
		case "invalid":
			p.Invalid++
		default: // unknown, incomplete or not analyzed: as the exit code, undecided
			p.Undecided++
		}
		if r.AsExpected != nil {
			p.WithExpectation++
			if *r.AsExpected {
				p.AsExpected++
			}
		}
		x.Plans = append(x.Plans, r.Plan)
		x.Targets = append(x.Targets, r.Target)
		x.Verdicts = append(x.Verdicts, runStatus(r.Verdict, r.Incomplete).Text)
	}
	for _, s := range []*[]string{&x.Plans, &x.Targets, &x.Verdicts} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	for _, p := range x.Plans {
		x.Rates = append(x.Rates, *rates[p])
	}
	return render(filepath.Join(results, "index.html"), indexTemplate, x)
}

var indexFuncs = template.FuncMap{
	"plural": func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	},
	"rate": func(n, of int) string {
		if of == 0 {
			return "–"
		}
		return fmt.Sprintf("%d (%.0f%%)", n, 100*float64(n)/float64(of))
	},
	"duration": func(d time.Duration) string {
		switch {
		case d <= 0:
			return "–"
		case d < time.Minute:
			return fmt.Sprintf("%.1fs", d.Seconds())
		case d < time.Hour:
			return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
		}
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	},
	// result is whether a verdict met its plan's expectation, as a badge
	// (the expected verdict has its own column).
	"result": func(met *bool) *status {
		switch {
		case met == nil:
			return nil
		case *met:
			return &status{"as-expected", "as expected"}
		}
		return &status{"unexpected", "unexpected"}
	},
	"orDash": func(s string) string {
		if s == "" {
			return "–"
		}
		return s
	},
}

// indexCSS is the index's own: the filters, the run table's lines and
// small print.
const indexCSS = `<style>
body{max-width:1400px}
table.runs td,table.runs th,table.rates td,table.rates th{border-bottom:1px solid #e6e6e6;padding:4px 12px 4px 0}
table.rates td.n{text-align:right}
table.runs th,table.rates th{border-bottom:1px solid #bbb}
td small,.small{color:#555;font-size:12px}
ul.findings{margin:0;padding:0;list-style:none;font-size:13px}
table.runs .verdict,td.links{white-space:nowrap}
#filters{margin:8px 0 12px;display:flex;gap:18px;align-items:center;flex-wrap:wrap} #filters[hidden]{display:none}
#filters label{font-size:13px} #filters select{margin-left:4px}
</style>`

// indexScript shows the filters (hidden without script, so that a page
// read without it shows no dead controls) and hides the rows they leave
// out.
const indexScript = `<script>
(function(){
  var f=document.getElementById("filters"); f.hidden=false;
  var sels=f.querySelectorAll("select"), rows=document.querySelectorAll("table.runs tbody tr");
  function apply(){
    var shown=0;
    rows.forEach(function(r){
      var ok=true;
      sels.forEach(function(s){ if(s.value!=="" && r.dataset[s.name]!==s.value) ok=false; });
      r.hidden=!ok; if(ok) shown++;
    });
    document.getElementById("shown").textContent = shown===rows.length ? "" : shown+" of "+rows.length+" runs shown";
  }
  sels.forEach(function(s){ s.addEventListener("change", apply); });
  apply();
})();
</script>`

var indexTemplate = template.Must(template.Must(badgeTemplate.Clone()).Funcs(indexFuncs).New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos: results</title>` + style + indexCSS + `</head><body>
<h1>chaos: results</h1>
<p>{{plural (len .Runs) "run"}}, newest first.</p>
<div id="filters" hidden>
<label>plan<select name="plan"><option value="">all</option>{{range .Plans}}<option>{{.}}</option>{{end}}</select></label>
<label>backend<select name="target"><option value="">all</option>{{range .Targets}}<option>{{orDash .}}</option>{{end}}</select></label>
<label>verdict<select name="verdict"><option value="">all</option>{{range .Verdicts}}<option>{{.}}</option>{{end}}</select></label>
<label>result<select name="result"><option value="">all</option><option>as expected</option><option>unexpected</option><option value="–">no expectation</option></select></label>
<span id="shown" class="small"></span>
</div>
<table class="runs"><thead><tr><th>started</th><th>plan</th><th>backend, versions</th><th>verdict</th><th>expected</th><th>result</th><th>findings by kind</th><th>duration</th><th></th></tr></thead>
<tbody>
{{range .Runs}}{{$s := status .Verdict .Incomplete}}<tr data-plan="{{.Plan}}" data-target="{{orDash .Target}}" data-verdict="{{$s.Text}}" data-result="{{with result .AsExpected}}{{.Text}}{{else}}–{{end}}">
<td>{{.Started.Format "2006-01-02 15:04:05"}}</td>
<td>{{.Plan}}<br><small>seed {{.Seed}}{{with .Workload}}, {{.}}{{end}}</small></td>
<td>{{orDash .Target}}{{with .Versions}} {{join . ", "}}{{end}}{{with .Chaos}}<br><small>chaos {{.}}</small>{{end}}</td>
<td>{{template "badge" $s}}{{with .Incomplete}}<br><small>incomplete: {{.}}</small>{{end}}</td>
<td>{{orDash .Expect}}</td>
<td>{{with result .AsExpected}}{{template "badge" .}}{{else}}–{{end}}</td>
<td>{{with .Findings}}<ul class="findings">{{range .}}<li>{{.String}}</li>{{end}}</ul>{{else}}none{{end}}</td>
<td>{{duration .Duration}}</td>
<td class="links"><a href="{{.Path}}/report.html">report</a> · <a href="{{.Path}}/summary.md">summary</a> · <a href="{{.Path}}/">files</a></td></tr>
{{end}}</tbody></table>
{{with .Rates}}<h2>Verdicts by plan</h2>
<p class="small">Of each plan's stored runs: how many were valid, invalid, and undecided (the analysis could not decide, or the run did not finish or was not analyzed), and how many met the plan's expect field, of those whose plan had one.</p>
<table class="rates"><thead><tr><th>plan</th><th>runs</th><th>valid</th><th>invalid</th><th>undecided</th><th>as expected</th></tr></thead><tbody>
{{range .}}<tr><td>{{.Plan}}</td><td class="n">{{.Runs}}</td><td class="n">{{rate .Valid .Runs}}</td><td class="n">{{rate .Invalid .Runs}}</td><td class="n">{{rate .Undecided .Runs}}</td>
<td class="n">{{if .WithExpectation}}{{.AsExpected}} of {{.WithExpectation}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
` + indexScript + `
</body></html>
`))
