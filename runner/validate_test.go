package runner_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
	"github.com/chaos-testing/chaos/targets"

	_ "github.com/chaos-testing/chaos/targets/redis"
	_ "github.com/chaos-testing/chaos/workloads/lock"
)

// validateTarget is a target no workload of this test runs against, to
// show a workload/target mismatch. Validate asks it its default size only;
// the embedded nil Target stands for the methods that start clusters.
type validateTarget struct{ targets.Target }

func (validateTarget) DefaultNodes() int { return 7 }

func init() { targets.Targets.Register("validate-test-target", validateTarget{}) }

// validateBase is a valid plan; cases edit single lines of it, so every
// field keeps a known line.
const validateBase = `name: v
time_limit: 30s
target:
  kind: redis
workload:
  kind: redlock
  lease: 2s
  hold_min: 100ms
  hold_max: 500ms
  resource: fenced
nemesis:
  - kind: pause
    target: holder
    first_after: 1s
    duration: 1s
`

// validateEdit replaces whole lines of validateBase, each pair (old, new);
// a new line may hold several lines.
func validateEdit(t *testing.T, pairs ...string) string {
	t.Helper()
	lines := strings.Split(validateBase, "\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for j, l := range lines {
			if l == pairs[i] {
				lines[j], found = pairs[i+1], true
				break
			}
		}
		if !found {
			t.Fatalf("validateBase has no line %q", pairs[i])
		}
	}
	return strings.Join(lines, "\n")
}

// validateLine is the 1-based line of validateBase holding exactly l.
func validateLine(t *testing.T, l string) int {
	t.Helper()
	for i, s := range strings.Split(validateBase, "\n") {
		if s == l {
			return i + 1
		}
	}
	t.Fatalf("validateBase has no line %q", l)
	return 0
}

func validateParse(t *testing.T, yaml string) *plans.Plan {
	t.Helper()
	p, err := plans.Parse("plan.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("the plan does not parse, so Validate cannot be tested on it: %v", err)
	}
	return p
}

func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		yaml     string
		line     int
		contains []string
	}{
		{
			name:     "unknown target",
			yaml:     validateEdit(t, "  kind: redis", "  kind: cassandra"),
			line:     validateLine(t, "  kind: redis"),
			contains: []string{`target.kind: unknown target "cassandra"; expected one of `, "redis"},
		},
		{
			name:     "unknown workload",
			yaml:     validateEdit(t, "  kind: redlock", "  kind: juggling"),
			line:     validateLine(t, "  kind: redlock"),
			contains: []string{`workload.kind: unknown workload "juggling"; expected one of `, "redlock"},
		},
		{
			name:     "workload for another target",
			yaml:     validateEdit(t, "  kind: redis", "  kind: validate-test-target"),
			line:     validateLine(t, "  kind: redlock"),
			contains: []string{`workload.kind: workload "redlock" runs against target "redis", not "validate-test-target"`},
		},
		{
			name:     "unknown fault kind",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: explode"),
			line:     validateLine(t, "  - kind: pause"),
			contains: []string{`nemesis[0].kind: unknown fault "explode"; expected one of `, "pause"},
		},
		{
			name:     "unknown fault kind in the second fault",
			yaml:     validateBase + "  - kind: explode\n    target: nodes\n    duration: 1s\n",
			line:     16,
			contains: []string{`nemesis[1].kind: unknown fault "explode"`},
		},
		{
			name:     "more victims than the default number of nodes",
			yaml:     validateEdit(t, "    target: holder", "    target: nodes\n    count: 6"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{"nemesis[0].count: 6: the target has only 5 nodes"},
		},
		{
			name:     "more victims than the nodes given",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  nodes: 3", "    target: holder", "    target: nodes\n    count: 4"),
			line:     validateLine(t, "    target: holder") + 2,
			contains: []string{"nemesis[0].count: 4: the target has only 3 nodes"},
		},
		{
			name:     "a cluster size the target does not run",
			yaml:     validateEdit(t, "  kind: redis", "  kind: etcd\n  nodes: 4"),
			line:     validateLine(t, "  kind: redis") + 1,
			contains: []string{"target.nodes: etcd: 4 nodes asked for; an etcd cluster here has 3 or 5 members"},
		},
		{
			name:     "a node the target does not have",
			yaml:     validateEdit(t, "    target: holder", "    target: nodes\n    nodes: [n1, n6]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{`nemesis[0].nodes: "n6": expected node names n1 to n5`},
		},
		{
			name:     "more victims than the nodes named",
			yaml:     validateEdit(t, "    target: holder", "    target: nodes\n    count: 3\n    nodes: [n1, n2]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{"nemesis[0].count: 3: more than the 2 nodes given"},
		},
		{
			name:     "nodes named for a fault on clients",
			yaml:     validateEdit(t, "    target: holder", "    target: clients\n    nodes: [n1]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{`nemesis[0].nodes: only a fault with target nodes`},
		},
		{
			name:     "unknown role",
			yaml:     validateEdit(t, "    target: holder", "    target: master"),
			line:     validateLine(t, "    target: holder"),
			contains: []string{`nemesis[0].target: "master"`, "holder", "clients", "nodes"},
		},
		{
			name:     "role the fault kind refuses",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: kill", "    target: holder", "    target: clients"),
			line:     validateLine(t, "    target: holder"),
			contains: []string{`nemesis[0].target: "clients": a kill fault targets one of nodes`},
		},
		{
			name:     "hold_max equal to lease",
			yaml:     validateEdit(t, "  hold_max: 500ms", "  hold_max: 2s"),
			line:     validateLine(t, "  hold_max: 500ms"),
			contains: []string{"workload.hold_max: 2s: a holder must mean to finish within its lease (2s)"},
		},
		{
			name:     "hold_max beyond lease",
			yaml:     validateEdit(t, "  hold_max: 500ms", "  hold_max: 3s"),
			line:     validateLine(t, "  hold_max: 500ms"),
			contains: []string{"workload.hold_max: 3s"},
		},
		{
			name:     "hold_min beyond hold_max",
			yaml:     validateEdit(t, "  hold_min: 100ms", "  hold_min: 600ms"),
			line:     validateLine(t, "  hold_min: 100ms"),
			contains: []string{"workload.hold_min: 600ms: expected between 0 and hold_max (500ms)"},
		},
		{
			name:     "missing lease points at the workload",
			yaml:     validateEdit(t, "  lease: 2s", "  clients: 2"),
			line:     validateLine(t, "workload:"),
			contains: []string{"workload.lease: missing"},
		},
		{
			name:     "unknown resource mode",
			yaml:     validateEdit(t, "  resource: fenced", "  resource: maybe"),
			line:     validateLine(t, "  resource: fenced"),
			contains: []string{`workload.resource: "maybe": expected one of fenced, unfenced`},
		},
		{
			name:     "unknown partition shape",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: partition", "    target: holder", "    shape: triangle"),
			line:     validateLine(t, "    target: holder"),
			contains: []string{`nemesis[0].shape: "triangle": expected one of `, "halves"},
		},
		{
			name:     "partition too big for the cluster",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  nodes: 3", "  - kind: pause", "  - kind: partition", "    target: holder", "    shape: majorities-ring"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{"nemesis[0].shape: majorities-ring needs at least 4 nodes; the target has 3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validateParse(t, tc.yaml)
			err := runner.Validate(p)
			var pe *plans.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Validate = %T %v, want a *plans.Error", err, err)
			}
			if pe.File != "plan.yaml" || pe.Line != tc.line {
				t.Errorf("error at %s:%d, want plan.yaml:%d: %v", pe.File, pe.Line, tc.line, err)
			}
			if prefix := fmt.Sprintf("plan.yaml:%d: ", tc.line); !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not start with %q", err, prefix)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestValidateDefaults(t *testing.T) {
	p := validateParse(t, validateEdit(t, "  hold_max: 500ms", "", "  resource: fenced", ""))
	if err := runner.Validate(p); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"target.nodes (redis's default)", p.Target.Nodes, 5},
		{"workload.hold_max (half the lease)", p.Workload.HoldMax.Duration, time.Second},
		{"workload.resource", p.Workload.Resource, "unfenced"},
		{"workload.clients", p.Workload.Clients, 3},
		{"nemesis[0].count", p.Nemesis[0].Count, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	// A size the plan gives is kept.
	p = validateParse(t, validateEdit(t, "  kind: redis", "  kind: redis\n  nodes: 3"))
	if err := runner.Validate(p); err != nil {
		t.Fatal(err)
	}
	if p.Target.Nodes != 3 {
		t.Errorf("target.nodes = %d, want the plan's 3", p.Target.Nodes)
	}
}

// Every plan that ships with chaos validates against the plug-ins the
// runner's tests import (all of chaos's).
func TestValidateShippedPlans(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "plans", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped plans: %v", err)
	}
	for _, f := range files {
		p, err := plans.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		ps := []*plans.Plan{p}
		if p.Compare != nil {
			ps = p.Variants() // a comparison plan runs as its variants
		}
		for _, p := range ps {
			if err := runner.Validate(p); err != nil {
				t.Errorf("%s (as %s): %v", f, p.Name, err)
			}
		}
	}
}
