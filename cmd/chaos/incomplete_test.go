package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/runner"
)

// A run that did not finish cleanly is never shown as valid: not by
// chaos check's exit code and output, nor by any artifact a CI job or a
// reader might look at alone. Its run.json says so either by an end record
// with the harness's error, or by having no end record at all (the harness
// was killed before it could write one).
func TestCheckIncomplete(t *testing.T) {
	const harnessErr = "kill-start [n3]: SIGKILL to n3: container is not running"
	for _, tc := range []struct {
		name, run string
		end       any // run.json's end record; nil: none
		code      int
		why       string
	}{
		{"harness error", "clean", map[string]any{"at": "2026-11-30T11:17:05Z", "error": harnessErr}, exitUndecided, harnessErr},
		{"killed, valid so far", "clean", nil, exitUndecided, "no end of the run"},
		// An anomaly in the history it wrote is one all the same.
		{"killed, anomaly so far", "truncated", nil, exitAnomaly, "no end of the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := t.TempDir()
			dir := filepath.Join(results, "redlock-test", "20261130T111600.000")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "runs", tc.run))); err != nil {
				t.Fatal(err)
			}
			setEnd(t, dir, tc.end)
			out := checkDir(t, dir, tc.code)
			if !strings.Contains(out, "incomplete: "+tc.why) {
				t.Errorf("output does not say the run is incomplete (%q):\n%s", tc.why, out)
			}
			if err := runner.WriteIndex(results); err != nil {
				t.Fatal(err)
			}
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			index, rerr := os.ReadFile(filepath.Join(results, "index.html"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			var analysisFile struct{ Verdict, Incomplete string }
			if err := json.Unmarshal([]byte(read("analysis.json")), &analysisFile); err != nil {
				t.Fatal(err)
			}
			if analysisFile.Verdict == "valid" || !strings.Contains(analysisFile.Incomplete, tc.why) {
				t.Errorf("analysis.json: verdict %q, incomplete %q; want no valid verdict and the reason", analysisFile.Verdict, analysisFile.Incomplete)
			}
			report := read("report.html")
			h1 := report[strings.Index(report, "<h1>"):strings.Index(report, "</h1>")]
			if strings.Contains(h1, `class="verdict valid"`) || !strings.Contains(report, "incomplete: "+tc.why) {
				t.Errorf("report.html's headline %q: want it not valid, and the page to say incomplete: %s", h1, tc.why)
			}
			summary := read("summary.md")
			if first, _, _ := strings.Cut(summary, "\n"); strings.Contains(first, ": valid") || !strings.Contains(summary, "incomplete: "+tc.why) {
				t.Errorf("summary.md does not say the run is incomplete:\n%s", summary)
			}
			junit := read("junit.xml")
			if !strings.Contains(junit, `errors="1"`) || !strings.Contains(junit, `<error message="incomplete: `+tc.why) {
				t.Errorf("junit.xml has no error for the incomplete run:\n%s", junit)
			}
			if strings.Contains(string(index), `class="verdict valid"`) || !strings.Contains(string(index), "incomplete: "+tc.why) {
				t.Errorf("index.html shows the run as valid or without its reason:\n%s", index)
			}
		})
	}
}

// setEnd writes end (nil: none) as the end record of dir's run.json.
func setEnd(t *testing.T, dir string, end any) {
	t.Helper()
	path := filepath.Join(dir, "run.json")
	var info map[string]any
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &info)
	}
	if err != nil {
		t.Fatal(err)
	}
	delete(info, "end")
	if end != nil {
		info["end"] = end
	}
	b, _ = json.Marshal(info)
	writeFile(t, path, string(b))
}
