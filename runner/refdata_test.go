package runner_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/foreign/jepsen"
	"github.com/chaos-testing/chaos/foreign/porcupinelog"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/runner"
)

// These tests judge history files from elsewhere the way `chaos check FILE`
// does, through runner.CheckFile.

// refDir holds porcupine's reference histories and MANIFEST.md, which
// gives each file's verdict (linearizable or not) as porcupine's tests
// assert it, and each file's sha256. They are part of the repository: a
// test that cannot find them fails.
const refDir = "../testdata/porcupine"

// maxListed is how many findings a result lists at most.
const maxListed = 20

// refCase is one row of MANIFEST.md's tables.
type refCase struct {
	file string // relative to refDir, e.g. "jepsen/etcd_000.log"
	// want is "true" (linearizable), "false", or "" when the file has no verdict.
	want string
}

// refCases reads the tables of MANIFEST.md.
func refCases(t testing.TB, prefix string) []refCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(refDir, "MANIFEST.md"))
	if err != nil {
		t.Fatalf("the reference data must be in the repository: %v", err)
	}
	var cs []refCase
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 4 || !strings.HasPrefix(strings.TrimSpace(cols[1]), prefix) {
			continue
		}
		c := refCase{file: strings.TrimSpace(cols[1])}
		switch w := strings.TrimSpace(cols[2]); w {
		case "true", "false":
			c.want = w
		default:
			if !strings.Contains(w, "no test") {
				t.Fatalf("MANIFEST.md: %s: verdict %q, expected true, false or no test", c.file, w)
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// TestRefdataChecksums checks every reference file against the sha256
// that MANIFEST.md gives, so that the verdicts are those of porcupine's
// own files.
func TestRefdataChecksums(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(refDir, "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sums, ok := strings.Cut(string(b), "## Checksums (sha256)")
	if !ok {
		t.Fatal("MANIFEST.md has no checksums section")
	}
	n := 0
	for _, line := range strings.Split(sums, "\n") {
		sum, file, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok || len(sum) != 64 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(refDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
			t.Errorf("%s: sha256 %s, MANIFEST.md says %s", file, got, sum)
		}
		n++
	}
	if n != 109 {
		t.Errorf("MANIFEST.md has %d checksums, expected 109 (103 etcd logs, 6 kv logs)", n)
	}
}

func wantVerdict(want string) analysis.Verdict {
	if want == "true" {
		return analysis.Valid
	}
	return analysis.Invalid
}

// checkFile runs what chaos check FILE runs, and reads the file again to
// compare the findings' entries with it.
func checkFile(t *testing.T, path, model string, out string) (analysis.Result, []history.Op) {
	t.Helper()
	rep, err := runner.CheckFile(context.Background(), path, runner.FileCheck{Model: model, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1", len(rep.Results))
	}
	var ops []history.Op
	if strings.HasSuffix(path, ".edn") {
		ops, err = jepsen.ReadFile(path, model)
	} else {
		ops, _, err = porcupinelog.ReadFile(path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep.Results[0], ops
}

// TestRefdataEtcd checks every Jepsen etcd log with the cas-register model
// against the verdict MANIFEST.md gives. etcd_095 is empty (etcd did not start
// in that run) and has no verdict: we assert that it reads as zero entries
// without error and that the checker says Unknown ("nothing to check")
// rather than crashing or calling an empty history valid.
func TestRefdataEtcd(t *testing.T) {
	cases := refCases(t, "jepsen/")
	withVerdict := 0
	for _, c := range cases {
		if c.want != "" {
			withVerdict++
		}
	}
	if len(cases) != 103 || withVerdict != 102 {
		t.Fatalf("MANIFEST.md lists %d etcd logs, %d with a verdict; expected 103 and 102", len(cases), withVerdict)
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(refDir, c.file)
			if c.want == "" {
				ops, err := porcupinelog.ReadEtcd(path)
				if err != nil || len(ops) != 0 {
					t.Fatalf("empty log: %d entries, %v; expected none and no error", len(ops), err)
				}
				if _, err := runner.CheckFile(context.Background(), path, runner.FileCheck{Out: t.TempDir()}); err == nil {
					t.Fatal("checking an empty log: no error; expected one saying there is nothing to check")
				}
				return
			}
			out := t.TempDir()
			r, ops := checkFile(t, path, "", out)
			if r.Verdict != wantVerdict(c.want) {
				t.Fatalf("verdict %s, expected %s (linearizable: %s); notes %q", r.Verdict, wantVerdict(c.want), c.want, r.Notes)
			}
			if r.Verdict == analysis.Invalid {
				assertProof(t, r, ops, "nonlinearizable")
				if vis, _ := filepath.Glob(filepath.Join(out, "linearizability-*.html")); len(vis) == 0 {
					t.Errorf("no visualization of the illegal register in %s; notes %q", out, r.Notes)
				}
			}
		})
	}
}

// TestRefdataKV checks porcupine's kv logs with the kv model. The 50-client
// ones are the slowest (a few seconds each without -race); each subtest
// logs its time.
func TestRefdataKV(t *testing.T) {
	cases := refCases(t, "kv/")
	if len(cases) != 6 {
		t.Fatalf("MANIFEST.md lists %d kv logs, expected 6", len(cases))
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			start := time.Now()
			r, ops := checkFile(t, filepath.Join(refDir, c.file), "", t.TempDir())
			t.Logf("%d entries checked in %s: %s", len(ops), time.Since(start).Round(time.Millisecond), r.Verdict)
			if r.Verdict != wantVerdict(c.want) {
				t.Fatalf("verdict %s, expected %s; notes %q", r.Verdict, wantVerdict(c.want), r.Notes)
			}
			if r.Verdict == analysis.Invalid {
				assertProof(t, r, ops, "nonlinearizable")
			}
		})
	}
}

// ednKinds is the kind of finding each invalid EDN example must give:
// Elle's anomaly for the transactional ones, nonlinearizable for the rest.
var ednKinds = map[string]string{"list-append-invalid": "G2-item", "rw-register-invalid": "G-single-item"}

// TestEDNExamples checks the Jepsen EDN examples, one or more per Knossos
// model, valid and invalid: the file name gives model and verdict.
func TestEDNExamples(t *testing.T) {
	files, _ := filepath.Glob("../foreign/jepsen/testdata/*valid.edn")
	models := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".edn")
		want, model := analysis.Valid, ""
		if strings.HasSuffix(name, "-invalid") {
			want = analysis.Invalid
		}
		for _, m := range jepsen.Models {
			if strings.HasPrefix(name, m+"-") && len(m) > len(model) {
				model = m
			}
		}
		if model == "" {
			t.Fatalf("%s: name starts with no model of %v", f, jepsen.Models)
		}
		models[model+" "+string(want)] = true
		if _, ok := ednKinds[name]; !ok {
			ednKinds[name] = "nonlinearizable"
		}
		t.Run(name, func(t *testing.T) {
			r, ops := checkFile(t, f, model, t.TempDir())
			if r.Verdict != want {
				t.Fatalf("verdict %s, expected %s; notes %q", r.Verdict, want, r.Notes)
			}
			if want == analysis.Invalid {
				assertProof(t, r, ops, ednKinds[name])
			}
		})
	}
	for _, m := range jepsen.Models {
		for _, v := range []analysis.Verdict{analysis.Valid, analysis.Invalid} {
			if !models[m+" "+string(v)] {
				t.Errorf("no %s example for the %s model", v, m)
			}
		}
	}
}

// assertProof checks that an Invalid result carries findings whose entries
// are the history's own.
func assertProof(t *testing.T, r analysis.Result, ops []history.Op, kind string) {
	t.Helper()
	if len(r.Findings) == 0 || r.FindingsTotal < len(r.Findings) {
		t.Fatalf("invalid without findings: %+v", r)
	}
	for _, f := range r.Findings {
		if f.Kind != kind || f.Explanation == "" || len(f.Ops) == 0 || len(f.Ops) > maxListed {
			t.Fatalf("finding %+v: expected kind %s, an explanation and 1-%d ops", f, kind, maxListed)
		}
		for _, op := range f.Ops {
			if op.Index < 0 || op.Index >= len(ops) || ops[op.Index].Time != op.Time {
				t.Fatalf("finding lists %v, which is not entry #%d of the history", op, op.Index)
			}
		}
	}
}
