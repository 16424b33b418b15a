package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// A finding after a crash point fired names the last one before it; one
// before any, or after only crash points that never fired, is left alone.
func TestNoteCrashes(t *testing.T) {
	at := func(s float64) []history.Op { return []history.Op{{Time: time.Duration(s * float64(time.Second))}} }
	rep := analysis.Report{Results: []analysis.Result{{Findings: []analysis.Finding{
		{Kind: "early", Explanation: "before.", Ops: at(1)},
		{Kind: "late", Explanation: "after.", Ops: at(5)},
	}}}}
	noteCrashes(&rep, []history.FaultWindow{
		{Kind: "crash-point", Start: 2 * time.Second, Victims: []string{"n1 (killed at the fdatasync of member/wal/0.wal, 80µs after it came)"}},
		{Kind: "crash-point", Start: 3 * time.Second, Victims: []string{"n2 (armed for the 1st rename, never fired)"}},
		{Kind: "kill", Start: 4 * time.Second, Victims: []string{"n3"}},
	})
	fs := rep.Results[0].Findings
	if fs[0].Explanation != "before." {
		t.Errorf("a finding before the crash: %q", fs[0].Explanation)
	}
	if want := "after. (After the crash point armed at 2.000s: n1 (killed at the fdatasync of member/wal/0.wal"; !strings.HasPrefix(fs[1].Explanation, want) {
		t.Errorf("a finding after the crash: %q, want it to start %q", fs[1].Explanation, want)
	}
}
