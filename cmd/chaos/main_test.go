package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/foreign/jepsen"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
)

// main maps dispatch's result to the process's exit status: a bad plan or
// a bad command line exits 254 whatever code came with it. main calls
// os.Exit, so these tests check what the mapping reads: dispatch's code and
// the type of its error.

// capture runs f with os.Stdout going to a file, and returns what it printed.
func capture(t *testing.T, f func()) string {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	saved := os.Stdout
	os.Stdout = out
	defer func() { os.Stdout = saved }()
	f()
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

func isPlan(err error) bool {
	var pe *plans.Error
	return errors.As(err, &pe)
}

func TestDispatchUsage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		contains string
	}{
		{"no command", nil, "usage:"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"run without a plan", []string{"run"}, "usage: chaos run PLAN (got 0 arguments)"},
		{"run with two plans", []string{"run", "a.yaml", "b.yaml"}, "got 2 arguments"},
		{"run with an unknown flag", []string{"run", "--colour", "red", "a.yaml"}, "run: flag provided but not defined"},
		{"run with a bad seed", []string{"run", "--seed", "many", "a.yaml"}, "invalid value"},
		{"check without a folder", []string{"check"}, "usage: chaos check DIR"},
		{"images without build", []string{"images"}, "usage: chaos images build"},
		{"images with something else", []string{"images", "pull"}, "usage: chaos images build"},
		{"clean with arguments", []string{"clean", "all"}, `clean: unexpected argument "all"`},
		{"serve on the network", []string{"serve", "--addr", "0.0.0.0:8080"}, "expected a loopback address"},
		{"serve on a host name", []string{"serve", "--addr", "example.org:80"}, "expected a loopback address"},
		{"report without a folder", []string{"report"}, "usage: chaos report DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, err := dispatch(tc.args)
			if code != exitUsage {
				t.Errorf("code %d, want %d", code, exitUsage)
			}
			if !isUsage(err) {
				t.Errorf("error %T %v, want a usageError (main exits %d)", err, err, exitUsage)
			}
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %v, want one containing %q", err, tc.contains)
			}
		})
	}
}

// The commands containers run refuse to start without their configuration.
func TestDispatchAgentsWithoutConfig(t *testing.T) {
	for _, cmd := range []string{"client", "resource"} {
		t.Run(cmd, func(t *testing.T) {
			t.Setenv("CHAOS_CLIENT", "")
			t.Setenv("CHAOS_RESOURCE", "")
			code, err := dispatch([]string{cmd})
			if code != exitUsage || err == nil || !strings.Contains(err.Error(), "is not set") {
				t.Errorf("dispatch(%s) = %d, %v; want %d and an error saying its configuration is not set", cmd, code, err, exitUsage)
			}
		})
	}
}

// A bad plan is refused before Docker is touched, with an error main maps
// to 254 and that points at the offending line.
func TestRunRefusesBadPlan(t *testing.T) {
	shipped := filepath.Join("..", "..", "plans", "redlock-pause.yaml") // first fault ends at 3s+5s
	for _, tc := range []struct {
		name     string
		args     []string
		contains string
	}{
		{"unknown field", []string{"testdata/plans/unknown-field.yaml"},
			`testdata/plans/unknown-field.yaml:9: unknown field "hold_maximum" in workload (redlock); allowed: clients, hold_max, hold_min, kind, lease, resource`},
		{"missing file", []string{"testdata/plans/no-such-plan.yaml"}, "no-such-plan.yaml"},
		{"time limit the faults do not fit in", []string{"--time-limit", "5s", shipped},
			"nemesis[0].first_after"},
		{"unknown target", []string{"testdata/plans/unknown-target.yaml"},
			`testdata/plans/unknown-target.yaml:6: target.kind: unknown target "cassandra"; expected one of `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := t.TempDir()
			code, err := dispatch(append([]string{"run", "--results", results}, tc.args...))
			if !isPlan(err) {
				t.Fatalf("dispatch = %d, %T %v; want a *plans.Error (main exits %d)", code, err, err, exitUsage)
			}
			if code == exitValid {
				t.Errorf("code %d with an error", code)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q, want it to contain %q", err, tc.contains)
			}
			if entries, _ := os.ReadDir(results); len(entries) != 0 {
				t.Errorf("a refused plan left %d entries in the results folder", len(entries))
			}
		})
	}
}

// copyRun copies a run folder of testdata to a temporary one, since check
// writes analysis.json into the folder it checks.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "runs", name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		run      string
		code     int
		contains []string
	}{
		{"stale", exitAnomaly, []string{"stale-write", "verdict: invalid", "resource.jsonl lines"}},
		{"clean", exitValid, []string{"verdict: valid", "cluster: 5 redis nodes"}},
		// The history's last line was cut in half: the entries before it
		// still give a verdict, and the report says what was skipped.
		{"truncated", exitAnomaly, []string{"note: ", "history.jsonl:18: last line is cut off", "stale-write", "verdict: invalid"}},
	} {
		t.Run(tc.run, func(t *testing.T) {
			dir := copyRun(t, tc.run)
			out := checkDir(t, dir, tc.code)
			for _, s := range tc.contains {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "analysis.json")); err != nil {
				t.Errorf("check wrote no analysis.json: %v", err)
			}
		})
	}
}

// checkDir runs chaos check on the run folder dir, which must exit want,
// and returns what it printed.
func checkDir(t *testing.T, dir string, want int) string {
	t.Helper()
	var code int
	var err error
	out := capture(t, func() { code, err = dispatch([]string{"check", dir}) })
	if err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	if code != want {
		t.Errorf("check exited %d, want %d; output:\n%s", code, want, out)
	}
	return out
}

func TestCheckNotARun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dir      func(t *testing.T) string
		contains string
	}{
		{"empty folder", func(t *testing.T) string { return t.TempDir() }, "is not a run folder"},
		{"missing folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone") }, "is not a run folder"},
		{"unknown workload", func(t *testing.T) string {
			dir := copyRun(t, "clean")
			writeFile(t, filepath.Join(dir, "run.json"), `{"workload": "juggling", "resource": "unfenced"}`)
			return dir
		}, `unknown workload "juggling"`},
		{"run.json not JSON", func(t *testing.T) string {
			dir := copyRun(t, "clean")
			writeFile(t, filepath.Join(dir, "run.json"), "workload: redlock\n")
			return dir
		}, "run.json"},
		{"broken history line", func(t *testing.T) string {
			dir := copyRun(t, "clean")
			writeFile(t, filepath.Join(dir, "history.jsonl"), "{oops\n"+`{"time":1,"type":"invoke","process":0,"f":"acquire"}`+"\n")
			return dir
		}, "history.jsonl:1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var err error
			out := capture(t, func() { code, err = dispatch([]string{"check", tc.dir(t)}) })
			if err == nil {
				t.Fatalf("check = %d with no error; output:\n%s", code, out)
			}
			if code == exitValid || code == exitAnomaly {
				t.Errorf("check = %d, a verdict's code, for a folder it could not judge", code)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q, want it to contain %q", err, tc.contains)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The plug-ins main imports are registered, so plans can name them.
func TestPluginsRegistered(t *testing.T) {
	p, err := plans.Load(filepath.Join("..", "..", "plans", "redlock-pause.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.Bind(p); err != nil {
		t.Errorf("the shipped plan does not bind to main's plug-ins: %v", err)
	}
}

// chaos export --format edn writes a history that Jepsen's tools, and our
// own EDN reader, read back: the lock workload's entries survive the trip.
func TestExportEDN(t *testing.T) {
	var code int
	var err error
	out := capture(t, func() { code, err = dispatch([]string{"export", "--format", "edn", "testdata/runs/stale"}) })
	if err != nil || code != exitValid {
		t.Fatalf("export: code %d, err %v", code, err)
	}
	ops, rerr := jepsen.Read(strings.NewReader(out), "export", jepsen.Mutex)
	if rerr != nil {
		t.Fatalf("reading the export back: %v\n%s", rerr, out)
	}
	want, _, _ := history.Read("testdata/runs/stale/history.jsonl")
	if len(ops) != len(want) {
		t.Fatalf("export has %d entries, the history %d", len(ops), len(want))
	}
	if code, err := dispatch([]string{"export", "--format", "csv", "testdata/runs/stale"}); err == nil || code != exitUsage {
		t.Errorf("unknown format: code %d, err %v; want a usage error", code, err)
	}
}
