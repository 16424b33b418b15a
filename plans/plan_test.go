package plans

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// base is a valid plan; cases edit single lines of it, so every field keeps
// a known line number.
const base = `name: t
seed: 1
time_limit: 10s
target:
  kind: redis
  nodes: 5
workload:
  kind: redlock
  clients: 3
  lease: 2s
  hold_min: 100ms
  hold_max: 500ms
  resource: unfenced
nemesis:
  - kind: pause
    target: holder
    count: 1
    first_after: 1s
    interval: 3s
    duration: 1s
`

// edit replaces whole lines of base: each pair is (old line, new line). A
// new line of "" deletes the old one.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	lines := strings.Split(base, "\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for j, l := range lines {
			if l == pairs[i] {
				lines[j] = pairs[i+1]
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("base has no line %q", pairs[i])
		}
	}
	var out []string
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// inTime is f(), failing the test, rather than hanging it, if f never
// returns; what names the call.
func inTime[T any](t testing.TB, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(2 * time.Second):
		t.Fatalf("%s has not returned after 2s: it hangs", what)
		var zero T
		return zero
	}
}

// parsed is what Parse returns.
type parsed struct {
	p   *Plan
	err error
}

// parseOnly is Parse, failing the test if it never returns.
func parseOnly(t testing.TB, file string, data []byte, overrides ...Override) (*Plan, error) {
	t.Helper()
	r := inTime(t, fmt.Sprintf("Parse(%q)", data), func() parsed {
		p, err := Parse(file, data, overrides...)
		return parsed{p, err}
	})
	return r.p, r.err
}

// parse is Parse and the checks of the fields that workloads and faults
// share (resolve), which bind.Bind makes after their plug-ins' own; a
// plan refused by either comes back nil.
func parse(t testing.TB, file string, data []byte) (*Plan, error) {
	t.Helper()
	p, err := parseOnly(t, file, data)
	if err == nil {
		if _, err = resolve(p); err != nil {
			p = nil
		}
	}
	return p, err
}

// limits are what bind.Bind checks p's faults against (plans.Limits),
// its clients checked as Bind checks them. What only the plug-ins know
// has a stand-in here, where there are none: 5 nodes when the plan gives
// no number (the largest default size of chaos's targets), and a
// workload whose clients hold something (bind's tests check role holder
// against the workload).
func limits(p *Plan) (Limits, error) {
	clients, err := p.Workload.ClientCount()
	if err != nil {
		return Limits{}, p.Place("workload", err)
	}
	nodes := p.Target.Nodes
	if nodes == 0 {
		nodes = 5
	}
	return Limits{TimeLimit: p.TimeLimit.Duration, Nodes: nodes, Clients: clients, Workload: p.Workload.Kind, Holders: true}, nil
}

// resolve checks the fields every workload and every fault of p shares,
// as bind.Bind does (Workload.ClientCount, Schedule.Resolve), each error
// at its line (Place), and returns the faults' schedules with their
// defaults.
func resolve(p *Plan) ([]Schedule, error) {
	l, err := limits(p)
	if err != nil {
		return nil, err
	}
	var out []Schedule
	for i, f := range p.Nemesis {
		s, err := f.Schedule.Resolve(l)
		if err != nil {
			return nil, p.Place(FaultPath(i), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// line is p.Line(path), failing the test if it never returns.
func line(t testing.TB, p *Plan, path string) int {
	t.Helper()
	return inTime(t, fmt.Sprintf("Line(%q)", path), func() int { return p.Line(path) })
}

// lineOf is the 1-based line of base holding exactly l.
func lineOf(t *testing.T, l string) int {
	t.Helper()
	for i, s := range strings.Split(base, "\n") {
		if s == l {
			return i + 1
		}
	}
	t.Fatalf("base has no line %q", l)
	return 0
}

func TestShippedPlansLoad(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d shipped plans, want at least 2 (redlock-pause, redlock-short-pause)", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			p, err := Load(f)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if want := strings.TrimSuffix(f, ".yaml"); p.Name != want {
				t.Errorf("name %q, want %q (the file's name)", p.Name, want)
			}
			if p.File != f {
				t.Errorf("File = %q, want %q", p.File, f)
			}
			if p.TimeLimit.Duration <= 0 || p.Target.Kind == "" || p.Workload.Kind == "" || len(p.Nemesis) == 0 {
				t.Errorf("plan lacks time limit, target, workload or faults: %+v", p)
			}
			if p.Line("workload.lease") == 0 || p.Line("nemesis[0].duration") == 0 {
				t.Errorf("lines of fields not recorded: workload.lease at %d, nemesis[0].duration at %d",
					p.Line("workload.lease"), p.Line("nemesis[0].duration"))
			}
		})
	}
}

func TestBaseIsValid(t *testing.T) {
	p, err := parse(t, "base.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"name":                   1,
		"time_limit":             3,
		"target":                 4,
		"target.kind":            5,
		"workload.lease":         10,
		"nemesis":                14,
		"nemesis[0]":             15,
		"nemesis[0].kind":        15,
		"nemesis[0].first_after": 18,
		"nemesis[0].duration":    20,
		"workload.no_such_field": 7,  // a missing field points at its parent
		"nemesis[0].missing":     15, // ... also inside a list
		"nowhere":                0,  // a top-level field that is missing
		"nowhere.deeper":         0,
	} {
		if got := line(t, p, path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	const file = "plan.yaml"
	for _, tc := range []struct {
		name     string
		yaml     string
		line     int
		contains []string
	}{
		{
			name:     "bad fault duration",
			yaml:     edit(t, "    duration: 1s", "    duration: fast"),
			line:     lineOf(t, "    duration: 1s"),
			contains: []string{"expected a duration", `"fast"`},
		},
		{
			name:     "duration given as a mapping",
			yaml:     edit(t, "time_limit: 10s", "time_limit: {s: 10}"),
			line:     lineOf(t, "time_limit: 10s"),
			contains: []string{"expected a duration"},
		},
		{
			name:     "wrong type",
			yaml:     edit(t, "  clients: 3", "  clients: three"),
			line:     lineOf(t, "  clients: 3"),
			contains: []string{"three"},
		},
		{
			name:     "fault ends after the time limit",
			yaml:     edit(t, "    first_after: 1s", "    first_after: 9500ms"),
			line:     lineOf(t, "    first_after: 1s"),
			contains: []string{"nemesis[0].first_after: 9.5s", "time limit (10s)"},
		},
		{
			// 2000000h+2000000h overflows time.Duration to a negative sum,
			// which is not "beyond" the limit.
			name:     "first_after+duration overflowing",
			yaml:     edit(t, "    first_after: 1s", "    first_after: 2000000h", "    interval: 3s", "", "    duration: 1s", "    duration: 2000000h"),
			line:     lineOf(t, "    first_after: 1s"),
			contains: []string{"nemesis[0].first_after: 2000000h0m0s"},
		},
		{
			name:     "negative first_after",
			yaml:     edit(t, "    first_after: 1s", "    first_after: -1s"),
			line:     lineOf(t, "    first_after: 1s"),
			contains: []string{"nemesis[0].first_after"},
		},
		{
			name:     "count beyond clients",
			yaml:     edit(t, "    target: holder", "    target: clients", "    count: 1", "    count: 4"),
			line:     lineOf(t, "    count: 1"),
			contains: []string{"nemesis[0].count: 4", "only 3 clients"},
		},
		{
			name:     "negative count",
			yaml:     edit(t, "    count: 1", "    count: -1"),
			line:     lineOf(t, "    count: 1"),
			contains: []string{"nemesis[0].count: -1"},
		},
		{
			name:     "negative times",
			yaml:     edit(t, "    count: 1", "    count: 1\n    times: -2"),
			line:     lineOf(t, "    count: 1") + 1,
			contains: []string{"nemesis[0].times: -2"},
		},
		{
			name:     "interval shorter than duration",
			yaml:     edit(t, "    interval: 3s", "    interval: 500ms"),
			line:     lineOf(t, "    interval: 3s"),
			contains: []string{"nemesis[0].interval: 500ms", "shorter than the fault's duration (1s)"},
		},
		{
			name:     "zero fault duration",
			yaml:     edit(t, "    duration: 1s", "    duration: 0s"),
			line:     lineOf(t, "    duration: 1s"),
			contains: []string{"nemesis[0].duration"},
		},
		{
			name:     "no time limit",
			yaml:     edit(t, "time_limit: 10s", "time_limit: 0s"),
			line:     lineOf(t, "time_limit: 10s"),
			contains: []string{"time_limit"},
		},
		{
			name:     "name with a slash",
			yaml:     edit(t, "name: t", "name: a/b"),
			line:     1,
			contains: []string{`name: "a/b"`},
		},
		{
			name:     "missing target kind points at target",
			yaml:     edit(t, "  kind: redis", ""),
			line:     lineOf(t, "target:"),
			contains: []string{"target.kind: missing"},
		},
		{
			name:     "missing fault kind points at the fault",
			yaml:     edit(t, "  - kind: pause", "  - target: holder", "    target: holder", ""),
			line:     lineOf(t, "  - kind: pause"),
			contains: []string{"nemesis[0].kind: missing"},
		},
		{
			name:     "too few clients",
			yaml:     edit(t, "  clients: 3", "  clients: -2"),
			line:     lineOf(t, "  clients: 3"),
			contains: []string{"workload.clients: -2"},
		},
		{
			name:     "missing name",
			yaml:     edit(t, "name: t", ""),
			line:     0,
			contains: []string{"name: missing"},
		},
		{
			name:     "missing time limit",
			yaml:     edit(t, "time_limit: 10s", ""),
			line:     0,
			contains: []string{"time_limit: missing"},
		},
		{
			name:     "missing target",
			yaml:     edit(t, "target:", "", "  kind: redis", "", "  nodes: 5", ""),
			line:     0,
			contains: []string{"target.kind: missing"},
		},
		{
			name:     "null document",
			yaml:     "~\n",
			line:     0,
			contains: []string{"name: missing"},
		},
		{
			name:     "empty mapping",
			yaml:     "{}\n",
			line:     0,
			contains: []string{"name: missing"},
		},
		{
			name:     "empty file",
			yaml:     "",
			line:     0,
			contains: []string{"empty plan"},
		},
		{
			name:     "only comments",
			yaml:     "# nothing here\n",
			line:     0,
			contains: []string{"empty plan"},
		},
		{
			name:     "yaml syntax error",
			yaml:     "name: t\ntarget:\n  kind: redis\n   nodes: 5\n",
			line:     4,
			contains: []string{"mapping values are not allowed"},
		},
		{
			name:     "duplicate key",
			yaml:     "name: t\nseed: 1\nname: u\n",
			line:     3,
			contains: []string{`"name" already defined at line 1`},
		},
		{
			name:     "tab indentation",
			yaml:     "name: t\ntarget:\n\tkind: redis\n",
			line:     3,
			contains: []string{"cannot start any token"},
		},
		{
			name:     "negative recovery",
			yaml:     edit(t, "seed: 1", "seed: 1\nrecovery: -1s"),
			line:     lineOf(t, "seed: 1") + 1,
			contains: []string{"recovery: -1s: expected a duration of 0 or more"},
		},
		{
			name:     "not a mapping",
			yaml:     "- name: t\n",
			line:     1,
			contains: []string{"cannot unmarshal"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse(t, file, []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted the plan: %+v", p)
			}
			if p != nil {
				t.Errorf("Parse returned a plan with its error %v", err)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v, want *plans.Error", err, err)
			}
			if pe.File != file || pe.Line != tc.line {
				t.Errorf("error at %s:%d, want %s:%d (%v)", pe.File, pe.Line, file, tc.line, err)
			}
			prefix := file + ": "
			if tc.line > 0 {
				prefix = file + ":" + strconv.Itoa(tc.line) + ": "
			}
			if !strings.HasPrefix(err.Error(), prefix) {
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

// Unknown fields are refused at their line, with the fields allowed there
// listed in order. The lists grow as plug-ins gain fields, so each case
// names only some fields that must be among them.
func TestUnknownField(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yaml    string
		line    int
		field   string
		where   string
		allowed []string // some of the allowed fields
	}{
		{"top level", base + "colour: red\n", 21, "colour", "the plan",
			[]string{"description", "name", "nemesis", "seed", "target", "time_limit", "workload"}},
		// target's, workload's and a fault's are the runner's to check
		// (their plug-ins' fields are allowed there).
		{"in compare", base + "compare:\n  sed: [1]\n", 22, "sed", "compare",
			[]string{"seeds", "variants"}},
		{"first of two", edit(t, "seed: 1", "sed: 1", "  lease: 2s", "  leese: 2s"), lineOf(t, "seed: 1"), "sed", "the plan",
			[]string{"seed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, "plan.yaml", []byte(tc.yaml))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v, want *plans.Error", err, err)
			}
			prefix := fmt.Sprintf("plan.yaml:%d: unknown field %q in %s; allowed: ", tc.line, tc.field, tc.where)
			msg := err.Error()
			if !strings.HasPrefix(msg, prefix) {
				t.Fatalf("error %q, want it to start %q", msg, prefix)
			}
			allowed := strings.Split(strings.TrimPrefix(msg, prefix), ", ")
			if !slices.IsSorted(allowed) {
				t.Errorf("allowed fields %v are not sorted", allowed)
			}
			for _, a := range tc.allowed {
				if !slices.Contains(allowed, a) {
					t.Errorf("allowed fields %v lack %q", allowed, a)
				}
			}
			if slices.Contains(allowed, tc.field) {
				t.Errorf("allowed fields %v include the unknown %q", allowed, tc.field)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	const minimal = `name: minimal
time_limit: 30s
target:
  kind: redis
workload:
  kind: redlock
  lease: 3s
nemesis:
  - kind: pause
    target: clients
    duration: 2s
`
	p, err := parse(t, "minimal.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	// The shared fields' defaults are filled where they are checked
	// (bind.Bind calls these), not in the plan as written. Lease, hold
	// times and resource mode are the lock workload's fields: its Check
	// fills them (bind.Bind; see bind/bind_test.go).
	clients, err := p.Workload.ClientCount()
	if err != nil {
		t.Fatal(err)
	}
	l, err := limits(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Nemesis[0].Schedule.Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"workload.clients", clients, 3},
		{"nemesis[0].count", f.Count, 1},
		{"nemesis[0].interval", f.Interval.Duration, 2 * time.Second},
		{"nemesis[0].first_after", f.FirstAfter.Duration, time.Duration(0)},
		{"target.nodes (filled by bind, not here)", p.Target.Nodes, 0},
		// The plan as written is left as it was written.
		{"workload.clients as written", p.Workload.Clients, 0},
		{"nemesis[0].count as written", p.Nemesis[0].Count, 0},
		{"nemesis[0].interval as written", p.Nemesis[0].Interval.Duration, time.Duration(0)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestOverrides: --set puts a value in the plan's YAML before it is read,
// so that it is checked as the file's own would be, at the line of the
// field it replaces, and the error says the plan was read with it. A
// fault that no longer fits a shorter time limit is refused where faults
// are checked (Schedule.Resolve, which bind.Bind calls before a run).
func TestOverrides(t *testing.T) {
	set := func(s ...string) []Override {
		var out []Override
		for _, a := range s {
			o, err := ParseOverride(a)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o)
		}
		return out
	}
	p, err := Parse("base.yaml", []byte(base), set("time_limit=1m", "target.version=v7.2.4", "workload.clients=4", "nemesis[0].duration=2s", "nemesis[0].nodes=[n1, n2]")...)
	if err != nil {
		t.Fatal(err)
	}
	if p.TimeLimit.Duration != time.Minute || p.Target.Version != "v7.2.4" || p.Workload.Clients != 4 || p.Nemesis[0].Duration.Duration != 2*time.Second || len(p.Nemesis[0].Nodes) != 2 {
		t.Errorf("overrides not applied: %+v", p)
	}
	if len(p.Overrides) != 5 || p.Overrides[1].String() != "target.version=v7.2.4" {
		t.Errorf("Overrides = %v, want the five given", p.Overrides)
	}
	// A missing field takes its parent's line.
	if got, want := p.Line("target.version"), lineOf(t, "target:"); got != want {
		t.Errorf("line of an added field = %d, want its parent's %d", got, want)
	}

	p, err = Parse("base.yaml", []byte(base), set("time_limit=1500ms")...)
	if err != nil {
		t.Fatalf("time_limit=1.5s: %v, want nil: the plan's own fields are fine", err)
	}
	_, err = resolve(p)
	var pe *Error
	if !errors.As(err, &pe) || pe.Line != lineOf(t, "    first_after: 1s") || !strings.Contains(pe.Msg, "1.5s") || !strings.Contains(pe.Msg, "--set time_limit=1500ms") {
		t.Errorf("the faults under a limit of 1.5s: %v, want the first_after line, the new limit and the --set", err)
	}

	for _, tc := range []struct {
		set  string
		line int
		want string
	}{
		{"time_limit=0s", lineOf(t, "time_limit: 10s"), "time_limit: missing or not positive"},
		{"workload.clients=many", lineOf(t, "  clients: 3"), "cannot unmarshal"},
		{"nam=x", 1, `unknown field "nam" in the plan`},
		{"nemesis[3].duration=1s", lineOf(t, "nemesis:"), "the plan has no nemesis[3]"},
		{"name.x=1", lineOf(t, "name: t"), "name is not a mapping"},
		{"nemesis[0]..x=1", 0, "is not a field name"},
		{"seed=[", 0, "the value is not YAML"},
	} {
		_, err := Parse("base.yaml", []byte(base), set(tc.set)...)
		if !errors.As(err, &pe) || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.want) || !strings.Contains(pe.Msg, "--set "+tc.set) {
			t.Errorf("--set %s: %v, want line %d and %q and the --set", tc.set, err, tc.line, tc.want)
		}
	}
	if _, err := ParseOverride("target.version"); err == nil {
		t.Error("ParseOverride without = accepted")
	}
}

// FuzzOverride: any --set over a valid plan gives a plan or a *plans.Error,
// never a panic.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{"time_limit=5s", "nemesis[0].nodes=[n1]", "target.config.x=y", "a[0][1].b=", "workload=3", "nemesis=[]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOverride(s)
		if err != nil {
			return
		}
		p, err := parseOnly(t, "base.yaml", []byte(base), o)
		var pe *Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("--set %s: error %T %v is not a *plans.Error", s, err, err)
		}
		if (p == nil) == (err == nil) {
			t.Fatalf("--set %s: plan %v with error %v", s, p, err)
		}
	})
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path)
	var pe *Error
	if !errors.As(err, &pe) || pe.File != path || pe.Line != 0 || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Load(missing) = %v, want a *plans.Error naming %s", err, path)
	}
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "p.yaml", Line: 7, Msg: "bad"}, "p.yaml:7: bad"},
		{Error{File: "p.yaml", Msg: "bad"}, "p.yaml: bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no shipped plans to seed the corpus: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(""))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseOnly(t, "fuzz.yaml", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *plans.Error", err, err)
			}
			if p != nil {
				t.Fatalf("plan returned along with error %v", err)
			}
			return
		}
		if p == nil {
			t.Fatal("nil plan without an error")
		}
		// What Parse accepts, check accepts again.
		if err := p.check(); err != nil {
			t.Fatalf("accepted plan fails its own check: %v", err)
		}
		// The shared fields' checks that bind.Bind makes next refuse
		// with a *plans.Error too; the schedules they accept, defaults
		// filled, they accept again as they are (a resolved plan, as a
		// replay writes, means what its original meant).
		ss, err := resolve(p)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v of the shared fields is not a *plans.Error", err, err)
			}
			return
		}
		l, err := limits(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range ss {
			if again, err := s.Resolve(l); err != nil || !reflect.DeepEqual(again, s) {
				t.Fatalf("nemesis[%d] resolved to %+v, which resolves to %+v, %v", i, s, again, err)
			}
		}
	})
}

// A duration goes to a client process as JSON, as a plan writes it.
func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(struct{ D Duration }{Duration{1500 * time.Millisecond}})
	if err != nil || string(b) != `{"D":"1.5s"}` {
		t.Fatalf("%s %v", b, err)
	}
	var back struct{ D Duration }
	if err := json.Unmarshal(b, &back); err != nil || back.D.Duration != 1500*time.Millisecond {
		t.Errorf("read back %v %v", back.D, err)
	}
	if err := json.Unmarshal([]byte(`{"D":7}`), &back); err == nil {
		t.Error("a number was read as a duration")
	}
}
