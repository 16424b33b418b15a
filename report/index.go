package report

import (
	"html/template"
	"path/filepath"
	"time"
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
}

// WriteIndex writes results/index.html, listing runs (newest first, as
// given) with their verdicts (a run that did not finish cleanly as
// incomplete, with the reason) and links to their reports.
func WriteIndex(results string, runs []IndexEntry) error {
	return render(filepath.Join(results, "index.html"), indexTemplate, runs)
}

var indexTemplate = template.Must(template.Must(badgeTemplate.Clone()).New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos: results</title>` + style + `</head><body>
<h1>chaos: results</h1>
<p>{{len .}} runs, newest first.</p>
<table><tr><th>started</th><th>plan</th><th>seed</th><th>verdict</th><th>expected</th><th></th></tr>
{{range .}}<tr><td>{{.Started.Format "2006-01-02 15:04:05"}}</td><td>{{.Plan}}</td><td>{{.Seed}}</td>
<td>{{template "badge" status .Verdict .Incomplete}}{{with .Incomplete}}<br><small>incomplete: {{.}}</small>{{end}}</td>
<td>{{with expectation .Expect .AsExpected}}{{template "badge" .}}{{else}}{{with .Expect}}{{.}}{{end}}{{end}}</td>
<td><a href="{{.Path}}/report.html">report</a> · <a href="{{.Path}}/summary.md">summary</a> · <a href="{{.Path}}/">files</a></td></tr>
{{end}}</table>
</body></html>
`))
