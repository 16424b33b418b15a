package bind_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/registry"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
)

// TestReadmeTopFields: the README's table of a plan's top-level fields
// names every one the plan has, and no other.
func TestReadmeTopFields(t *testing.T) {
	var got []string
	for _, row := range docTables(t, "README.md", "| field | what it is |") {
		got = append(got, codeNames(row[0])...)
	}
	slices.Sort(got)
	if want := plans.FieldNames(plans.Plan{}); !slices.Equal(got, want) {
		t.Errorf("README's top-level fields %v; a plan has %v", got, want)
	}
}

// TestReadmeFieldTable: the README's table of plan fields names, for every
// workload and fault kind registered, exactly the fields its plug-in
// decodes, and for "every", the fields its section shares.
func TestReadmeFieldTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// section -> kind -> fields the README gives
	readme := map[string]map[string][]string{"target": {}, "workload": {}, "nemesis[i]": {}}
	row := regexp.MustCompile("^\\| `(target|workload|nemesis\\[i\\])` \\| (.*?) \\| (.*) \\|$")
	name := regexp.MustCompile("`([a-z_-]+)`")
	var prev []string // the fields of the row above
	for _, l := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var fields []string
		switch {
		case strings.HasPrefix(m[3], "the same"):
			fields = prev
		case !strings.HasPrefix(m[3], "none"):
			// A field is the first name of each part between commas
			// outside parentheses; a colon starts the last field's
			// explanation.
			cell, _, _ := strings.Cut(m[3], ":")
			depth, start := 0, 0
			for i := 0; i <= len(cell); i++ {
				switch {
				case i == len(cell) || cell[i] == ',' && depth == 0:
					if f := name.FindStringSubmatch(cell[start:i]); f != nil {
						fields = append(fields, f[1])
					}
					start = i + 1
				case cell[i] == '(':
					depth++
				case cell[i] == ')':
					depth--
				}
			}
		}
		kinds := []string{"every"}
		if m[2] != "every" {
			kinds = nil
			for _, k := range name.FindAllStringSubmatch(m[2], -1) {
				kinds = append(kinds, k[1])
			}
		}
		for _, k := range kinds {
			readme[m[1]][k] = fields
		}
		prev = fields
	}
	check := func(section, kind string, want []string) {
		t.Helper()
		got, ok := readme[section][kind]
		slices.Sort(got)
		if !ok {
			t.Errorf("README: no row for %s %s (fields %v)", section, kind, want)
		} else if !slices.Equal(got, want) {
			t.Errorf("README: %s %s has fields %v; its plug-in has %v", section, kind, got, want)
		}
	}
	check("target", "every", plans.FieldNames(plans.Target{}))
	check("workload", "every", plans.FieldNames(plans.Workload{}))
	check("nemesis[i]", "every", plans.FieldNames(plans.Fault{}))
	for k, fields := range pluginFields(targets.Targets) {
		check("target", k, fields)
	}
	for k, fields := range pluginFields(workloads.Workloads) {
		check("workload", k, fields)
	}
	for k, fields := range pluginFields(nemesis.Nemeses) {
		check("nemesis[i]", k, fields)
	}
}

// pluginFields are the own fields of each plug-in of r, by name, but for
// the plug-ins of the tests ("validate-test-...").
func pluginFields[T interface{ NewParams() any }](r *registry.Registry[T]) map[string][]string {
	out := map[string][]string{}
	for _, k := range r.Names() {
		if !strings.HasPrefix(k, "validate-test-") {
			p, _ := r.Lookup(k)
			out[k] = ownFields(p)
		}
	}
	return out
}

// ownFields are the names of a plug-in's own plan fields, sorted.
func ownFields(plugin interface{ NewParams() any }) []string {
	return plans.FieldNames(plugin.NewParams())
}

// docTables are the rows of every table under the header row header in
// the pages that pattern matches (docs/faults/*.md): their cells, the
// header's and the separator's left out.
func docTables(t *testing.T, pattern, header string) [][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no pages (%v)", pattern, err)
	}
	var rows [][]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range strings.Split(string(b), "\n"+header+"\n")[1:] {
			for _, l := range strings.Split(table, "\n")[1:] { // the separator
				if !strings.HasPrefix(l, "|") {
					break
				}
				rows = append(rows, strings.Split(strings.Trim(l, "|"), " | "))
			}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table headed %q", pattern, header)
	}
	return rows
}

// codeNames are the `names` in a cell.
func codeNames(cell string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([a-z0-9_-]+)`").FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestFaultPages: every kind of fault has its row in a table of the fault
// pages (docs/faults/), and they name no kind that does not exist.
func TestFaultPages(t *testing.T) {
	listed := map[string]bool{}
	for _, row := range docTables(t, "docs/faults/*.md", "| kind | what it does | targets |") {
		for _, k := range codeNames(row[0]) {
			listed[k] = true
		}
	}
	for _, k := range nemesis.Nemeses.Names() {
		if !listed[k] {
			t.Errorf("docs/faults has no row for %s", k)
		}
		delete(listed, k)
	}
	for k := range listed {
		t.Errorf("docs/faults has a row for %s, which is no kind of fault", k)
	}
}

// TestBackendPages: every target has its row in a backend page's table of
// what runs (docs/backends/), naming every workload that runs against it.
func TestBackendPages(t *testing.T) {
	rows := map[string]string{}
	for _, row := range docTables(t, "docs/backends/*.md", "| target | what runs | workloads |") {
		for _, k := range codeNames(row[0]) {
			rows[k] = row[len(row)-1]
		}
	}
	for _, k := range targets.Targets.Names() {
		if _, ok := rows[k]; !ok && !strings.HasPrefix(k, "validate-test-") {
			t.Errorf("docs/backends has no row for %s", k)
		}
	}
	for _, k := range workloads.Workloads.Names() {
		w, _ := workloads.Workloads.Lookup(k)
		if !slices.Contains(codeNames(rows[w.Target()]), k) && !strings.HasPrefix(k, "validate-test-") {
			t.Errorf("docs/backends names no workload %s in the row of %s", k, w.Target())
		}
	}
}
