package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A flag that does not apply to the form of the command it was given to is
// refused with a usage error saying why, never silently ignored.
func TestFlagsThatDoNotApply(t *testing.T) {
	plan := filepath.Join("..", "..", "plans", "redlock-pause.yaml")
	log := filepath.Join(t.TempDir(), "etcd.log") // a porcupine log: not read before its flags are checked
	writeFile(t, log, "")
	edn := filepath.Join(t.TempDir(), "h.edn")
	writeFile(t, edn, "")
	run := copyRun(t, "clean") // a copy: check writes into the folder it checks
	for _, tc := range []struct {
		name     string
		args     []string
		contains []string
	}{
		{"check DIR --initial", []string{"check", run, "--initial", "0"},
			[]string{"--initial", "run folder", "history file"}},
		{"check --model DIR", []string{"check", "--model", "mutex", run},
			[]string{"--model", "run folder", "history file"}},
		{"check DIR --out", []string{"check", run, "--out", t.TempDir()},
			[]string{"--out", "run folder"}},
		{"check DIR with all three", []string{"check", "--model", "mutex", "--initial", "0", "--out", "x", run},
			[]string{"--model, --initial, --out"}},
		{"check LOG --model", []string{"check", "--model", "mutex", log},
			[]string{"--model", ".edn"}},
		{"check EDN --model mutex --initial", []string{"check", "--model", "mutex", "--initial", "0", edn},
			[]string{"--initial", "mutex model", "starts free"}},
		{"compare DIR... --time-limit", []string{"compare", "--time-limit", "5s", "testdata/runs/clean", "testdata/runs/stale"},
			[]string{"--time-limit", "stored runs"}},
		{"compare DIR... with --time-limit after them", []string{"compare", "testdata/runs/clean", "testdata/runs/stale", "--time-limit", "5s"},
			[]string{"--time-limit", "stored runs"}},
		{"compare PLAN with a run folder too", []string{"compare", plan, "testdata/runs/clean"},
			[]string{"one comparison plan or run folders"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var err error
			out := capture(t, func() { code, err = dispatch(tc.args) })
			if code != exitUsage || !isUsage(err) {
				t.Fatalf("dispatch(%q) = %d, %T %v; want %d and a usage error\n%s", tc.args, code, err, err, exitUsage, out)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q, want it to contain %q", err, s)
				}
			}
		})
	}
}

// --initial of an EDN history is EDN: Knossos tells 0 from 0.0 and from
// :none, and so must the register's initial value.
func TestCheckInitialIsEDN(t *testing.T) {
	edn := filepath.Join(t.TempDir(), "h.edn")
	writeFile(t, edn, `[{:type :invoke, :process 0, :f :read, :value nil}
{:type :ok, :process 0, :f :read, :value 0.0}]`)
	for _, tc := range []struct {
		initial string
		want    int
	}{{"0.0", exitValid}, {"0", exitAnomaly}, {":none", exitAnomaly}} {
		var code int
		var err error
		out := capture(t, func() {
			code, err = dispatch([]string{"check", "--model", "register", "--initial", tc.initial, "--out", t.TempDir(), edn})
		})
		if err != nil || code != tc.want {
			t.Errorf("--initial %s: exit %d (%v), want %d\n%s", tc.initial, code, err, tc.want, out)
		}
	}
	if code, err := dispatch([]string{"check", "--initial", "{:a", edn}); code != exitUsage || err == nil || !strings.Contains(err.Error(), "not an EDN value") {
		t.Errorf("--initial {:a: exit %d (%v), want a usage error", code, err)
	}
}
