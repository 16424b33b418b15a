package compare

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// cells are a row's columns as text, in the order of columns.
func (r *Row) cells() []string {
	token := "none"
	if r.Tokens {
		token = "yes, strictly increasing"
		if !r.TokensIncreasing {
			token = "yes, NOT always increasing"
		}
	}
	during := "no acquisition during faults"
	if r.DuringFaults > 0 {
		during = fmt.Sprintf("%.0f%% (%d of %d)", 100*float64(r.DuringFaultsOK)/float64(r.DuringFaults), r.DuringFaultsOK, r.DuringFaults)
	}
	throughput := 0.0
	if r.Seconds > 0 {
		throughput = float64(r.Acquisitions) / r.Seconds
	}
	return []string{
		r.Workload + " on " + r.Target,
		r.Resource,
		fmt.Sprintf("%d / %d", r.StaleRuns, len(r.Runs)),
		fmt.Sprintf("%d / %d", r.TwoHolderRuns, len(r.Runs)),
		token,
		fmt.Sprintf("%d / %d", r.StaleAccepted, r.StaleRejected),
		fmt.Sprintf("%s / %s (%d)", ms(percentile(r.Failover, 50)), ms(percentile(r.Failover, 99)), len(r.Failover)),
		fmt.Sprintf("%s / %s", ms(percentile(r.Acquire, 50)), ms(percentile(r.Acquire, 99))),
		fmt.Sprintf("%.2f", throughput),
		during,
	}
}

var columns = []string{
	"backend", "resource",
	"runs with stale writes accepted / runs", "runs with two holders at once / runs",
	"fencing token", "stale writes accepted / rejected",
	"failover after the holder is hit, p50 / p99 (count)", "acquire latency, waiting included, p50 / p99",
	"acquisitions per second", "acquisitions ok during faults",
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
func Write(dir, title string, rows []*Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n\n| %s |\n|%s\n", title, strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
	for _, r := range rows {
		fmt.Fprintf(&md, "| %s |\n", strings.Join(r.cells(), " | "))
	}
	md.WriteString("\nEach row comes from these runs (their report.html shows every finding):\n")
	for _, r := range rows {
		fmt.Fprintf(&md, "\n- %s on %s, %s:", r.Workload, r.Target, r.Resource)
		for _, run := range r.Runs {
			fmt.Fprintf(&md, " [%s](%s/report.html)", filepath.Base(run), rel(dir, run))
		}
	}
	md.WriteString("\n")
	if err := os.WriteFile(filepath.Join(dir, "compare.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	type runLink struct{ Name, Path string }
	type htmlRow struct {
		Cells []string
		Runs  []runLink
	}
	var hr []htmlRow
	for _, r := range rows {
		row := htmlRow{Cells: r.cells()}
		for _, run := range r.Runs {
			row.Runs = append(row.Runs, runLink{filepath.Base(run), rel(dir, run) + "/report.html"})
		}
		hr = append(hr, row)
	}
	f, err := os.Create(filepath.Join(dir, "compare.html"))
	if err != nil {
		return err
	}
	if err := page.Execute(f, struct {
		Title   string
		Columns []string
		Rows    []htmlRow
	}{title, columns, hr}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

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
</style></head><body>
<h1>{{.Title}}</h1>
<p>One row per backend and resource mode, from the runs named in its last column (same workload and fault schedule, several seeds).</p>
<table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}<th>runs</th></tr>
{{range .Rows}}<tr>{{range .Cells}}<td>{{.}}</td>{{end}}<td class="runs">{{range .Runs}}<a href="{{.Path}}">{{.Name}}</a> {{end}}</td></tr>
{{end}}</table>
</body></html>
`))
