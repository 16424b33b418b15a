package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/simhistory"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/runfolder"
)

// TestAnalyzeStreamSameAsWhole: a run's history read as a stream (as a
// history over StreamAbove is) gets the analysis it gets in memory: a
// register history judged a few keys at a time, linearizable and with
// stale reads, and a lock history with its resource log, of whose entries
// the lock checker keeps digests.
func TestAnalyzeStreamSameAsWhole(t *testing.T) {
	defer func(v int64) { StreamAbove = v }(StreamAbove)
	for _, c := range []struct {
		name string
		info runfolder.Info
		want analysis.Verdict
		// write gives the run's entries to history and, for a lock, its
		// resource log's to resource.
		write func(history, resource func(any))
	}{
		{"registers", runfolder.Info{Workload: "etcd-register"}, analysis.Valid, func(h, _ func(any)) {
			simhistory.Register(20_000, 20, 10, 0, func(op history.Op) { h(op) })
		}},
		{"stale registers", runfolder.Info{Workload: "etcd-register"}, analysis.Invalid, func(h, _ func(any)) {
			simhistory.Register(20_000, 20, 10, 40, func(op history.Op) { h(op) })
		}},
		{"lock", runfolder.Info{Workload: "etcd-lock", Resource: "unfenced"}, analysis.Invalid, func(h, r func(any)) {
			simhistory.Lock(100_000, func(op history.Op) { h(op) }, func(e lockop.ResourceEntry) { r(e) })
		}},
	} {
		dir := t.TempDir()
		f := runfolder.Folder(dir)
		c.info.Plan, c.info.End = "p", &runfolder.End{At: time.Unix(1, 0)}
		if err := f.WriteInfo(c.info); err != nil {
			t.Fatal(err)
		}
		var files []*history.Lines
		writer := func(name string) func(any) {
			l, err := history.OpenLines(f.Path(name))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, l)
			return func(v any) {
				if err := l.Write(v); err != nil {
					t.Fatal(err)
				}
			}
		}
		c.write(writer(runfolder.HistoryFile), writer(runfolder.ResourceFile))
		for _, l := range files {
			l.Close()
		}
		analyze := func(above int64) analysis.Report {
			StreamAbove = above
			rep, err := Analyze(context.Background(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rep.Results {
				delete(rep.Results[i].Stats, "check_s")
			}
			rep.Took = 0
			return rep
		}
		whole, streamed := analyze(1<<62), analyze(0)
		if whole.Verdict != c.want {
			t.Errorf("%s: verdict %s, want %s", c.name, whole.Verdict, c.want)
		}
		a, _ := json.Marshal(whole)
		b, _ := json.Marshal(streamed)
		if !reflect.DeepEqual(whole, streamed) && string(a) != string(b) {
			t.Errorf("%s: streamed\n%s\nwhole\n%s", c.name, b, a)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Error(err)
		}
	}
}
