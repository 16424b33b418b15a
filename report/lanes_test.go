package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// lockRun is a hand-written lock history: p0 acquires (token 7), writes
// and releases; p1 acquires (token 8) and never releases; p2 fails to
// acquire; the nemesis pauses p0. One finding names p0's write and p1's
// acquisition.
func lockRun(t *testing.T) Run {
	var ops []history.Op
	add := func(ms int, proc int, typ history.Type, f, v string) {
		ops = append(ops, history.Op{Index: len(ops), Time: time.Duration(ms) * time.Millisecond, Process: proc, Type: typ, F: f, Value: []byte(v)})
	}
	add(100, 0, history.Invoke, "acquire", `{"lock":"l","token":null}`)                       // 0
	add(200, 0, history.Ok, "acquire", `{"lock":"l","session":1,"token":7}`)                  // 1
	add(250, history.Nemesis, history.Invoke, "pause-start", `null`)                          // 2
	add(250, history.Nemesis, history.Info, "pause-start", `["p0"]`)                          // 3
	add(300, 1, history.Invoke, "acquire", `{"lock":"l","token":null}`)                       // 4
	add(420, 1, history.Ok, "acquire", `{"lock":"l","session":1,"token":8}`)                  // 5
	add(500, history.Nemesis, history.Invoke, "pause-end", `["p0"]`)                          // 6
	add(500, history.Nemesis, history.Info, "pause-end", `["p0"]`)                            // 7
	add(510, 0, history.Invoke, "write", `{"key":"l","value":"p0-s1","session":1,"token":7}`) // 8
	add(511, 0, history.Ok, "write", `{"key":"l","value":"p0-s1","session":1,"token":7}`)     // 9
	add(520, 0, history.Invoke, "release", `{"lock":"l","session":1,"token":7}`)              // 10
	add(530, 0, history.Ok, "release", `{"lock":"l","session":1,"token":7}`)                  // 11
	add(540, 2, history.Invoke, "acquire", `{"lock":"l","token":null}`)                       // 12
	ops = append(ops, history.Op{Index: 13, Time: 900 * time.Millisecond, Process: 2, Type: history.Fail, F: "acquire", Value: []byte(`{"lock":"l","token":null}`), Error: "lock already taken"})
	add(1000, 1, history.Invoke, "write", `{"key":"l","value":"p1-s1","session":1,"token":8}`) // 14
	add(1100, 1, history.Ok, "write", `{"key":"l","value":"p1-s1","session":1,"token":8}`)     // 15
	rep := analysis.Report{Verdict: analysis.Invalid, Ops: len(ops), Results: []analysis.Result{{
		Checker: "lock", Verdict: analysis.Invalid, FindingsTotal: 3, Kinds: map[string]int{"stale-write": 2, "mutual-exclusion": 1},
		Stats: map[string]any{"hold_time_p50_s": 0.574861815, "writes": map[string]int{"ok": 2, "fail": 0},
			"by_f": map[string]any{"acquire": map[string]int{"ok": 2, "fail": 1}, "write": map[string]int{"ok": 2, "fail": 0}}},
		Findings: []analysis.Finding{
			{Kind: "stale-write", Explanation: "p0's write (#9), made under its acquisition (#1), was accepted after p1's (#5)", Ops: []history.Op{ops[1], ops[5], ops[8], ops[9]}},
			{Kind: "mutual-exclusion", Explanation: "p0 and p1 both held the lock", Ops: []history.Op{ops[1], ops[5], ops[10]}},
		},
	}, {Checker: "stats", Verdict: analysis.Valid, Stats: map[string]any{"acquire": map[string]any{"ok": 2, "fail": 1, "info": 0}, "write": map[string]any{"ok": 2, "fail": 0, "info": 0}}}}}
	return Run{Dir: t.TempDir(), Plan: "lock-story", Seed: 1, Target: "redis", Nodes: 3, Workload: "redlock", Report: rep, History: ops}
}

func writeAndRead(t *testing.T, r Run) string {
	t.Helper()
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTimelineTellsTheStory: a lane per process, each op a box with its
// id and its f, the lock holds drawn with their tokens, the fault labelled
// with its victim.
func TestTimelineTellsTheStory(t *testing.T) {
	page := writeAndRead(t, lockRun(t))
	for _, want := range []string{">nemesis</text>", ">p0</text>", ">p1</text>", ">p2</text>",
		`id="op-0"`, `id="op-1"`, `id="op-8"`, `id="op-14"`, // invocations and completions: what #N may name
		">write p1-s1</text>", ">acquire t7</text>", ">acquire: lock already taken</text>",
		">pause p0</text>", ">token 7</text>", ">token 8</text>",
		`p1 holds &#34;l&#34;, session 1, fencing token 8, from 0.420s (#5) to the end of the run, never released`,
		`p0 holds &#34;l&#34;, session 1, fencing token 7, from 0.200s (#1) to 0.520s (#10)`,
		"#8 p0 write {&#34;key&#34;:&#34;l&#34;,&#34;value&#34;:&#34;p0-s1&#34;,&#34;session&#34;:1,&#34;token&#34;:7}\ninvoked 0.510s\nok #9 at 0.511s (1ms)\nfinding 1: stale-write",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, `<g class="hold">`); n != 2 {
		t.Errorf("%d holds drawn, want 2", n)
	}
	selfContained(t, page)
}

// TestFindingsLinked: every #N of a finding is a link to its operation,
// each operation a finding names carries the finding's id and links back,
// and findings are grouped by kind with their counts.
func TestFindingsLinked(t *testing.T) {
	page := writeAndRead(t, lockRun(t))
	for _, want := range []string{
		`p0&#39;s write (<a href="#op-9">#9</a>), made under its acquisition (<a href="#op-1">#1</a>), was accepted after p1&#39;s (<a href="#op-5">#5</a>)`,
		`<a href="#op-8">#8</a> p0 0.510s invoke write`, `id="finding-1"`, `id="finding-2"`, `href="#finding-1">on the timeline</a>`,
		`stale-write: 2 (1 listed)`, `mutual-exclusion: 1`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Each operation's box: the findings it belongs to.
	boxes := map[string]string{}
	for _, m := range regexp.MustCompile(`<g class="op [^"]*" id="op-(\d+)"(?: data-findings="([^"]*)")?>`).FindAllStringSubmatch(page, -1) {
		boxes[m[1]] = m[2]
	}
	for op, want := range map[string]string{"0": "finding-1 finding-2", "4": "finding-1 finding-2", "8": "finding-1", "10": "finding-2", "12": "", "14": ""} {
		if got, ok := boxes[op]; !ok || got != want {
			t.Errorf("op-%s's box: findings %q (drawn %v), want %q", op, got, ok, want)
		}
	}
	if !regexp.MustCompile(`id="op-8" data-findings="finding-1"><a href="#finding-1">`).MatchString(page) {
		t.Error("a finding's operation does not link back to it")
	}
}

// TestStatsAsTables: a checker's figures are tables, nested maps as
// sub-tables or a table of counts, never Go's map syntax.
func TestStatsAsTables(t *testing.T) {
	page := writeAndRead(t, lockRun(t))
	if strings.Contains(page, "map[") {
		t.Error("the report prints Go's map syntax")
	}
	for _, want := range []string{
		`<tr><th>hold_time_p50_s</th><td>0.5749</td></tr>`,
		`<tr><th>writes</th><td><table class="stats"><tr><th>fail</th><td>0</td></tr><tr><th>ok</th><td>2</td></tr></table></td></tr>`,
		`<table class="stats"><tr><th></th><th>fail</th><th>info</th><th>ok</th></tr><tr><th>acquire</th><td class="num">1</td><td class="num">0</td><td class="num">2</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestPerF: latency and throughput name each f in a legend, with its
// quantiles.
func TestPerF(t *testing.T) {
	page := writeAndRead(t, lockRun(t))
	for _, want := range []string{"<b>acquire</b> p50 ", "<b>write</b> p50 1ms · p95 100ms · p99 100ms", "p99 over stretches of the run",
		"<title>acquire p95</title>", "acquire (3 in all)", "write (2 in all)", "failed or unknown (every f)"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A short operation in a finding is drawn wide enough to see.
func TestFoundOpVisible(t *testing.T) {
	r := lockRun(t)
	r.History = append(r.History, history.Op{Index: 16, Time: 60 * time.Second, Process: 1, Type: history.Invoke, F: "write"})
	page := writeAndRead(t, r)
	m := regexp.MustCompile(`id="op-8" data-findings="finding-1"><a href="#finding-1"><rect id="op-9" x="[\d.]+" y="[\d.]+" width="([\d.]+)"`).FindStringSubmatch(page)
	if m == nil || parseFloat(t, m[1]) < minFound {
		t.Errorf("the stale write's box: %v, want at least %g wide", m, minFound)
	}
}

// A finding whose operations are on a further page of the timeline links
// there, and that page marks them and highlights them by the same script.
func TestFindingOnFurtherPage(t *testing.T) {
	r := synthetic(t, 3, 1000) // two pages
	inv := 2 + 900*6           // p0's 900th write: page 2
	f := &r.Report.Results[0].Findings[0]
	f.Ops, f.Explanation = r.History[inv:inv+2], fmt.Sprintf("p0 wrote late (#%d)", inv+1)
	page := writeAndRead(t, r)
	for _, want := range []string{
		fmt.Sprintf(`<a href="timeline/page-2.html#op-%d">#%d</a>`, inv+1, inv+1),
		fmt.Sprintf(`<a href="timeline/page-2.html#op-%d">#%d</a> p0`, inv, inv),
		`<a class="on" href="timeline/page-2.html#finding-1">on the timeline</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "timeline", "page-2.html"))
	if err != nil {
		t.Fatal(err)
	}
	p2 := string(b)
	for _, want := range []string{fmt.Sprintf(`id="op-%d" data-findings="finding-1"><a href="../report.html#finding-1">`, inv), fmt.Sprintf(`id="op-%d"`, inv+1), "<script>", "hashchange"} {
		if !strings.Contains(p2, want) {
			t.Errorf("page 2 lacks %q", want)
		}
	}
	selfContained(t, p2)
}

// A run too long to draw whole is drawn from a sample; the entries its
// findings name are drawn all the same, and their #N link to them.
func TestSampleKeepsFindingOps(t *testing.T) {
	r := lockRun(t)
	var sample []history.Op
	for _, op := range r.History {
		if op.Index != 8 && op.Index != 9 { // the sample left out p0's stale write
			sample = append(sample, op)
		}
	}
	r.History, r.SampledEvery = sample, 2
	page := writeAndRead(t, r)
	if !strings.Contains(page, `id="op-8"`) || !strings.Contains(page, `href="#op-9"`) {
		t.Error("the stale write a finding names, left out of the sample, is not drawn and linked")
	}
}

// A fault that hit nobody is drawn as no window, and the Faults section
// names it as one that hit nobody.
func TestFaultThatHitNobody(t *testing.T) {
	r := lockRun(t)
	r.History = append([]history.Op{
		{Index: 100, Time: 10 * time.Millisecond, Process: history.Nemesis, Type: history.Invoke, F: "partition-start"},
		{Index: 101, Time: 90 * time.Millisecond, Process: history.Nemesis, Type: history.Info, F: "partition-start", Value: []byte(`[]`)},
	}, r.History...)
	page := writeAndRead(t, r)
	if !strings.Contains(page, "Faults that hit nobody") || !strings.Contains(page, "partition from 0.010s (#100)") {
		t.Error("the fault that hit nobody is not named in the Faults section")
	}
}
