package runner_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
)

// TestNightlyWorkflow parses the nightly workflow and checks that every
// plan its matrix names exists and validates, with an expected exit code
// that a run can give for a verdict (0 valid, 1 anomaly).
func TestNightlyWorkflow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", ".github", "workflows", "nightly.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			RunsOn   any `yaml:"runs-on"`
			Strategy struct {
				Matrix struct {
					Include []struct {
						Plan   string `yaml:"plan"`
						Expect *int   `yaml:"expect"`
					} `yaml:"include"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("nightly.yml: %v", err)
	}
	if wf.On["schedule"] == nil {
		t.Error("nightly.yml has no schedule")
	}
	seen := 0
	for name, job := range wf.Jobs {
		if len(job.Steps) == 0 || job.RunsOn == nil {
			t.Errorf("job %s has no steps or no runner", name)
		}
		for _, m := range job.Strategy.Matrix.Include {
			seen++
			p, err := plans.Load(filepath.Join("..", "plans", m.Plan+".yaml"))
			if err != nil {
				t.Errorf("job %s: plan %q: %v", name, m.Plan, err)
				continue
			}
			if err := runner.Validate(p); err != nil {
				t.Errorf("job %s: plan %q: %v", name, m.Plan, err)
			}
			if m.Expect == nil || !slices.Contains([]int{0, 1}, *m.Expect) {
				t.Errorf("job %s: plan %q: expect must be 0 or 1", name, m.Plan)
			}
		}
	}
	if seen == 0 {
		t.Error("the workflow's matrix names no plan")
	}
}
