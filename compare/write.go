package compare

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// backend names the row's backend: workload, target, the version its
// servers reported and the settings that set it apart, and its schedule if
// the table has several.
func (r *Row) backend() string {
	b := r.Workload
	if r.ReadMode != "" {
		b += " (reads " + r.ReadMode + ")"
	}
	b += " on " + r.Target
	if r.Version != "" {
		b += " " + r.Version
	}
	if len(r.Settings) > 0 {
		b += " (" + strings.Join(r.Settings, ", ") + ")"
	}
	if r.Schedule != "" {
		b += " (schedule " + r.Schedule + ")"
	}
	return b
}

// cells are a row's columns as text, in the order of columns(lock).
func (r *Row) cells(lock bool) []string {
	out := []string{r.backend(), r.Resource, fmt.Sprintf("%d / %d", r.Invalid, len(r.Runs))}
	if !lock {
		var found []string
		for _, k := range slices.Sorted(maps.Keys(r.Findings)) {
			found = append(found, fmt.Sprintf("%s ×%d", k, r.Findings[k]))
		}
		if r.Unlisted > 0 {
			found = append(found, fmt.Sprintf("%d more not listed", r.Unlisted))
		}
		return append(out,
			fmt.Sprintf("%d / %d", r.Unknown, len(r.Runs)),
			cmp.Or(strings.Join(found, ", "), "none"),
			fmt.Sprintf("%d / %d / %d", r.OK, r.Failed, r.Indeterminate),
			fmt.Sprintf("%.0f", perSecond(r.OK, r.Seconds)),
			r.latency(),
			r.faultRates(),
		)
	}
	token := "none"
	if r.Tokens {
		token = "yes, strictly increasing"
		if !r.TokensIncreasing {
			token = "yes, NOT always increasing"
		}
	}
	return append(out,
		fmt.Sprintf("%d / %d", r.StaleRuns, len(r.Runs)),
		fmt.Sprintf("%d / %d", r.TwoHolderRuns, len(r.Runs)),
		token,
		fmt.Sprintf("%d / %d", r.StaleAccepted, r.StaleRejected),
		fmt.Sprintf("%s / %s (%d)", ms(percentile(r.Failover, 50)), ms(percentile(r.Failover, 99)), len(r.Failover)),
		r.latency(),
		fmt.Sprintf("%.2f", perSecond(r.Acquisitions, r.Seconds)),
		share(r.DuringFaultsOK, r.DuringFaults),
	)
}

// faultRates are the ok operations a second while some fault was in
// force and outside faults; "no faults" for runs without any.
func (r *Row) faultRates() string {
	outside := fmt.Sprintf("%.0f", perSecond(r.OutsideFaultsOK, r.Seconds-r.FaultSeconds))
	if r.FaultSeconds == 0 {
		return "no faults / " + outside
	}
	return fmt.Sprintf("%.0f / %s", perSecond(r.DuringFaultsOK, r.FaultSeconds), outside)
}

// latency is the p50 and p99 latency of the row's ok measured operations.
func (r *Row) latency() string {
	return fmt.Sprintf("%s / %s", ms(percentile(r.Latency, 50)), ms(percentile(r.Latency, 99)))
}

// share is the part of all that was ok, as a percentage and a count.
func share(ok, all int) string {
	if all == 0 {
		return "none"
	}
	return fmt.Sprintf("%.0f%% (%d of %d)", 100*float64(ok)/float64(all), ok, all)
}

// shown is a row's cells (or the headings) without the resource column
// when no run of the table had a resource.
func (t *Table) shown(cells []string) []string {
	if slices.ContainsFunc(t.Rows, func(r *Row) bool { return r.Resource != "" }) {
		return cells
	}
	return slices.Delete(slices.Clone(cells), 1, 2)
}

func perSecond(n int, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}

// columns are the table's headings: those of every table, then, for a
// table of lock runs, what the lock checker counted, or else the findings
// and the operations.
func columns(lock bool) []string {
	out := []string{"backend", "resource", "runs invalid / runs"}
	if !lock {
		return append(out, "runs undecided / runs", "findings by kind (count)",
			"client operations ok / failed / unknown", "ok operations per second",
			"latency of ok operations, p50 / p99", "ok operations per second, during faults / outside them")
	}
	return append(out,
		"runs with stale writes accepted / runs", "runs with two holders at once / runs",
		"fencing token", "stale writes accepted / rejected",
		"failover after the holder is hit, p50 / p99 (count)", "acquire latency, waiting included, p50 / p99",
		"acquisitions per second", "acquisitions ok during faults")
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case d == 0:
		return "–"
	case v < 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// Write writes compare.md and compare.html into dir, with run folders
// linked relative to dir.
func Write(dir, title string, t *Table) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	claim, details := t.scheduleNotes()
	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n\n", title)
	if t.Shared() {
		fmt.Fprintf(&md, "%s\n", claim)
	} else {
		fmt.Fprintf(&md, "**%s**\n\n", claim)
		for _, d := range details {
			fmt.Fprintf(&md, "- %s\n", d)
		}
	}
	lock := t.LockTable()
	cols := t.shown(columns(lock))
	fmt.Fprintf(&md, "\n| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, r := range t.Rows {
		fmt.Fprintf(&md, "| %s |\n", strings.Join(t.shown(r.cells(lock)), " | "))
	}
	if len(t.Incomplete) > 0 {
		fmt.Fprintf(&md, "\n**%s**\n\n", leftOutNote)
		for _, l := range t.Incomplete {
			fmt.Fprintf(&md, "- [%s](%s/report.html): incomplete: %s\n", filepath.Base(l.Run), rel(dir, l.Run), l.Why)
		}
	}
	md.WriteString("\nEach row comes from these runs (their report.html shows every finding):\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&md, "\n- %s:", strings.Join(t.shown([]string{r.backend(), r.Resource}), ", "))
		for _, run := range r.Runs {
			fmt.Fprintf(&md, " [%s](%s/report.html)", filepath.Base(run), rel(dir, run))
		}
	}
	md.WriteString("\n")
	if err := os.WriteFile(filepath.Join(dir, "compare.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	type runLink struct{ Name, Path, Why string }
	type htmlRow struct {
		ID    string
		Cells []string
		Runs  []runLink
	}
	var hr []htmlRow
	for i, r := range t.Rows {
		row := htmlRow{ID: fmt.Sprintf("row-%d", i+1), Cells: t.shown(r.cells(lock))}
		for _, run := range r.Runs {
			row.Runs = append(row.Runs, runLink{Name: filepath.Base(run), Path: rel(dir, run) + "/report.html"})
		}
		hr = append(hr, row)
	}
	var left []runLink
	for _, l := range t.Incomplete {
		left = append(left, runLink{filepath.Base(l.Run), rel(dir, l.Run) + "/report.html", l.Why})
	}
	f, err := os.Create(filepath.Join(dir, "compare.html"))
	if err != nil {
		return err
	}
	if err := page.Execute(f, struct {
		Title       string
		Shared      bool
		Claim       string
		Details     []string
		Columns     []string
		Rows        []htmlRow
		LeftOut     []runLink
		LeftOutNote string
		Charts      []Chart
	}{title, t.Shared(), claim, details, cols, hr, left, leftOutNote, t.charts(dir)}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// leftOutNote heads the list of runs left out of the table.
const leftOutNote = "Left out: runs that did not finish cleanly, counted neither as clean runs nor as runs with findings " +
	"(their report.html shows what the history they wrote holds)."

func rel(base, path string) string {
	absBase, _ := filepath.Abs(base)
	absPath, _ := filepath.Abs(path)
	r, err := filepath.Rel(absBase, absPath)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

var page = template.Must(template.New("compare").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos: {{.Title}}</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse} td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4;font-weight:600} td.runs{font-size:12px}
tr:target td{background:#fff6d6}
h2{font-size:17px;margin:28px 0 4px;border-bottom:1px solid #ddd} p.note{margin:0 0 6px;color:#555;font-size:13px}
svg.chart{display:block;max-width:100%;height:auto;margin:4px 0 8px}
svg.chart a:hover text{text-decoration:underline} svg.chart a.run:hover rect{stroke:#222;stroke-width:1.5}
</style></head><body>
<h1>{{.Title}}</h1>
{{if .Shared}}<p>One row per backend, version, settings and resource mode, from the runs named in its last column. {{.Claim}}</p>
{{else}}<p><b>{{.Claim}}</b></p>
{{if gt (len .Details) 12}}<details><summary>{{len .Details}} lines: the runs of each schedule, and each field whose value differs</summary>
{{end}}<ul>{{range .Details}}<li>{{.}}</li>{{end}}</ul>{{if gt (len .Details) 12}}</details>{{end}}
<p>One row per backend, version, settings, resource mode and schedule, from the runs named in its last column.</p>{{end}}
<table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}<th>runs</th></tr>
{{range .Rows}}<tr id="{{.ID}}">{{range .Cells}}<td>{{.}}</td>{{end}}<td class="runs">{{range .Runs}}<a href="{{.Path}}">{{.Name}}</a> {{end}}</td></tr>
{{end}}</table>
{{with .LeftOut}}<p><b>{{$.LeftOutNote}}</b></p>
<ul>{{range .}}<li><a href="{{.Path}}">{{.Name}}</a>: incomplete: {{.Why}}</li>{{end}}</ul>{{end}}
{{range .Charts}}<h2 id="{{.ID}}">{{.Title}}</h2>
<p class="note">{{.Note}} A row's name leads to its line in the table.</p>
{{.SVG}}
{{end}}</body></html>
`))
