package analysis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/history/porcupinelog"
)

// refDir holds porcupine's reference histories and MANIFEST.md, which
// gives each file's verdict (linearizable or not) as porcupine's tests
// assert it.
const refDir = "../../shared/refdata/porcupine"

// refCase is one row of MANIFEST.md's tables.
type refCase struct {
	file string // relative to refDir, e.g. "jepsen/etcd_000.log"
	// want is "true" (linearizable), "false", or "" when the file has no verdict.
	want string
}

// refCases reads the tables of MANIFEST.md; it skips the test when the
// reference data is not there.
func refCases(t testing.TB, prefix string) []refCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(refDir, "MANIFEST.md"))
	if os.IsNotExist(err) {
		t.Skipf("no reference data in %s", refDir)
	}
	if err != nil {
		t.Fatal(err)
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

func wantVerdict(want string) Verdict {
	if want == "true" {
		return Valid
	}
	return Invalid
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
	checker, _ := Checkers.Lookup("cas-register")
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			t.Parallel()
			ops, err := porcupinelog.ReadEtcd(filepath.Join(refDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			in := Input{History: ops}
			if c.file == "jepsen/etcd_070.log" { // porcupine's visualization test uses this one
				in.Dir = t.TempDir()
			}
			r := checker.Check(context.Background(), in)
			if c.want == "" {
				if len(ops) != 0 || r.Verdict != Unknown || len(r.Notes) == 0 {
					t.Fatalf("empty log: %d entries, verdict %s, notes %q; expected 0, unknown and a note", len(ops), r.Verdict, r.Notes)
				}
				return
			}
			if r.Verdict != wantVerdict(c.want) {
				t.Fatalf("verdict %s, expected %s (linearizable: %s); notes %q", r.Verdict, wantVerdict(c.want), c.want, r.Notes)
			}
			if r.Verdict == Invalid {
				assertProof(t, r, ops)
			}
			if in.Dir != "" {
				if _, err := os.Stat(filepath.Join(in.Dir, "linearizability-__811c9dc5.html")); err != nil {
					t.Errorf("visualization of the register \"\": %v; notes %q", err, r.Notes)
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
	checker, _ := Checkers.Lookup("kv")
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			ops, err := porcupinelog.ReadKV(filepath.Join(refDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r := checker.Check(context.Background(), Input{History: ops})
			t.Logf("%d entries checked in %s: %s", len(ops), time.Since(start).Round(time.Millisecond), r.Verdict)
			if r.Verdict != wantVerdict(c.want) {
				t.Fatalf("verdict %s, expected %s; notes %q", r.Verdict, wantVerdict(c.want), r.Notes)
			}
			if r.Verdict == Invalid {
				assertProof(t, r, ops)
			}
		})
	}
}

// assertProof checks that an Invalid result carries findings whose entries
// are the history's own.
func assertProof(t *testing.T, r Result, ops []history.Op) {
	t.Helper()
	if len(r.Findings) == 0 || r.FindingsTotal < len(r.Findings) {
		t.Fatalf("invalid without findings: %+v", r)
	}
	for _, f := range r.Findings {
		if f.Kind != "nonlinearizable" || f.Explanation == "" || len(f.Ops) == 0 || len(f.Ops) > maxFindings {
			t.Fatalf("finding %+v: expected kind nonlinearizable, an explanation and 1-%d ops", f, maxFindings)
		}
		for _, op := range f.Ops {
			if op.Index < 0 || op.Index >= len(ops) || ops[op.Index].Time != op.Time {
				t.Fatalf("finding lists %v, which is not entry #%d of the history", op, op.Index)
			}
		}
	}
}
