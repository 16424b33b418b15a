package runfolder

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
)

func TestInfoAndAnalysis(t *testing.T) {
	results := t.TempDir()
	f := Folder(filepath.Join(results, "p", "20261201T000000.000"))
	if _, err := f.ReadInfo(); err == nil || !strings.Contains(err.Error(), "is not a run folder") {
		t.Errorf("ReadInfo of a missing folder: %v", err)
	}
	if err := os.MkdirAll(string(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteInfo(Info{Plan: "p", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := f.UpdateInfo(func(i *Info) { i.End = &End{At: time.Unix(5, 0)} }); err != nil {
		t.Fatal(err)
	}
	info, err := f.ReadInfo()
	if err != nil || info.Plan != "p" || info.Seed != 3 || info.End == nil || info.Incomplete() != "" {
		t.Errorf("run.json read back as %+v (%v)", info, err)
	}
	if _, err := f.ReadAnalysis(); !errors.Is(err, ErrNotAnalyzed) {
		t.Errorf("ReadAnalysis before the analysis: %v, want ErrNotAnalyzed", err)
	}
	if err := f.WriteAnalysis(Analysis{Report: analysis.Report{Verdict: analysis.Invalid}}); err != nil {
		t.Fatal(err)
	}
	if a, err := f.ReadAnalysis(); err != nil || a.Verdict != analysis.Invalid {
		t.Errorf("analysis.json read back as %+v (%v)", a, err)
	}
	if err := os.WriteFile(f.Path(InfoFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadInfo(); err == nil || !strings.Contains(err.Error(), f.Path(InfoFile)) {
		t.Errorf("ReadInfo of a broken run.json: %v, want an error naming it", err)
	}
	os.MkdirAll(filepath.Join(results, "p", "not-a-run"), 0o755)
	if got := All(results); !slices.Equal(got, []Folder{f}) {
		t.Errorf("All = %v, want [%s]", got, f)
	}
}

// A run without an end record, or with an error in it, is incomplete.
func TestIncomplete(t *testing.T) {
	if (Info{}).Incomplete() == "" {
		t.Error("a run without an end record is complete")
	}
	if got := (Info{End: &End{Error: "kill-start: boom"}}).Incomplete(); got != "kill-start: boom" {
		t.Errorf("Incomplete = %q", got)
	}
}
