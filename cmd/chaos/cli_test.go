package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/runfolder"
)

// Every command's --help, and chaos help COMMAND, print its usage and
// flags on stdout and exit 0.
func TestHelpExitsZero(t *testing.T) {
	for _, c := range commands {
		if c.summary == "" {
			continue
		}
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			code, err := dispatch(args)
			if got := exitCode(code, err); got != exitValid {
				t.Errorf("%q: exit %d (%v), want 0", args, got, err)
				continue
			}
			if h, ok := err.(helpRequested); !ok || !strings.HasPrefix(h.text, "usage: chaos "+c.name) || !strings.Contains(h.text, c.summary) {
				t.Errorf("%q: %T %v, want the command's usage and summary", args, err, err)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, err := dispatch(args)
		if h, ok := err.(helpRequested); !ok || exitCode(code, err) != exitValid || !strings.Contains(h.text, "validate PLAN...") {
			t.Errorf("%q: %d %v, want the list of commands and exit 0", args, code, err)
		}
	}
	if code, err := dispatch([]string{"help", "frobnicate"}); code != exitUsage || !isUsage(err) {
		t.Errorf("help frobnicate: %d %v, want a usage error", code, err)
	}
	// The seed's flag says what its default is, once.
	_, err := dispatch([]string{"run", "--help"})
	if h := err.Error(); !strings.Contains(h, "(default: the plan's)") || strings.Contains(h, "(default -1)") {
		t.Errorf("run --help:\n%s", h)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var code int
		var err error
		out := capture(t, func() { code, err = dispatch(args) })
		if code != exitValid || err != nil || !strings.HasPrefix(out, "chaos ") || !strings.Contains(out, "go1.") {
			t.Errorf("%q: %d %v %q, want chaos's version and Go's", args, code, err, out)
		}
	}
}

// A folder that is not a run is a usage error (254) for every command
// that takes one.
func TestMissingFolderIsUsage(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	for _, cmd := range []string{"check", "report", "export", "replay", "shrink"} {
		code, err := dispatch([]string{cmd, gone})
		if got := exitCode(code, err); got != exitUsage {
			t.Errorf("%s %s: exit %d (%v), want %d", cmd, gone, got, err, exitUsage)
		}
	}
}

// chaos validate checks every plan given, with no Docker, and names every
// one that is not valid with its file and line.
func TestValidate(t *testing.T) {
	shipped, err := filepath.Glob(filepath.Join("..", "..", "plans", "*.yaml"))
	if err != nil || len(shipped) < 10 {
		t.Fatalf("shipped plans: %v %d", err, len(shipped))
	}
	regressions, _ := filepath.Glob(filepath.Join("..", "..", "plans", "regressions", "*.yaml"))
	var code int
	out := capture(t, func() { code, err = dispatch(append([]string{"validate"}, append(shipped, regressions...)...)) })
	if code != exitValid || err != nil || strings.Count(out, "ok  ") != len(shipped)+len(regressions) {
		t.Fatalf("validate the shipped plans: %d %v\n%s", code, err, out)
	}

	out = capture(t, func() {
		code, err = dispatch([]string{"validate", "testdata/plans/unknown-field.yaml", shipped[0], "testdata/plans/unknown-target.yaml"})
	})
	if exitCode(code, err) != exitUsage || !strings.Contains(out, "ok  "+shipped[0]) {
		t.Fatalf("validate with two bad plans: %d %v\n%s", code, err, out)
	}
	for _, want := range []string{"2 of 3 plans are not valid", "testdata/plans/unknown-field.yaml:9:", "testdata/plans/unknown-target.yaml:6:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	// --set is checked as the file's own field would be.
	plan := filepath.Join("..", "..", "plans", "redlock-pause.yaml")
	code, err = dispatch([]string{"validate", "--set", "workload.clients=many", plan})
	if exitCode(code, err) != exitUsage || !strings.Contains(err.Error(), "redlock-pause.yaml:") || !strings.Contains(err.Error(), "--set workload.clients=many") {
		t.Errorf("validate --set workload.clients=many: %d %v", code, err)
	}
	capture(t, func() {
		code, err = dispatch([]string{"validate", "--set", "workload.clients=4", "--set", "target.version=7.0.15", plan})
	})
	if code != exitValid || err != nil {
		t.Errorf("validate with good --set: %d %v", code, err)
	}
	// A comparison plan: each of its variants is bound.
	capture(t, func() {
		code, err = dispatch([]string{"validate", filepath.Join("..", "..", "plans", "compare-locks-pause.yaml")})
	})
	if code != exitValid || err != nil {
		t.Errorf("validate a comparison plan: %d %v", code, err)
	}
}

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		many bool
		want []int64
	}{
		{"7", false, []int64{7}},
		{"1-3", true, []int64{1, 2, 3}},
		{"1,5,9", true, []int64{1, 5, 9}},
		{"2-3,8", true, []int64{2, 3, 8}},
		{"1-3", false, nil},
		{"1,2", false, nil},
		{"3-1", true, nil},
		{"-1", false, nil},
		{"x", true, nil},
		{"0-100000", true, nil},
	} {
		got, err := parseSeeds(tc.in, tc.many)
		if (err != nil) != (tc.want == nil) || len(got) != len(tc.want) {
			t.Errorf("parseSeeds(%q, %v) = %v, %v; want %v", tc.in, tc.many, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseSeeds(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
	if code, err := dispatch([]string{"run", "--seed", "1", "--seeds", "1-3", "x.yaml"}); code != exitUsage || !isUsage(err) {
		t.Errorf("--seed with --seeds: %d %v, want a usage error", code, err)
	}
	plan := filepath.Join("..", "..", "plans", "redlock-pause.yaml")
	if code, err := dispatch([]string{"run", "--expect", "--set", "expect=", plan}); code != exitUsage || !strings.Contains(err.Error(), "no expect field") {
		t.Errorf("--expect with no expectation: %d %v, want a usage error", code, err)
	}
}

// A run whose plan expects an anomaly and finds it is as expected:
// analysis.json and run.json record it, junit.xml has no failure, the
// summary says so, --expect exits 0 and --json says it all.
func TestExpectedAnomalyPasses(t *testing.T) {
	dir := copyRun(t, "stale")
	if err := runfolder.Folder(dir).UpdateInfo(func(i *runfolder.Info) { i.Expect = "invalid" }); err != nil {
		t.Fatal(err)
	}
	var code int
	var err error
	out := capture(t, func() { code, err = dispatch([]string{"check", "--json", dir}) })
	if code != exitAnomaly || err != nil {
		t.Fatalf("check --json: %d %v", code, err)
	}
	var s runSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("--json output is not one JSON summary: %v\n%s", err, out)
	}
	if s.Verdict != "invalid" || s.Expect != "invalid" || s.AsExpected == nil || !*s.AsExpected || len(s.Kinds) == 0 || s.Exit != exitAnomaly {
		t.Errorf("summary %+v", s)
	}
	a, err := runfolder.Folder(dir).ReadAnalysis()
	info, ierr := runfolder.Folder(dir).ReadInfo()
	if err != nil || ierr != nil || a.AsExpected == nil || !*a.AsExpected || info.AsExpected == nil || !*info.AsExpected {
		t.Errorf("analysis.json and run.json do not record it as expected: %v %v %+v %+v", err, ierr, a.AsExpected, info.AsExpected)
	}
	b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name string `xml:"name,attr"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b, &suite); err != nil || suite.Failures != 0 || len(suite.Cases) == 0 || suite.Cases[0].Name != "expect" {
		t.Errorf("junit.xml: %v, %d failures, cases %+v; want an expect case and no failure\n%s", err, suite.Failures, suite.Cases, b)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "as expected (invalid)") {
		t.Errorf("summary.md:\n%s", md)
	}

	// The same run expected valid is unexpected: junit fails it.
	if err := runfolder.Folder(dir).UpdateInfo(func(i *runfolder.Info) { i.Expect = "valid" }); err != nil {
		t.Fatal(err)
	}
	out = capture(t, func() { code, err = dispatch([]string{"check", dir}) })
	if !strings.Contains(out, "expected: valid, unexpected") {
		t.Errorf("check output lacks the unmet expectation:\n%s", out)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err := xml.Unmarshal(b, &suite); err != nil || suite.Failures < 2 {
		t.Errorf("junit.xml of an unmet expectation: %d failures, want the expect case and the checker's\n%s", suite.Failures, b)
	}
	if s := summarize(a.Report, dir, exitAnomaly, true); s.Exit != exitAnomaly {
		t.Errorf("--expect exit for an unmet expectation: %d", s.Exit)
	}
}

// chaos check FILE writes analysis.json and report.html into --out, where
// its last line says the details are.
func TestCheckFileWritesItsDetails(t *testing.T) {
	edn := filepath.Join(t.TempDir(), "h.edn")
	writeFile(t, edn, `[{:type :invoke, :process 0, :f :acquire, :value nil}
{:type :ok, :process 0, :f :acquire, :value nil}
{:type :invoke, :process 1, :f :acquire, :value nil}
{:type :ok, :process 1, :f :acquire, :value nil}]`)
	out := t.TempDir()
	var code int
	var err error
	stdout := capture(t, func() { code, err = dispatch([]string{"check", "--model", "mutex", "--out", out, edn}) })
	if code != exitAnomaly || err != nil || !strings.Contains(stdout, "details in "+out) {
		t.Fatalf("check: %d %v\n%s", code, err, stdout)
	}
	a, err := runfolder.Folder(out).ReadAnalysis()
	if err != nil || a.Verdict != "invalid" || a.Results[0].FindingsTotal == 0 {
		t.Errorf("analysis.json in --out: %+v, %v", a, err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("report.html in --out: %v", err)
	}
}

// A history whose record of the cluster's final members says it ended
// short is an unfinished run (exit 2) even when run.json records no error,
// and every artifact says so (issue 35, item 12).
func TestEndedShortIsUnfinished(t *testing.T) {
	dir := copyRun(t, "clean")
	h, err := os.OpenFile(filepath.Join(dir, "history.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(h, `{"time":640000000,"type":"invoke","process":-1,"f":"final-members"}`)
	fmt.Fprintln(h, `{"time":650000000,"type":"info","process":-1,"f":"final-members","value":["n1","n2"],"error":"the cluster ended with members [n1 n2], not its original [n1 n2 n3]"}`)
	h.Close()
	out := checkDir(t, dir, exitUndecided)
	if !strings.Contains(out, "incomplete: the cluster did not end with its original members") {
		t.Errorf("check output does not say the run is unfinished:\n%s", out)
	}
	a, err := runfolder.Folder(dir).ReadAnalysis()
	if err != nil || a.Incomplete == "" || a.Verdict != "unknown" {
		t.Errorf("analysis.json: verdict %s, incomplete %q, %v", a.Verdict, a.Incomplete, err)
	}
}

// A finding listed beside a valid verdict it does not count in (chaos's
// garbage-read beside Elle's verdict under a chosen model) is said to be
// so, not counted as a finding of a valid history.
func TestCheckListedBeside(t *testing.T) {
	edn := filepath.Join(t.TempDir(), "h.edn")
	writeFile(t, edn, `{:type :invoke, :process 0, :f :txn, :value [[:w :x 1]]}
{:type :ok, :process 0, :f :txn, :value [[:w :x 1]]}
{:type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:type :ok, :process 1, :f :txn, :value [[:r :x 9]]}
{:type :invoke, :process 2, :f :txn, :value [[:r :x nil]]}
{:type :ok, :process 2, :f :txn, :value [[:r :x 1]]}`)
	var code int
	var err error
	stdout := capture(t, func() {
		code, err = dispatch([]string{"check", "--model", "rw-register", "--consistency-model", "serializable", "--out", t.TempDir(), edn})
	})
	if code != exitValid || err != nil || !strings.Contains(stdout, "rw-register: valid (1 listed beside it, not counted: garbage-read ×1)") {
		t.Errorf("%d %v, want valid with the garbage read listed beside it\n%s", code, err, stdout)
	}
}

// chaos check FILE --consistency-model chooses what Elle's checkers hold a
// history to: a stale read rules out strict serializability (Elle's
// default), not serializability; an unknown model is a usage error naming
// the known ones (issue 35, item 16).
func TestCheckConsistencyModel(t *testing.T) {
	edn := filepath.Join(t.TempDir(), "h.edn")
	writeFile(t, edn, `{:type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:type :ok, :process 0, :f :txn, :value [[:append :x 1]]}
{:type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:type :ok, :process 1, :f :txn, :value [[:r :x []]]}`)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{nil, exitAnomaly, "G-single-item-realtime"},
		{[]string{"--consistency-model", "serializable"}, exitValid, "strongest models its anomalies do not rule out: strict-serializable"},
		{[]string{"--consistency-model", "none", "--anomalies", "G2"}, exitValid, ""},
		{[]string{"--consistency-model", "snapshot-isolation,strong-session-serializable"}, exitValid, ""},
		{[]string{"--anomalies", "G1"}, exitAnomaly, "G-single-item-realtime"},
	} {
		args := append(append([]string{"check", "--model", "list-append", "--out", t.TempDir()}, c.args...), edn)
		var code int
		var err error
		stdout := capture(t, func() { code, err = dispatch(args) })
		if code != c.code || err != nil || !strings.Contains(stdout, c.says) {
			t.Errorf("%v: %d %v, want %d saying %q\n%s", c.args, code, err, c.code, c.says, stdout)
		}
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--model", "list-append", "--consistency-model", "serialisable"}, "serializable, snapshot-isolation"},
		{[]string{"--model", "list-append", "--anomalies", "G3"}, `unknown anomaly "G3"`},
		{[]string{"--model", "cas-register", "--consistency-model", "serializable"}, "--consistency-model does not apply"},
		{[]string{"--model", "list-append", "--sequential-keys"}, "--sequential-keys does not apply"},
	} {
		code, err := dispatch(append(append([]string{"check", "--out", t.TempDir()}, c.args...), edn))
		if code != exitUsage || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %d %v, want exit %d saying %q", c.args, code, err, exitUsage, c.says)
		}
	}
}

// chaos check FILE --model rw-register takes Elle's rw-register options:
// under serializability a process that wrote x = 1 and then read x's
// initial nil shows nothing, unless keys are sequential (or linearizable):
// then its read went back to a version before its own write, and the
// versions of x form a cycle (issue 35, item 17).
func TestCheckRWRegisterOptions(t *testing.T) {
	edn := filepath.Join(t.TempDir(), "h.edn")
	writeFile(t, edn, `{:type :invoke, :process 0, :value [[:w :x 1]]}
{:type :ok, :process 0, :value [[:w :x 1]]}
{:type :invoke, :process 0, :value [[:r :x nil]]}
{:type :ok, :process 0, :value [[:r :x nil]]}`)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{nil, exitValid, ""},
		{[]string{"--sequential-keys"}, exitAnomaly, "cyclic-versions"},
		{[]string{"--linearizable-keys"}, exitAnomaly, "cyclic-versions"},
	} {
		args := append(append([]string{"check", "--model", "rw-register", "--consistency-model", "serializable", "--out", t.TempDir()}, c.args...), edn)
		var code int
		var err error
		stdout := capture(t, func() { code, err = dispatch(args) })
		if code != c.code || err != nil || !strings.Contains(stdout, c.says) {
			t.Errorf("%v: %d %v, want %d saying %q\n%s", c.args, code, err, c.code, c.says, stdout)
		}
	}
}
