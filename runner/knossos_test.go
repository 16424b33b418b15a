package runner_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/foreign/jepsen"
	"github.com/chaos-testing/chaos/runner"
)

// knossosDir holds Knossos's example histories and MANIFEST.md, which
// gives each file's model, initial value and Knossos's verdict.
const knossosDir = "../testdata/knossos"

// TestRefdataKnossos judges each of Knossos's example histories as chaos
// check FILE --model M --initial V does, and wants Knossos's verdict: its
// multi-register example, with {:x 0, :y 0}, among them (the initial
// map's keyword keys must name the history's keys).
func TestRefdataKnossos(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(knossosDir, "MANIFEST.md"))
	if err != nil {
		t.Fatalf("the reference data must be in the repository: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, " | ")
		if len(cols) != 5 || !strings.HasPrefix(cols[0], "| data/") {
			continue
		}
		file, model, initial, want, sum := strings.TrimPrefix(cols[0], "| "), cols[1], strings.Trim(cols[2], "`"), cols[3], strings.TrimSuffix(cols[4], " |")
		n++
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(knossosDir, file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
				t.Fatalf("sha256 %s, MANIFEST.md says %s", got, sum)
			}
			fc := runner.FileCheck{Model: model, Out: t.TempDir()}
			if initial != "-" {
				if fc.Initial, err = jepsen.InitialJSON(initial, model); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := runner.CheckFile(context.Background(), path, fc)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != analysis.Verdict(want) {
				t.Errorf("%s, Knossos says %s", rep.Verdict, want)
			}
		})
	}
	if n < 100 {
		t.Errorf("MANIFEST.md lists %d histories; expected Knossos's 122", n)
	}
}

// The initial value of a multi-register gives each key its value, by the
// name the history gives the key: the keyword :x is the key "x".
func TestInitialJSONMultiRegister(t *testing.T) {
	for _, tc := range []struct{ text, model, want string }{
		{"{:x 0, :y 0}", jepsen.MultiRegister, `{"x":0,"y":0}`},
		{`{"x" 1}`, jepsen.MultiRegister, `{"x":1}`},
		{"0", jepsen.MultiRegister, `0`},
		{"{:x 0}", jepsen.CasRegister, `{"~:x":0}`},
	} {
		got, err := jepsen.InitialJSON(tc.text, tc.model)
		if err != nil || string(got) != tc.want {
			t.Errorf("InitialJSON(%s, %s) = %s, %v; want %s", tc.text, tc.model, got, err, tc.want)
		}
	}
}
