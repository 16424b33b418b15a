package bind_test

import (
	"os"
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
