package runner_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/runfolder"
	"github.com/chaos-testing/chaos/runner"
)

func TestWriteIndex(t *testing.T) {
	results := t.TempDir()
	mk := func(plan, stamp, verdict string, started time.Time) {
		dir := filepath.Join(results, plan, stamp)
		os.MkdirAll(dir, 0o755)
		info := runfolder.Info{Plan: plan, Seed: 3, Started: started}
		if verdict != "" {
			info.End = &runfolder.End{At: started.Add(time.Minute)}
		}
		b, _ := json.Marshal(info)
		os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
		if verdict != "" {
			os.WriteFile(filepath.Join(dir, "analysis.json"), []byte(`{"verdict":"`+verdict+`"}`), 0o644)
		}
	}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	mk("redlock-pause", "a", "invalid", t0)
	mk("etcd-register-mixed", "b", "valid", t0.Add(time.Hour))
	mk("zookeeper-lock-pause", "c", "", t0.Add(2*time.Hour)) // killed before its end and its analysis
	os.MkdirAll(filepath.Join(results, "latest"), 0o755)     // not a run
	if err := runner.WriteIndex(results); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(results, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	zk, etcd, redlock := strings.Index(page, "zookeeper-lock-pause"), strings.Index(page, "etcd-register-mixed"), strings.Index(page, "redlock-pause")
	if zk < 0 || etcd < zk || redlock < etcd {
		t.Errorf("runs missing or not newest first (%d, %d, %d)", zk, etcd, redlock)
	}
	for _, want := range []string{`href="redlock-pause/a/report.html"`, `class="verdict invalid"`, `class="verdict valid"`, "incomplete, not analyzed", "incomplete: no end of the run recorded", "3 runs"} {
		if !strings.Contains(page, want) {
			t.Errorf("index lacks %q", want)
		}
	}
}
