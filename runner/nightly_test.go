package runner_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
)

// TestNightlyWorkflow parses the nightly and weekly workflows and checks
// that every plan their matrices name, or that scripts/nightly-plans
// lists for a matrix built from the plans, exists and validates, and
// expects valid or invalid (a plan whose verdict varies with the seed
// cannot fail a night, so it has no place there); the jobs run it with
// --expect, so that the plan's own expect field judges it, never a copy
// of it, and hand what root wrote back to the runner's user.
func TestNightlyWorkflow(t *testing.T) {
	for _, f := range []string{"nightly.yml", "weekly.yml"} {
		t.Run(f, func(t *testing.T) { checkWorkflow(t, f) })
	}
}

func checkWorkflow(t *testing.T, file string) {
	b, err := os.ReadFile(filepath.Join("..", ".github", "workflows", file))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			RunsOn   any `yaml:"runs-on"`
			Strategy struct {
				Matrix struct {
					Plan    any `yaml:"plan"` // a list built from the plans
					Include []struct {
						Plan   string `yaml:"plan"`
						Expect any    `yaml:"expect"`
					} `yaml:"include"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if wf.On["schedule"] == nil {
		t.Errorf("%s has no schedule", file)
	}
	listed := nightlyPlans(t)
	seen := 0
	for name, job := range wf.Jobs {
		type entry struct {
			Plan   string
			Expect any
		}
		var matrix []entry
		for _, m := range job.Strategy.Matrix.Include {
			matrix = append(matrix, entry{m.Plan, m.Expect})
		}
		if expr, ok := job.Strategy.Matrix.Plan.(string); ok {
			if !strings.Contains(expr, "fromJSON(needs.plans.outputs.plans)") {
				t.Errorf("job %s: matrix %q; want the plans scripts/nightly-plans lists", name, expr)
			}
			for _, p := range listed {
				matrix = append(matrix, entry{Plan: p})
			}
		}
		if len(matrix) > 0 && !slices.ContainsFunc(job.Steps, func(s map[string]any) bool {
			run, _ := s["run"].(string)
			return strings.Contains(run, "chown")
		}) {
			t.Errorf("job %s does not hand what root wrote back to the runner's user", name)
		}
		if len(job.Steps) == 0 || job.RunsOn == nil {
			t.Errorf("job %s has no steps or no runner", name)
		}
		// The exit code alone would pass a run that found its anomaly and
		// then stopped on a harness error. (The random-faults job's test
		// itself fails on a harness error.)
		if len(matrix) > 0 && !slices.ContainsFunc(job.Steps, func(s map[string]any) bool {
			run, _ := s["run"].(string)
			return strings.Contains(run, "junit.xml") && strings.Contains(run, "<error ")
		}) {
			t.Errorf("job %s does not fail on a run that did not finish cleanly (an <error> in junit.xml)", name)
		}
		if len(matrix) > 0 && !slices.ContainsFunc(job.Steps, func(s map[string]any) bool {
			run, _ := s["run"].(string)
			return strings.Contains(run, "--expect")
		}) {
			t.Errorf("job %s does not run its plans with --expect", name)
		}
		for _, m := range matrix {
			seen++
			p, err := plans.Load(filepath.Join("..", "plans", m.Plan+".yaml"))
			if err != nil {
				t.Errorf("job %s: plan %q: %v", name, m.Plan, err)
				continue
			}
			if _, err := bind.Bind(p); err != nil {
				t.Errorf("job %s: plan %q: %v", name, m.Plan, err)
			}
			if p.Expect != "valid" && p.Expect != "invalid" {
				t.Errorf("job %s: plan %q: its expect is %q; only plans expected valid or invalid with every seed belong in the matrix", name, m.Plan, p.Expect)
			}
			if m.Expect != nil {
				t.Errorf("job %s: plan %q: the matrix copies an expectation; the plan's expect field is the one", name, m.Plan)
			}
		}
	}
	if seen == 0 {
		t.Error("the workflow's matrix names no plan")
	}
}

// nightlyPlans is what scripts/nightly-plans lists: every shipped plan
// that expects valid or invalid, but the comparisons and soaks.
func nightlyPlans(t *testing.T) []string {
	out, err := exec.Command(filepath.Join("..", "scripts", "nightly-plans")).Output()
	if err != nil {
		t.Fatalf("scripts/nightly-plans: %v", err)
	}
	var names []string
	if err := json.Unmarshal(out, &names); err != nil {
		t.Fatalf("scripts/nightly-plans printed no JSON list: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join("..", "plans", "*.yaml"))
	want := 0
	for _, f := range files {
		p, err := plans.Load(f)
		if err == nil && p.Compare == nil && !strings.Contains(f, "-soak") && (p.Expect == "valid" || p.Expect == "invalid") {
			want++
		}
	}
	if len(names) != want || want == 0 {
		t.Errorf("scripts/nightly-plans lists %d plans; %d shipped plans expect valid or invalid", len(names), want)
	}
	return names
}
