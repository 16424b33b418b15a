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
	"github.com/chaos-testing/chaos/runfolder"
)

// TestAnalyzeStreamSameAsWhole: a run's history read as a stream and
// judged in batches (as a history over StreamAbove is) gets the analysis
// it gets in memory, for a linearizable history and one with stale reads.
func TestAnalyzeStreamSameAsWhole(t *testing.T) {
	defer func(v int64) { StreamAbove = v }(StreamAbove)
	for _, stale := range []int{0, 40} {
		dir := t.TempDir()
		f := runfolder.Folder(dir)
		if err := f.WriteInfo(runfolder.Info{Plan: "p", Workload: "etcd-register", End: &runfolder.End{At: time.Unix(1, 0)}}); err != nil {
			t.Fatal(err)
		}
		lines, err := history.OpenLines(f.Path(runfolder.HistoryFile))
		if err != nil {
			t.Fatal(err)
		}
		simhistory.Register(20_000, 20, 10, stale, func(op history.Op) {
			if err := lines.Write(op); err != nil {
				t.Fatal(err)
			}
		})
		lines.Close()
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
		if whole.Verdict != map[bool]analysis.Verdict{true: analysis.Valid, false: analysis.Invalid}[stale == 0] {
			t.Errorf("stale every %d: verdict %s", stale, whole.Verdict)
		}
		a, _ := json.Marshal(whole)
		b, _ := json.Marshal(streamed)
		if !reflect.DeepEqual(whole, streamed) && string(a) != string(b) {
			t.Errorf("stale every %d: streamed\n%s\nwhole\n%s", stale, b, a)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Error(err)
		}
	}
}
