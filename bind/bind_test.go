package bind_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
	_ "github.com/chaos-testing/chaos/plugins" // every plug-in, as the command line has them
	"github.com/chaos-testing/chaos/targets"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/targets/redis"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/lock"
	"github.com/chaos-testing/chaos/workloads/register"
)

// validateTarget is a kind of cluster no workload of this test runs
// against, to show a workload/target mismatch. Bind asks it its default
// size and binds it; the embedded nil Target stands for the methods that
// start clusters.
type validateTarget struct{ targets.Target }

func (validateTarget) DefaultNodes() int { return 7 }

func (t validateTarget) Bind(*targets.Spec[struct{}]) (targets.Target, error) { return t, nil }

func init() { targets.Register[struct{}]("validate-test-target", validateTarget{}) }

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
		t.Fatalf("the plan does not parse, so Bind cannot be tested on it: %v", err)
	}
	return p
}

// validateBind binds the plan in yaml, failing t if it does not bind.
func validateBind(t *testing.T, yaml string) *bind.Plan {
	t.Helper()
	b, err := bind.Bind(validateParse(t, yaml))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lockParams are the lock workload's fields as b bound them.
func lockParams(t *testing.T, b *bind.Plan) lock.Params {
	t.Helper()
	var ps lock.Params
	if f, err := b.Workload.Fields(); err != nil || json.Unmarshal(f, &ps) != nil {
		t.Fatalf("the workload's fields %s: %v", f, err)
	}
	return ps
}

func TestBindErrors(t *testing.T) {
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
			contains: []string{"target.nodes: 4: an etcd cluster here has 3 or 5 members"},
		},
		{
			name:     "a version no Debian suite carries",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  version: 5.0.7"),
			line:     validateLine(t, "  kind: redis") + 1,
			contains: []string{"target.version: redis 5.0.7 is in no Debian suite", "6.0.16 (bullseye), 7.0.15 (bookworm), 8.0.2 (trixie)"},
		},
		{
			name:     "a server the target does not run",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  server: keydb"),
			line:     validateLine(t, "  kind: redis") + 1,
			contains: []string{`target.server: "keydb": expected redis or valkey`},
		},
		{
			name:     "a target field misspelt",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  sever: valkey"),
			line:     validateLine(t, "  kind: redis") + 1,
			contains: []string{`unknown field "sever" in target (redis)`, "config", "server"},
		},
		{
			name:     "a server setting the target does not know",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  config:\n    appendonly: \"yes\"\n    apendfsync: always"),
			line:     validateLine(t, "  kind: redis") + 3,
			contains: []string{"target.config.apendfsync: unknown setting; known: ", "appendfsync"},
		},
		{
			name:     "a maintenance action the target lacks",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: compact", "    target: holder", "    target: nodes"),
			line:     validateLine(t, "  - kind: pause"),
			contains: []string{"compact: target redis has no such maintenance action (it has: none)"},
		},
		{
			name:     "a membership change on a target that cannot change members",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: remove-member", "    target: holder", "    target: nodes"),
			line:     validateLine(t, "  - kind: pause"),
			contains: []string{"remove-member: target redis cannot change its members here"},
		},
		{
			name: "a removal shorter than the target's wait before a removed member may rejoin",
			yaml: validateEdit(t, "  kind: redis", "  kind: nats", "  kind: redlock", "  kind: nats-lock",
				"  - kind: pause", "  - kind: remove-member", "    target: holder", "    target: nodes"),
			line:     validateLine(t, "    duration: 1s"),
			contains: []string{"nemesis[0].duration: 1s: a removed nats member can rejoin only 5m0s after its removal"},
		},
		{
			name:     "a disk fault on a target without a data directory",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: power-loss", "    target: holder", "    target: nodes"),
			line:     validateLine(t, "  - kind: pause"),
			contains: []string{"power-loss: target redis keeps no data directory that a disk fault could act on"},
		},
		{
			name: "a class of files the target lacks",
			yaml: validateEdit(t, "  kind: redis", "  kind: etcd", "  kind: redlock", "  kind: etcd-lock",
				"  - kind: pause", "  - kind: bitflip\n    class: aof", "    target: holder", "    target: nodes"),
			line:     validateLine(t, "  - kind: pause") + 1,
			contains: []string{`nemesis[0].class: "aof": target etcd has no such class of files (it has: db, snapshot, wal)`},
		},
		{
			name:     "a corruption without a class",
			yaml:     validateEdit(t, "  kind: redis", "  kind: etcd", "  kind: redlock", "  kind: etcd-lock", "  - kind: pause", "  - kind: truncate", "    target: holder", "    target: nodes"),
			line:     validateLine(t, "  - kind: pause"),
			contains: []string{"nemesis[0].class: missing"},
		},
		{
			name:     "a server setting chaos makes itself",
			yaml:     validateEdit(t, "  kind: redis", "  kind: redis\n  config: {port: 7000}"),
			line:     validateLine(t, "  kind: redis") + 1,
			contains: []string{"target.config.port: chaos sets this itself"},
		},
		{
			name:     "a node the target does not have",
			yaml:     validateEdit(t, "    target: holder", "    target: nodes\n    nodes: [n1, n6]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{`nemesis[0].nodes: "n6": expected names n1 to n5`},
		},
		{
			name:     "more victims than the nodes named",
			yaml:     validateEdit(t, "    target: holder", "    target: nodes\n    count: 3\n    nodes: [n1, n2]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{"nemesis[0].count: 3: more than the 2 given"},
		},
		{
			name:     "nodes named for a fault on clients",
			yaml:     validateEdit(t, "    target: holder", "    target: clients\n    nodes: [c0, n1]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{`nemesis[0].nodes: "n1": expected names c0 to c`},
		},
		{
			name:     "names given for a fault on the holder",
			yaml:     validateEdit(t, "    target: holder", "    target: holder\n    nodes: [c1]"),
			line:     validateLine(t, "    target: holder") + 1,
			contains: []string{`nemesis[0].nodes: only a fault with target nodes, leader or clients`},
		},
		{
			name:     "a grudge naming a node the target lacks",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: partition\n    shape: grudge\n    grudge: {n1: [n2, n9]}", "    target: holder", ""),
			line:     validateLine(t, "  - kind: pause") + 2,
			contains: []string{`nemesis[0].grudge: "n9": expected node names n1 to n5, client names c0 to c2`},
		},
		{
			name:     "a grudge with another shape",
			yaml:     validateEdit(t, "  - kind: pause", "  - kind: partition\n    shape: halves\n    grudge: {n1: [n2]}", "    target: holder", ""),
			line:     validateLine(t, "  - kind: pause") + 2,
			contains: []string{`nemesis[0].grudge: given for shape "halves"`},
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
			_, err := bind.Bind(p)
			var pe *plans.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Bind = %T %v, want a *plans.Error", err, err)
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

// TestBindDefaults: the bound plan holds every plug-in's defaults, and the
// plan as written is left as it was.
func TestBindDefaults(t *testing.T) {
	p := validateParse(t, validateEdit(t, "  hold_max: 500ms", "", "  resource: fenced", ""))
	written := fmt.Sprintf("%+v", *p)
	b, err := bind.Bind(p)
	if err != nil {
		t.Fatal(err)
	}
	ps := lockParams(t, b)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"target.nodes (redis's default)", b.Target.Nodes, 5},
		{"workload.hold_max (half the lease)", ps.HoldMax.Duration, time.Second},
		{"workload.resource", ps.Resource, "unfenced"},
		{"workload.clients", b.Workload.Clients, 3},
		{"nemesis[0].count", b.Faults[0].Count, 1},
		{"nemesis[0].interval (the duration)", b.Faults[0].Interval.Duration, time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if now := fmt.Sprintf("%+v", *p); now != written {
		t.Errorf("Bind changed the plan as written:\n%s\nnow\n%s", written, now)
	}

	// A size the plan gives is kept.
	b = validateBind(t, validateEdit(t, "  kind: redis", "  kind: redis\n  nodes: 3"))
	if b.Target.Nodes != 3 {
		t.Errorf("target.nodes = %d, want the plan's 3", b.Target.Nodes)
	}
}

// Every plan that ships with chaos validates against the plug-ins the
// runner's tests import (all of chaos's), regression plans included,
// which say the exit code scripts/regressions expects of them.
func TestBindShippedPlans(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "plans", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped plans: %v", err)
	}
	regressions, _ := filepath.Glob(filepath.Join("..", "plans", "regressions", "*.yaml"))
	for _, f := range regressions {
		if p, err := plans.Load(f); err == nil && p.Expect != "valid" && p.Expect != "invalid" {
			t.Errorf("%s: expect %q; a regression plan expects valid or invalid", f, p.Expect)
		}
	}
	files = append(files, regressions...)
	for _, f := range files {
		p, err := plans.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		ps := []*plans.Plan{p}
		if p.Compare != nil {
			ps = bind.Variants(p) // a comparison plan runs as its variants
		}
		for _, p := range ps {
			if _, err := bind.Bind(p); err != nil {
				t.Errorf("%s (as %s): %v", f, p.Name, err)
			}
		}
	}
}

// TestValidateMisplacedFields: a field that belongs to another plug-in, or
// to none, is refused at its line with the fields that the section's own
// plug-in allows, before anything starts; a bad value of a plug-in's own
// field is refused at its line too.
func TestBindMisplacedFields(t *testing.T) {
	const register = `name: m
time_limit: 30s
target: {kind: etcd}
workload:
  kind: etcd-register
  %s
nemesis: []
`
	const lock = `name: m
time_limit: 30s
target: {kind: etcd}
workload:
  kind: etcd-lock
  lease: 2s
  %s
nemesis:
  - kind: pause
    target: nodes
    duration: 1s
    %s
`
	for _, tc := range []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"shape on a pause", fmt.Sprintf(lock, "hold_max: 1s", "shape: halves"), 12,
			`unknown field "shape" in nemesis[0] (pause); allowed: count, duration, first_after, interval, kind, nodes, target`},
		{"offset on a pause", fmt.Sprintf(lock, "hold_max: 1s", "offset: 5s"), 12,
			`unknown field "offset" in nemesis[0] (pause); allowed: count, duration, first_after, interval, kind, nodes, target`},
		{"a misspelt shared field", fmt.Sprintf(lock, "hold_max: 1s", "intervl: 5s"), 12,
			`unknown field "intervl" in nemesis[0] (pause)`},
		{"lease on etcd-register", fmt.Sprintf(register, "lease: 2s"), 6,
			`unknown field "lease" in workload (etcd-register); allowed: clients, concurrency, key_period, keys, kind, mix, rate, read_mode, values`},
		{"resource on etcd-register", fmt.Sprintf(register, "resource: fenced"), 6,
			`unknown field "resource" in workload (etcd-register); allowed: clients, concurrency, key_period, keys, kind, mix, rate, read_mode, values`},
		{"an operation the register does not have", fmt.Sprintf(register, "mix: {read: 1, delete: 1}"), 6,
			`workload.mix: "delete": not an operation of this workload; expected read, write, cas`},
		{"a key period too short", fmt.Sprintf(register, "key_period: 1ms"), 6,
			`workload.key_period: 1ms: expected at least 100ms`},
		{"read_mode on etcd-lock", fmt.Sprintf(lock, "read_mode: linearizable", ""), 7,
			`unknown field "read_mode" in workload (etcd-lock); allowed: clients, hold_max, hold_min, kind, lease, resource`},
		{"a bad duration in a plug-in's field", fmt.Sprintf(lock, "hold_max: 1 second", ""), 7,
			`expected a duration such as 3s or 500ms, got "1 second"`},
		{"a shape on a clock fault", strings.Replace(fmt.Sprintf(lock, "hold_max: 1s", "shape: halves"), "kind: pause", "kind: clock", 1), 12,
			`unknown field "shape" in nemesis[0] (clock); allowed: clocks, count, duration, first_after, interval, kind, nodes, offset, strobe, target`},
		{"holder of a workload that holds nothing", strings.Replace(fmt.Sprintf(register, "read_mode: linearizable"), "nemesis: []", "nemesis:\n  - {kind: pause, target: holder, duration: 1s}", 1), 8,
			"nemesis[0].target: holder: the clients of workload etcd-register hold nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validateParse(t, tc.yaml)
			_, err := bind.Bind(p)
			if want := fmt.Sprintf("plan.yaml:%d: ", tc.line); err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Bind = %v, want an error starting %q and saying %q", err, want, tc.want)
			}
		})
	}
}

// TestResolvedPlan: the copy of the plan a run keeps holds the plug-ins'
// defaults, and is itself a plan that validates to the same.
func TestResolvedPlan(t *testing.T) {
	p := validateBind(t, validateEdit(t, "  hold_max: 500ms", "", "  resource: fenced", "", "  - kind: pause", "  - kind: clock\n    offset: 1s"))
	b, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hold_max: 1s", "resource: unfenced", "clocks: realtime", "offset: 1s", "nodes: 5", "clients: 3", "count: 1", "interval: 1s", "server: redis"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("resolved plan lacks %q:\n%s", want, b)
		}
	}
	q, err := plans.Parse("resolved.yaml", b)
	if err != nil {
		t.Fatalf("the resolved plan does not parse: %v\n%s", err, b)
	}
	qb, err := bind.Bind(q)
	if err != nil {
		t.Fatalf("the resolved plan does not bind: %v\n%s", err, b)
	}
	if got, want := lockParams(t, qb), lockParams(t, p); got != want {
		t.Errorf("resolved plan's workload %+v, want %+v", got, want)
	}
	if again, _ := qb.YAML(); string(again) != string(b) {
		t.Errorf("the resolved plan resolves to another:\n%s\nthen\n%s", b, again)
	}
}

// TestCheckersNamed: every workload is judged by checkers, each once, and
// each is the checker the registry knows by its name, which results,
// reports and chaos check --model use.
func TestCheckersNamed(t *testing.T) {
	for _, k := range workloads.Workloads.Names() {
		w, _ := workloads.Workloads.Lookup(k)
		cs := bind.Checkers(w)
		if len(cs) < 2 {
			t.Errorf("workload %s: checkers %v; want its own and stats", k, cs)
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if seen[c.Name()] {
				t.Errorf("workload %s: checker %s twice", k, c.Name())
			}
			seen[c.Name()] = true
			if r, ok := analysis.Checkers.Lookup(c.Name()); !ok || fmt.Sprint(r) != fmt.Sprint(c) {
				t.Errorf("workload %s: checker %s is not the registry's of that name (%v)", k, c.Name(), r)
			}
		}
	}
}

// TestTrafficFieldsDecoded: a register plan's traffic fields reach its
// parameters, those of its pace included.
func TestTrafficFieldsDecoded(t *testing.T) {
	p := validateBind(t, "name: t\ntime_limit: 10s\ntarget: {kind: etcd}\nworkload: {kind: etcd-register, mix: {cas: 0}, rate: 5, concurrency: 2, keys: 4}\n")
	b, err := p.Workload.Fields()
	if err != nil {
		t.Fatal(err)
	}
	var ps register.Params
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatal(err)
	}
	if ps.Rate != 5 || ps.Concurrency != 2 || ps.Keys != 4 || ps.Values != 5 || ps.Mix["cas"] != 0 || ps.Mix["read"] != 2 {
		t.Errorf("parameters %+v", ps)
	}
	if !strings.Contains(string(b), `"rate":5,"concurrency":2`) {
		t.Errorf("as a client gets them: %s", b)
	}
}

// TestVariantsAcrossVersions: a comparison's variants set versions, the
// target's own fields and server settings (over the plan's), and an error
// in one is at its line in the comparison plan.
func TestVariantsAcrossVersions(t *testing.T) {
	const yaml = `name: c
time_limit: 30s
target:
  kind: redis-sentinel
  config: {appendonly: "yes"}
workload:
  kind: redis-sentinel-set
compare:
  seeds: [1]
  variants:
    - {target: redis-sentinel, workload: redis-sentinel-set, version: 8.0.2}
    - {target: redis-sentinel, workload: redis-sentinel-set, server: valkey, version: 8.1.1, config: {min-replicas-to-write: "1"}}
    - {target: redis-sentinel, workload: redis-sentinel-set, version: 5.0.7}
`
	p, err := plans.Parse("c.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	vs := bind.Variants(p)
	if len(vs) != 3 {
		t.Fatalf("%d plans; want 3", len(vs))
	}
	for _, v := range vs[:2] {
		if _, err := bind.Bind(v); err != nil {
			t.Errorf("%s: %v", v.Name, err)
		}
	}
	valkey := vs[1]
	if valkey.Target.Version != "8.1.1" || valkey.Target.Config["min-replicas-to-write"] != "1" || valkey.Target.Config["appendonly"] != "yes" {
		t.Errorf("valkey variant's target: %+v", valkey.Target)
	}
	if b, err := bind.Bind(valkey); err != nil || b.Target.Target.(redis.Sentinel).Settings()["min-replicas-to-write"] != "1" {
		t.Errorf("valkey variant bound: %v", err)
	}
	if s, ok := valkey.Target.Params["server"]; !ok || s.Value != "valkey" {
		t.Errorf("valkey variant's target fields: %#v", valkey.Target.Params)
	}
	if _, ok := valkey.Workload.Params["server"]; ok {
		t.Error("server, a target field, went to the workload")
	}
	if vs[0].Name == vs[1].Name || !strings.Contains(valkey.Name, "8.1.1") {
		t.Errorf("names %q, %q: want each its own, with its version", vs[0].Name, vs[1].Name)
	}
	_, err = bind.Bind(vs[2])
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml:13: target.version: redis 5.0.7") {
		t.Errorf("a version no suite has: %v; want it at the variant's line", err)
	}
}

// A variant may set a workload field that the plan's own workload does not
// have: the comparison of registers gives each backend its read mode.
func TestVariantFieldOnAPlainWorkload(t *testing.T) {
	const yaml = `name: c
time_limit: 10s
target: {kind: etcd}
workload: {kind: etcd-register}
compare:
  seeds: [1]
  variants:
    - {target: zookeeper, workload: zookeeper-register, read_mode: checked}
    - {target: etcd, workload: etcd-register}
`
	p, err := plans.Parse("c.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	vs := bind.Variants(p)
	if len(vs) != 2 {
		t.Fatalf("%d plans; want 2", len(vs))
	}
	b, err := bind.Bind(vs[0])
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := b.Workload.Fields(); !strings.Contains(string(f), `"read_mode":"checked"`) {
		t.Errorf("read mode %s; want checked", f)
	}
}
