package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// A finding after a crash point fired names the last one before it; one
// before any fired (armed or not), or after only crash points that never
// fired, is left alone.
func TestNoteCrashes(t *testing.T) {
	at := func(s float64) []history.Op { return []history.Op{{Time: time.Duration(s * float64(time.Second))}} }
	rep := analysis.Report{Results: []analysis.Result{{Findings: []analysis.Finding{
		{Kind: "early", Explanation: "before.", Ops: at(1)},
		{Kind: "armed", Explanation: "armed, not fired.", Ops: at(2.2)},
		{Kind: "late", Explanation: "after.", Ops: at(5)},
	}}}}
	noteFaults(&rep, []history.FaultWindow{
		{Kind: "crash-point", Start: 2 * time.Second, Hit: 2500 * time.Millisecond, Victims: []string{"n1 (killed at the fdatasync of member/wal/0.wal, 80µs after it came)"}},
		{Kind: "crash-point", Start: 3 * time.Second, Victims: []string{"n2 (armed for the 1st rename, never fired)"}},
		{Kind: "crash-point", Start: 3 * time.Second, Hit: 3 * time.Second, Victims: []string{"n3 (not armed: no disk)"}},
		{Kind: "kill", Start: 4 * time.Second, Victims: []string{"n3"}},
	})
	fs := rep.Results[0].Findings
	if fs[0].Explanation != "before." {
		t.Errorf("a finding before the crash: %q", fs[0].Explanation)
	}
	if fs[1].Explanation != "armed, not fired." {
		t.Errorf("a finding after a crash point was armed, before it fired: %q", fs[1].Explanation)
	}
	if want := "after. (After the crash point armed at 2.000s, fired by 2.500s: n1 (killed at the fdatasync of member/wal/0.wal"; !strings.HasPrefix(fs[2].Explanation, want) {
		t.Errorf("a finding after the crash: %q, want it to start %q", fs[2].Explanation, want)
	}
}

// A finding whose operations ran while a clock fault was in force names
// it; one after it was healed does not.
func TestNoteClocks(t *testing.T) {
	at := func(s ...float64) (ops []history.Op) {
		for _, x := range s {
			ops = append(ops, history.Op{Time: time.Duration(x * float64(time.Second))})
		}
		return ops
	}
	rep := analysis.Report{Results: []analysis.Result{{Findings: []analysis.Finding{
		{Kind: "lease-lost", Explanation: "lost.", Ops: at(14.6, 21.2)},
		{Kind: "later", Explanation: "later.", Ops: at(24, 25)},
	}}}}
	noteFaults(&rep, []history.FaultWindow{
		{Kind: "clock", Start: 18 * time.Second, End: 23 * time.Second, Victims: []string{"n4 +6s (all)"}},
	})
	fs := rep.Results[0].Findings
	if want := "lost. (While a clock fault was in force: n4 +6s (all) from 18.000s.)"; fs[0].Explanation != want {
		t.Errorf("a finding during the clock fault: %q, want %q", fs[0].Explanation, want)
	}
	if fs[1].Explanation != "later." {
		t.Errorf("a finding after the clock fault: %q", fs[1].Explanation)
	}
}
