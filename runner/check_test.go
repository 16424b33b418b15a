package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
)

// A :fail :cas in porcupine's etcd logs means the compare did not match:
// porcupine's model takes it as evidence, and so must chaos check.
func TestCheckEtcdFailedCasIsEvidence(t *testing.T) {
	for _, c := range []struct {
		name, log    string
		linearizable bool
	}{
		{"cas failed while the value matched", "INFO  jepsen.util - 0\t:invoke\t:write\t1\n" +
			"INFO  jepsen.util - 0\t:ok\t:write\t1\n" +
			"INFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]\n" +
			"INFO  jepsen.util - 1\t:fail\t:cas\t[1 2]\n", false},
		{"cas failed while the value differed", "INFO  jepsen.util - 0\t:invoke\t:write\t3\n" +
			"INFO  jepsen.util - 0\t:ok\t:write\t3\n" +
			"INFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]\n" +
			"INFO  jepsen.util - 1\t:fail\t:cas\t[1 2]\n" +
			"INFO  jepsen.util - 2\t:invoke\t:read\tnil\n" +
			"INFO  jepsen.util - 2\t:ok\t:read\t3\n", true},
		{"a read that timed out is unknown", "INFO  jepsen.util - 0\t:invoke\t:write\t3\n" +
			"INFO  jepsen.util - 0\t:ok\t:write\t3\n" +
			"INFO  jepsen.util - 2\t:invoke\t:read\tnil\n" +
			"INFO  jepsen.util - 2\t:fail\t:read\t:timed-out\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "etcd.log")
			if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
				t.Fatal(err)
			}
			events, err := parseJepsenLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := porcupine.CheckEvents(etcdModel, events); got != c.linearizable {
				t.Fatalf("porcupine says linearizable: %t; the test expects %t", got, c.linearizable)
			}
			want := analysis.Invalid
			if c.linearizable {
				want = analysis.Valid
			}
			r, _ := checkFile(t, path, "", t.TempDir())
			if r.Verdict != want {
				t.Fatalf("chaos check: %s, porcupine: linearizable %t; notes %q", r.Verdict, c.linearizable, r.Notes)
			}
		})
	}
}

// Clojure's = tells apart every pair of values in register-types-invalid.edn,
// each on a key of its own: every key is illegal, not just some.
func TestEDNValueTypesEveryKey(t *testing.T) {
	r, _ := checkFile(t, "../foreign/jepsen/testdata/register-types-invalid.edn", "register", t.TempDir())
	if r.Verdict != analysis.Invalid || r.Stats["keys"] != 7 || r.Stats["keys_illegal"] != 7 {
		t.Fatalf("%s, stats %v: expected all 7 registers illegal", r.Verdict, r.Stats)
	}
}

// A history whose every operation failed is valid, and says why.
func TestCheckAllFailed(t *testing.T) {
	r, _ := checkFile(t, "../foreign/jepsen/testdata/cas-register-all-failed-valid.edn", "cas-register", t.TempDir())
	if r.Verdict != analysis.Valid || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no operation took effect: 4 failed;") {
		t.Fatalf("%s %q: expected valid, with a note that no operation took effect", r.Verdict, r.Notes)
	}
}

// analyzeRegisterRun writes a finished etcd-register run of ops and
// analyzes it.
func analyzeRegisterRun(t *testing.T, ops []history.Op) analysis.Report {
	t.Helper()
	dir := t.TempDir()
	info, _ := json.Marshal(runfolder.Info{Plan: "p", Workload: "etcd-register", End: &runfolder.End{At: time.Unix(1, 0)}})
	var lines []string
	for _, op := range ops {
		b, _ := json.Marshal(op)
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), info, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := runner.Analyze(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no results")
	}
	return rep
}

func registerValue(v string) json.RawMessage {
	return history.MustValue(registerop.Value{Key: "x", Value: json.RawMessage(v)})
}

// Times that go backwards within a client are noted on every result of a
// run's analysis, with how many and the first one's line; when no other
// client's entry falls between, no order depends on them.
func TestAnalyzeNotesTimeReversals(t *testing.T) {
	rv := registerValue
	rep := analyzeRegisterRun(t, []history.Op{
		{Time: 10, Type: history.Invoke, Process: 0, F: registerop.FWrite, Value: rv("1")},
		{Time: 20, Type: history.Ok, Process: 0, F: registerop.FWrite, Value: rv("1")},
		{Time: 15, Type: history.Invoke, Process: history.Nemesis, F: "pause"}, // the nemesis's faults run side by side
		{Time: 5, Type: history.Invoke, Process: 1, F: registerop.FRead, Value: rv("")},
		{Time: 6, Type: history.Ok, Process: 1, F: registerop.FRead, Value: rv("null")},
		{Time: 12, Type: history.Invoke, Process: 0, F: registerop.FRead, Value: rv("")}, // line 6: before line 2's 20ns
		{Time: 11, Type: history.Ok, Process: 0, F: registerop.FRead, Value: rv("1")},
	})
	if rep.Verdict != analysis.Valid {
		t.Errorf("verdict %s, expected valid (a completion stamped before its invocation counts as instantaneous)", rep.Verdict)
	}
	want := "2 entries are stamped earlier than the entry before them of the same process (first: line 6, p0 at 0.000000s, after line 2 at 0.000000s)"
	for _, r := range rep.Results {
		if !strings.Contains(strings.Join(r.Notes, "\n"), want) {
			t.Errorf("%s: notes %q, expected one saying %q", r.Checker, r.Notes, want)
		}
	}
}

// A reversal that another client's entry crosses changes a real-time
// order whichever stamp is wrong: a valid verdict becomes unknown, and a
// finding involving the process says so (issue 35, item 13; both failed
// before).
func TestAnalyzeCrossedTimeReversals(t *testing.T) {
	rv := registerValue
	// p1's read at 14-16 of the value p0 wrote at 10-20; p0's next entry
	// is stamped 12, across p1's.
	valid := analyzeRegisterRun(t, []history.Op{
		{Time: 10, Type: history.Invoke, Process: 0, F: registerop.FWrite, Value: rv("1")},
		{Time: 20, Type: history.Ok, Process: 0, F: registerop.FWrite, Value: rv("1")},
		{Time: 14, Type: history.Invoke, Process: 1, F: registerop.FRead, Value: rv("")},
		{Time: 16, Type: history.Ok, Process: 1, F: registerop.FRead, Value: rv("1")},
		{Time: 12, Type: history.Invoke, Process: 0, F: registerop.FRead, Value: rv("")},
		{Time: 13, Type: history.Ok, Process: 0, F: registerop.FRead, Value: rv("1")},
	})
	if valid.Verdict != analysis.Unknown {
		t.Errorf("verdict %s, expected unknown: p0's times cross p1's", valid.Verdict)
	}
	// The same, p1 reading the value before it: a stale read by the
	// stamps, which may be wrong.
	invalid := analyzeRegisterRun(t, []history.Op{
		{Time: 10, Type: history.Invoke, Process: 0, F: registerop.FWrite, Value: rv("1")},
		{Time: 11, Type: history.Ok, Process: 0, F: registerop.FWrite, Value: rv("1")},
		{Time: 14, Type: history.Invoke, Process: 1, F: registerop.FRead, Value: rv("")},
		{Time: 16, Type: history.Ok, Process: 1, F: registerop.FRead, Value: rv("null")},
		{Time: 20, Type: history.Invoke, Process: 0, F: registerop.FRead, Value: rv("")},
		{Time: 15, Type: history.Ok, Process: 0, F: registerop.FRead, Value: rv("1")},
	})
	if invalid.Verdict != analysis.Invalid {
		t.Fatalf("verdict %s, expected invalid", invalid.Verdict)
	}
	annotated := 0
	for _, r := range invalid.Results {
		for _, f := range r.Findings {
			annotated++
			if !strings.Contains(f.Explanation, "The times of p0 go backwards in this history") {
				t.Errorf("%s: finding %q does not say its times are doubtful", r.Checker, f.Explanation)
			}
		}
	}
	if annotated == 0 {
		t.Error("no finding")
	}
}
