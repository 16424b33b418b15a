package replay_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/replay"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner/runtest"

	_ "github.com/chaos-testing/chaos/plugins"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const plan = `
name: pauses
seed: 7
time_limit: 30s
target: {kind: redis, nodes: 5}
workload: {kind: redlock, clients: 3, lease: 2s}
nemesis:
  - {kind: pause, target: holder, first_after: 3s, interval: 10s, duration: 5s}
  - {kind: partition, shape: majorities-ring, first_after: 5s, interval: 21s, duration: 4s}
  - {kind: combined, first_after: 8s, interval: 20s, duration: 2s}
`

// load parses and binds a plan, as a run does.
func load(t *testing.T, text string) *bind.Plan {
	t.Helper()
	p, err := plans.Parse("p.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bind.Bind(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// faultParams are the own fields of fault i of p, decoded as its kind
// decodes them (into P).
func faultParams[P any](t *testing.T, p *plans.Plan, i int) P {
	t.Helper()
	var ps P
	if err := p.DecodeParams(plans.FaultPath(i), p.Nemesis[i].Params, p.Nemesis[i], &ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// fault appends one recorded fault: its start at from (seconds), hitting
// victims, and its end at to.
func fault(h []history.Op, kind string, from, to float64, victims ...string) []history.Op {
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	add := func(s float64, typ history.Type, f string, v any) {
		h = append(h, history.Op{Index: len(h), Time: at(s), Process: history.Nemesis, Type: typ, F: f, Value: history.MustValue(v)})
	}
	if victims == nil {
		victims = []string{}
	}
	add(from, history.Invoke, kind+"-start", nil)
	add(from+0.05, history.Info, kind+"-start", victims)
	add(to, history.Invoke, kind+"-end", victims)
	add(to+0.01, history.Info, kind+"-end", victims)
	return h
}

// TestPlanPinsEachFault: with the schedule started 1.2 s into the
// history, each recorded pause and partition becomes an entry of its
// own, once, at its offset from the schedule's start, on its victims by
// name; a pause that hit nobody is left out, the last partition is cut to
// the time limit, the combined entry (which cannot be pinned) stays as it
// was at its index, and the replay plan is a legal plan that survives
// being written and read back.
func TestPlanPinsEachFault(t *testing.T) {
	p := load(t, plan)
	var h []history.Op
	h = fault(h, "pause", 4.2, 9.3, "c2")
	h = fault(h, "partition", 6.21, 10.3, "n1 -x- n4,n5", "n4 -x- n1", "n5 -x- n1")
	h = fault(h, "kill", 9.2, 11.3, "n2") // drawn by combined
	h = fault(h, "pause", 14.2, 19.3, "c0")
	h = fault(h, "pause", 24.2, 24.4) // nobody held the lock
	h = fault(h, "partition", 27.23, 30, "n2 -x- n3", "n3 -x- n2")
	q, notes, err := replay.Plan(p, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("notes: %q", notes)
	type entry struct {
		kind, target string
		nodes        []string
		first, dur   time.Duration
	}
	want := []entry{
		{"pause", "clients", []string{"c2"}, 3 * time.Second, 5 * time.Second},
		{"partition", "", nil, 5010 * time.Millisecond, 4 * time.Second},
		{"combined", "", nil, 8 * time.Second, 2 * time.Second},
		{"pause", "clients", []string{"c0"}, 13 * time.Second, 5 * time.Second},
		{"partition", "", nil, 26030 * time.Millisecond, 3970 * time.Millisecond},
	}
	if len(q.Nemesis) != len(want) {
		t.Fatalf("%d entries: %+v; want %d", len(q.Nemesis), q.Nemesis, len(want))
	}
	for i, w := range want {
		f := q.Nemesis[i]
		if f.Kind != w.kind || f.Target != w.target || !slices.Equal(f.Nodes, w.nodes) || f.FirstAfter.Duration != w.first || f.Duration.Duration != w.dur {
			t.Errorf("entry %d: %s %q %v at %s for %s; want %+v", i, f.Kind, f.Target, f.Nodes, f.FirstAfter, f.Duration, w)
		}
		if pinned := w.kind != "combined"; pinned != (f.Times == 1) {
			t.Errorf("entry %d (%s): times %d", i, f.Kind, f.Times)
		}
	}
	if g := faultParams[nemesis.PartitionParams](t, q, 4).Grudge; !slices.Equal(g["n2"], []string{"n3"}) || len(g) != 2 {
		t.Errorf("second partition pinned as %v; want n2 and n3 cut from each other", g)
	}
	if len(notes) != 2 {
		t.Errorf("notes %q; want the combined entry's and the pause that hit nobody", notes)
	}
	// Written and read back, it is a legal plan with the same faults.
	b, err := q.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back := load(t, string(b))
	for i, f := range back.Faults {
		if f.Kind != q.Nemesis[i].Kind || f.FirstAfter != q.Nemesis[i].FirstAfter || !slices.Equal(f.Nodes, q.Nemesis[i].Nodes) || f.Times != q.Nemesis[i].Times {
			t.Errorf("entry %d read back as %+v; written %+v", i, f, q.Nemesis[i])
		}
	}
}

// TestSame: a replay finds a finding again when one of its kinds, by
// checker, is among the original's.
func TestSame(t *testing.T) {
	rep := func(checker string, kinds ...string) analysis.Report {
		r := analysis.Result{Checker: checker}
		for _, k := range kinds {
			r.Findings = append(r.Findings, analysis.Finding{Kind: k})
		}
		return analysis.Report{Results: []analysis.Result{r}}
	}
	orig := rep("lock", "stale-write", "overlap")
	if got := replay.Same(orig, rep("lock", "overlap", "other")); !slices.Equal(got, []string{"lock: overlap"}) {
		t.Errorf("Same = %q; want lock: overlap", got)
	}
	if got := replay.Same(orig, rep("fencing", "stale-write")); got != nil {
		t.Errorf("another checker's kind: %q; want none", got)
	}
	if got := replay.Same(orig, analysis.Report{}); got != nil {
		t.Errorf("nothing found: %q", got)
	}
}

// TestReplayInjectsWhatTheRunRecorded runs Redlock with its holder
// paused (cut to 25 s) and then its replay, on real containers: the
// replay's faults hit the same clients, as long after the first fault as
// the run's did.
func TestReplayInjectsWhatTheRunRecorded(t *testing.T) {
	testenv.Docker(t)
	p := runtest.Plan(t, filepath.Join("..", "plans", "redlock-pause.yaml"), 25*time.Second)
	rep, dir := runtest.Run(t, p)
	h, _, err := runfolder.Folder(dir).ReadHistory()
	if err != nil {
		t.Fatal(err)
	}
	q, notes, err := replay.Plan(load(t, readFile(t, runfolder.Folder(dir).Path(runfolder.PlanFile))), h)
	if err != nil {
		t.Fatal(err)
	}
	again, rdir := runtest.Run(t, q)
	rh, _, err := runfolder.Folder(rdir).ReadHistory()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run: %s %q; replay: %s %q; notes %q", rep.Verdict, replay.Kinds(rep), again.Verdict, replay.Kinds(again), notes)
	orig, repl := hit(history.FaultWindows(h)), hit(history.FaultWindows(rh))
	if len(orig) == 0 || len(orig) != len(repl) {
		t.Fatalf("the run's faults %v; the replay's %v; want as many, and some", orig, repl)
	}
	for i := range orig {
		if orig[i].victims != repl[i].victims || (orig[i].at-repl[i].at).Abs() > 300*time.Millisecond {
			t.Errorf("fault %d: the run's %+v, the replay's %+v; want the same victims at the same offset", i, orig[i], repl[i])
		}
	}
}

type hitAt struct {
	victims string
	at      time.Duration // after the first fault's start
}

// hit are the faults that hit someone, each by its victims and its start
// after the first's.
func hit(ws []history.FaultWindow) []hitAt {
	var out []hitAt
	for _, w := range ws {
		if len(w.Victims) > 0 {
			out = append(out, hitAt{strings.Join(w.Victims, " "), w.Start})
		}
	}
	for i := len(out) - 1; i >= 0; i-- {
		out[i].at -= out[0].at
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlanFindsEveryFault: faults recorded a hair before the time the
// schedule's start makes them due (the start is estimated from another),
// or late because the heal before them overran it, are found all the
// same (a Redlock run of six kills and six clock jumps once replayed
// with three and four).
func TestPlanFindsEveryFault(t *testing.T) {
	p := load(t, `
name: skew
seed: 1
time_limit: 60s
target: {kind: redis, nodes: 5}
workload: {kind: redlock, clients: 3, lease: 10s}
nemesis:
  - {kind: kill, target: nodes, nodes: [n4, n5], count: 2, first_after: 2s, interval: 10s, duration: 5s}
  - {kind: clock, target: nodes, nodes: [n1, n2, n3], offset: 30s, first_after: 6500ms, interval: 10s, duration: 2s}
`)
	var h []history.Op
	kills := []float64{5.079010059, 15.078948688, 25.078632677, 35.089445192, 45.946043829, 55.079545757}
	ends := []float64{10.977, 21.63, 33.93, 45.946008877, 53.84, 63}
	for i, at := range kills {
		h = fault(h, "kill", at, ends[i], "n5", "n4")
		h = fault(h, "clock", at+4.5, at+6.5, "n1 +30s (realtime)")
	}
	q, _, err := replay.Plan(p, h)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, f := range q.Nemesis {
		n[f.Kind]++
	}
	if n["kill"] != 6 || n["clock"] != 6 {
		t.Errorf("replay plan has %v; want 6 kills and 6 clock jumps", n)
	}
}
