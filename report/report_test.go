package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// synthetic is a run of procs clients making n operations each, one in
// every ten failing and one in every hundred unknown, with a pause of p1
// from 1 s to 2 s.
func synthetic(t testing.TB, procs, n int) Run {
	var ops []history.Op
	add := func(at time.Duration, proc int, typ history.Type, f string, v any) {
		ops = append(ops, history.Op{Index: len(ops), Time: at, Process: proc, Type: typ, F: f, Value: history.MustValue(v)})
	}
	add(time.Second, history.Nemesis, history.Invoke, "pause-start", nil)
	add(time.Second, history.Nemesis, history.Info, "pause-start", []string{"p1"})
	for i := range n {
		for p := range procs {
			at := time.Duration(i)*time.Millisecond + time.Duration(p)*time.Microsecond + 2*time.Second
			add(at, p, history.Invoke, "write", map[string]any{"key": "k", "value": i})
			typ := history.Ok
			switch {
			case i%100 == 7:
				typ = history.Info
			case i%10 == 3:
				typ = history.Fail
			}
			add(at+500*time.Microsecond, p, typ, "write", map[string]any{"key": "k", "value": i})
		}
	}
	add(2500*time.Millisecond, history.Nemesis, history.Invoke, "clock-start", nil)
	add(2500*time.Millisecond, history.Nemesis, history.Info, "clock-start", []string{"n2 strobe 0/+3s every 100ms (all)"})
	add(3*time.Second, history.Nemesis, history.Invoke, "clock-end", []string{"n2 strobe 0/+3s every 100ms (all)"})
	add(3*time.Second, history.Nemesis, history.Info, "clock-end", []string{"n2 strobe 0/+3s every 100ms (all)"})
	add(3*time.Second, history.Nemesis, history.Invoke, "pause-end", []string{"p1"})
	add(3*time.Second, history.Nemesis, history.Info, "pause-end", []string{"p1"})
	rep := analysis.Report{Verdict: analysis.Invalid, Ops: len(ops), Results: []analysis.Result{{
		Checker: "lock", Verdict: analysis.Invalid, FindingsTotal: 1, Notes: []string{"a note <b>escaped</b>"},
		Stats:    map[string]any{"acquisitions": 3},
		Findings: []analysis.Finding{{Kind: "stale-write", Explanation: "p1 wrote after p0", Ops: ops[2:4]}},
	}}}
	return Run{Dir: t.TempDir(), Plan: "synthetic", Seed: 7, Target: "redis", Nodes: 5, Workload: "redlock",
		Started: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Versions: map[string]string{"go": "go1.26"}, Report: rep, History: ops}
}

func TestWriteReport(t *testing.T) {
	r := synthetic(t, 3, 1000) // 3000 operations: two timeline pages
	os.MkdirAll(filepath.Join(r.Dir, "logs"), 0o755)
	os.WriteFile(filepath.Join(r.Dir, "logs", "n1.log"), []byte("log"), 0o644)
	os.WriteFile(filepath.Join(r.Dir, "linearizability-r1.html"), []byte("vis"), 0o644)
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"synthetic", `class="verdict invalid"`, "stale-write", "p1 wrote after p0", "<svg", "pause p1",
		"a note &lt;b&gt;escaped&lt;/b&gt;", `href="logs/n1.log"`, `href="linearizability-r1.html"`, `href="timeline/page-2.html"`,
		`fill="#d64545"`, `fill="#e8a33d"`, "go1.26", "Clock offsets", ">strobe 0/+3s every 100ms (all)</text>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	selfContained(t, page)
	junit, _ := os.ReadFile(filepath.Join(r.Dir, "junit.xml"))
	for _, want := range []string{`<testsuite name="synthetic seed 7" tests="1" failures="1"`, `<testcase name="lock" classname="chaos.synthetic">`, `<failure message="1 findings">stale-write: p1 wrote after p0`} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("junit.xml lacks %q:\n%s", want, junit)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(r.Dir, "summary.md"))
	for _, want := range []string{"### synthetic (seed 7): invalid", "| lock | invalid | 1 |", "- **stale-write** (lock): p1 wrote after p0"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
	p2, err := os.ReadFile(filepath.Join(r.Dir, "timeline", "page-2.html"))
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, string(p2))
	if !strings.Contains(string(p2), `href="../report.html"`) {
		t.Error("page 2 does not link back to the report")
	}
}

// selfContained fails t if page could make a request: no script but the
// page's own inline one, no external stylesheet, font or image, and no
// URL but SVG's namespace.
func selfContained(t *testing.T, page string) {
	t.Helper()
	if n, m := strings.Count(page, "<script"), strings.Count(page, "<script>"); n != m || m > 1 {
		t.Errorf("page holds %d scripts, %d of them inline: want at most the one inline", n, m)
	}
	for _, bad := range []string{"<script src", "<link", "@import", "url(", "<img", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	for _, u := range regexp.MustCompile(`[a-z]+://[^"' )<]*`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("page holds the URL %s", u)
		}
	}
}

func TestWriteEmptyHistory(t *testing.T) {
	r := Run{Dir: t.TempDir(), Plan: "empty", Report: analysis.Report{Verdict: analysis.Unknown}}
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReport1M renders the report of a history of 1,000,000
// operations (2,000,000 entries) from 10 processes.
func BenchmarkReport1M(b *testing.B) {
	r := synthetic(b, 10, 100_000)
	b.ResetTimer()
	for range b.N {
		if err := Write(r); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var size int64
	filepath.Walk(r.Dir, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	b.ReportMetric(float64(size)/1e6, "MB-written")
}

// A run that did not finish cleanly is never shown as valid: its headline
// says incomplete unless it found an anomaly, every page says why, and
// junit.xml has a test case in error so that CI sees a failure.
func TestWriteIncomplete(t *testing.T) {
	const why = "interrupted: context canceled"
	for _, tc := range []struct {
		verdict  analysis.Verdict
		headline string
		failures string
	}{
		{analysis.Valid, `<span class="verdict incomplete">incomplete</span>`, `failures="0"`},
		{analysis.Unknown, `<span class="verdict incomplete">incomplete</span>`, `failures="0"`},
		{analysis.Invalid, `<span class="verdict invalid">invalid</span>`, `failures="1"`},
	} {
		t.Run(string(tc.verdict), func(t *testing.T) {
			r := synthetic(t, 2, 10)
			r.Report.Verdict = tc.verdict
			r.Report.Results[0].Verdict = tc.verdict
			if tc.verdict != analysis.Invalid {
				r.Report.Results[0].Findings, r.Report.Results[0].FindingsTotal = nil, 0
			}
			r.Incomplete = why
			if err := Write(r); err != nil {
				t.Fatal(err)
			}
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(r.Dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			page := read("report.html")
			if !strings.Contains(page, "<h1>synthetic "+tc.headline+"</h1>") || !strings.Contains(page, "incomplete: "+why) {
				t.Errorf("report.html: want the headline %s and the reason %q", tc.headline, why)
			}
			junit := read("junit.xml")
			for _, want := range []string{tc.failures, `errors="1"`, `<testcase name="run" classname="chaos.synthetic">`, `<error message="incomplete: ` + why + `">`} {
				if !strings.Contains(junit, want) {
					t.Errorf("junit.xml lacks %q:\n%s", want, junit)
				}
			}
			summary := read("summary.md")
			status := "incomplete"
			if tc.verdict == analysis.Invalid {
				status = "invalid"
			}
			for _, want := range []string{"### synthetic (seed 7): " + status + "\n", "**incomplete: " + why + "**"} {
				if !strings.Contains(summary, want) {
					t.Errorf("summary.md lacks %q:\n%s", want, summary)
				}
			}
		})
	}
}

// A clean run's junit.xml has no error, and its headline is its verdict.
func TestWriteComplete(t *testing.T) {
	r := synthetic(t, 2, 10)
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	junit, _ := os.ReadFile(filepath.Join(r.Dir, "junit.xml"))
	page, _ := os.ReadFile(filepath.Join(r.Dir, "report.html"))
	if !strings.Contains(string(junit), `errors="0"`) || strings.Contains(string(junit), "<error") || strings.Contains(string(page), "incomplete:") || strings.Contains(string(page), `class="verdict incomplete"`) {
		t.Errorf("a clean run is shown as incomplete:\n%s", junit)
	}
}

func TestIndexIncomplete(t *testing.T) {
	results := t.TempDir()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	err := WriteIndex(results, []IndexEntry{
		{Path: "p/a", Plan: "harness-error", Started: t0, Verdict: "unknown", Incomplete: "kill-start [n3]: container is not running"},
		{Path: "p/b", Plan: "killed-early", Started: t0, Verdict: NotAnalyzed, Incomplete: "no end recorded"},
		{Path: "p/c", Plan: "clean", Started: t0, Verdict: "valid"},
		{Path: "p/d", Plan: "anomaly-then-killed", Started: t0, Verdict: "invalid", Incomplete: "no end recorded"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(results, "index.html"))
	page := string(b)
	if n := strings.Count(page, `class="verdict valid"`); n != 1 {
		t.Errorf("%d runs shown valid, want only the clean one", n)
	}
	for _, want := range []string{`<span class="verdict incomplete">incomplete</span><br><small>incomplete: kill-start [n3]: container is not running</small>`,
		`<span class="verdict incomplete">incomplete, not analyzed</span>`,
		`<span class="verdict invalid">invalid</span><br><small>incomplete: no end recorded</small>`} {
		if !strings.Contains(page, want) {
			t.Errorf("index lacks %q", want)
		}
	}
}

// TestCycleDrawn: a transactional finding's cycle is drawn, each
// transaction a box naming it, its process and outcome, what it did
// (cut short, the whole as its tooltip), each edge an arrow labelled with
// its relation, real time dashed; each arrow runs from border to border
// of the boxes it joins.
func TestCycleDrawn(t *testing.T) {
	r := synthetic(t, 1, 10)
	long := `append "k1" 4294967297, r "k2" [4294967298 8589934593], append "k3" 4294967299`
	r.Report.Results[0].Findings = append(r.Report.Results[0].Findings, analysis.Finding{Kind: "G-single-item-realtime", Explanation: "Let T1 …", Cycle: []analysis.CycleStep{
		{Name: "T1", Op: 12, Process: 0, Type: history.Ok, Txn: long, Next: "rw"},
		{Name: "T2", Op: 15, Process: 3, Type: history.Info, Txn: `r "k1" [1]`, Next: "wr"},
		{Name: "T3", Op: 20, Process: 1, Type: history.Ok, Txn: `append "k2" 2`, Next: "realtime"},
	}})
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"T1 · p0 · #12 ok", "T2 · p3 · #15 info", `r &#34;k1&#34; [1]`, `append &#34;k1&#34; 4294967297, r &#34;k2&#34; [4…`,
		"T1: p0&#39;s txn #12 (ok): " + strings.ReplaceAll(long, `"`, "&#34;"), `stroke-dasharray="6 4" marker-end="url(#arrow-realtime)"`,
		">rw</text>", ">wr</text>", ">realtime</text>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Boxes and arrows: every arrow's ends lie on the border of a box.
	boxes := regexp.MustCompile(`<rect x="([\d.]+)" y="([\d.]+)" width="240" height="40"`).FindAllStringSubmatch(page, -1)
	paths := regexp.MustCompile(`<path d="M([\d.]+),([\d.]+)Q[\d.]+,[\d.]+ ([\d.]+),([\d.]+)"`).FindAllStringSubmatch(page, -1)
	if len(boxes) != 3 || len(paths) != 3 {
		t.Fatalf("%d boxes, %d arrows; want 3 of each", len(boxes), len(paths))
	}
	onBorder := func(x, y string) bool {
		px, py := parseFloat(t, x), parseFloat(t, y)
		for _, bx := range boxes {
			x0, y0 := parseFloat(t, bx[1]), parseFloat(t, bx[2])
			inside := px >= x0-0.2 && px <= x0+240.2 && py >= y0-0.2 && py <= y0+40.2
			edge := math.Abs(px-x0) < 0.2 || math.Abs(px-x0-240) < 0.2 || math.Abs(py-y0) < 0.2 || math.Abs(py-y0-40) < 0.2
			if inside && edge {
				return true
			}
		}
		return false
	}
	for _, p := range paths {
		if !onBorder(p[1], p[2]) || !onBorder(p[3], p[4]) {
			t.Errorf("arrow %s,%s to %s,%s does not join two boxes' borders", p[1], p[2], p[3], p[4])
		}
	}
}

// TestLongCycleNotDrawn: a cycle of hundreds of transactions is said, not
// drawn.
func TestLongCycleNotDrawn(t *testing.T) {
	steps := make([]analysis.CycleStep, 943)
	for i := range steps {
		steps[i] = analysis.CycleStep{Name: fmt.Sprintf("T%d", i+1), Type: history.Ok, Next: "ww"}
	}
	got := string(cycleSVG(steps))
	if strings.Contains(got, "<svg") || !strings.Contains(got, "A cycle of 943 transactions") {
		t.Errorf("a cycle of 943: %.200q", got)
	}
}

func parseFloat(t *testing.T, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSampledReport: a report drawn from a sample of a long run says so,
// and counts each sampled completion as the operations it stands for.
func TestSampledReport(t *testing.T) {
	whole, page := throughputPeak(t, synthetic(t, 3, 100))
	if strings.Contains(page, "one client operation in") {
		t.Error("a report of the whole history says it draws a sample")
	}
	r := synthetic(t, 3, 100)
	r.SampledEvery = 8
	sampled, page := throughputPeak(t, r)
	if !strings.Contains(page, "one client operation in 8") {
		t.Error("the report does not say that it draws a sample")
	}
	if sampled != 8*whole {
		t.Errorf("throughput's peak %d/s, want 8 times the %d/s of the same history unsampled", sampled, whole)
	}
}

// throughputPeak writes r's report and reads its throughput plot's peak.
func throughputPeak(t *testing.T, r Run) (int, string) {
	t.Helper()
	page := writeAndRead(t, r)
	m := regexp.MustCompile(`>(\d+)/s</text>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no throughput peak in the report")
	}
	n, _ := strconv.Atoi(m[1])
	return n, page
}
