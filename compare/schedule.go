package compare

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/chaos-testing/chaos/runfolder"
)

// schedule is what a run was asked to do, backend and seed aside: its
// plan's workload section (but for the backend's own fields, which compare
// varies), nemesis section and time limit, as field paths and values
// ("nemesis[0].duration": "6s").
type schedule map[string]string

// readMode is the workload field that says how a backend's register reads
// (etcd linearizable, ZooKeeper checked, NATS from the leader): a mode of
// the backend, as the resource's fencing is, not of the schedule.
const readMode = "workload.read_mode"

// readSchedule reads the schedule of the run in dir from the plan.yaml it
// was run with, and the run's read mode ("" if none).
func readSchedule(dir string) (schedule, string, error) {
	path := runfolder.Folder(dir).Path(runfolder.PlanFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	var plan map[string]any
	if err := yaml.Unmarshal(b, &plan); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	s := schedule{}
	for _, section := range []string{"time_limit", "workload", "nemesis"} {
		flatten(section, plan[section], s)
	}
	mode := s[readMode]
	for _, own := range []string{"workload.kind", "workload.resource", readMode} {
		delete(s, own)
	}
	return s, mode, nil
}

// flatten adds v to s as path's leaves.
func flatten(path string, v any, s schedule) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			flatten(path+"."+k, x, s)
		}
	case []any:
		for i, x := range v {
			flatten(fmt.Sprintf("%s[%d]", path, i), x, s)
		}
	case nil:
	default:
		s[path] = fmt.Sprint(v)
	}
}

// key is the schedule as one string, equal for equal schedules.
func (s schedule) key() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(&b, "%s=%s\n", k, s[k])
	}
	return b.String()
}

// Group is the runs made with one schedule.
type Group struct {
	// Label names the group in the table: A, B, ...; "unknown" for runs
	// without a readable plan.yaml, which are not taken to share anyone's
	// schedule.
	Label string
	Runs  []string
	sched schedule // nil if unknown
}

// groupOf is the group of runs with schedule s (nil: unknown), added to
// groups if it is new.
func groupOf(groups []*Group, s schedule) ([]*Group, *Group) {
	i := slices.IndexFunc(groups, func(g *Group) bool {
		return (g.sched == nil) == (s == nil) && g.sched.key() == s.key()
	})
	if i >= 0 {
		return groups, groups[i]
	}
	g := &Group{Label: string(rune('A' + len(groups))), sched: s}
	if s == nil {
		g.Label = "unknown"
	}
	return append(groups, g), g
}

// Shared says whether every run of the table had one known schedule: the
// only case in which the rows measure one thing on several backends.
func (t *Table) Shared() bool {
	return len(t.Groups) == 0 || len(t.Groups) == 1 && t.Groups[0].sched != nil
}

// scheduleNotes say whether the runs share one workload and fault
// schedule: claim, then, if they do not, each group's runs and each
// setting that differs between groups.
func (t *Table) scheduleNotes() (claim string, details []string) {
	n := 0
	for _, g := range t.Groups {
		n += len(g.Runs)
	}
	switch {
	case n == 0:
		return "No run to compare: none finished cleanly.", nil
	case t.Shared():
		return fmt.Sprintf("All %d runs share one workload and fault schedule (their plans' workload and nemesis sections and time limit; backend and seed aside).", n), nil
	}
	var known []*Group
	for _, g := range t.Groups {
		names := make([]string, len(g.Runs))
		for i, r := range g.Runs {
			names[i] = filepath.Base(r)
		}
		what := "schedule " + g.Label
		if g.sched == nil {
			what = "schedule unknown (no readable plan.yaml)"
		} else {
			known = append(known, g)
		}
		details = append(details, fmt.Sprintf("%s: %s", what, strings.Join(names, ", ")))
	}
	claim = "These runs do not share one workload and fault schedule"
	if len(known) < 2 {
		claim = "These runs are not known to share one workload and fault schedule"
	}
	claim += ": each row holds the runs of one schedule, and rows of different schedules may not have measured the same thing."
	return claim, append(details, differences(known)...)
}

// differences names each setting whose value is not the same in all the
// groups, with its value in each.
func differences(groups []*Group) []string {
	paths := map[string]bool{}
	for _, g := range groups {
		for k := range g.sched {
			paths[k] = true
		}
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		var vals []string
		same := true
		for _, g := range groups {
			same = same && g.value(p) == groups[0].value(p)
			vals = append(vals, fmt.Sprintf("%s in schedule %s", g.value(p), g.Label))
		}
		if !same {
			out = append(out, fmt.Sprintf("%s: %s", p, strings.Join(vals, ", ")))
		}
	}
	return out
}

// value is the group's setting at path, or "absent".
func (g *Group) value(path string) string {
	if v, ok := g.sched[path]; ok {
		return v
	}
	return "absent"
}
