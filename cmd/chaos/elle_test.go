package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/runfolder"
)

// elleDir holds histories from Elle's own tests and MANIFEST.md, which
// gives each check Elle's tests make of them: its options, as chaos
// check's flags, and Elle's verdict and anomaly types.
const elleDir = "../../testdata/elle"

// TestRefdataElle judges each of Elle's test histories as chaos check FILE
// --model MODEL FLAGS does, and wants Elle's verdict and the anomaly types
// it names. Elle's empty-transaction-graph is no anomaly here but a note
// (or, with no transaction committed, "nothing to judge"); chaos's own
// garbage-read is listed beside Elle's verdict, and is left out of the
// comparison.
func TestRefdataElle(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(elleDir, "MANIFEST.md"))
	if err != nil {
		t.Fatalf("the reference data must be in the repository: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cols) != 7 || !strings.HasSuffix(cols[0], ".edn") {
			continue
		}
		file, model, flags, want, anomalies, sum := cols[0], cols[2], strings.Trim(cols[3], "`"), cols[4], cols[5], cols[6]
		n++
		t.Run(file+" "+flags, func(t *testing.T) {
			path := filepath.Join(elleDir, file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
				t.Fatalf("sha256 %s, MANIFEST.md says %s", got, sum)
			}
			out := t.TempDir()
			args := append(append([]string{"check", "--model", model, "--out", out}, strings.Fields(flags)...), path)
			var code int
			stdout := capture(t, func() { code, err = dispatch(args) })
			if err != nil {
				t.Fatalf("exit %d: %v", code, err)
			}
			a, err := runfolder.Folder(out).ReadAnalysis()
			if err != nil {
				t.Fatal(err)
			}
			r := a.Results[0]
			var got []string
			for kind := range r.Kinds {
				if kind != "garbage-read" {
					got = append(got, kind)
				}
			}
			slices.Sort(got)
			var wantKinds []string
			emptyGraph := false
			for _, k := range strings.Split(anomalies, ", ") {
				switch k {
				case "-":
				case "empty-transaction-graph":
					emptyGraph = true
				default:
					wantKinds = append(wantKinds, k)
				}
			}
			slices.Sort(wantKinds)
			notes := strings.Join(r.Notes, "\n")
			saysEmpty := strings.Contains(notes, "empty-transaction-graph") || strings.Contains(notes, "nothing to judge")
			if string(a.Verdict) != want || !slices.Equal(got, wantKinds) || saysEmpty != emptyGraph {
				t.Errorf("%s with %v (empty graph: %t); Elle says %s with %s\n%s", a.Verdict, got, saysEmpty, want, anomalies, stdout)
			}
		})
	}
	if n < 60 {
		t.Errorf("MANIFEST.md lists %d checks; expected at least 60", n)
	}
}
