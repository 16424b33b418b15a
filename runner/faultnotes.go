package runner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// noteFaults adds to each finding the faults that may explain it, which a
// reader would otherwise look up in the timeline: the crash point it came
// after, and the clock faults in force while its operations ran.
func noteFaults(rep *analysis.Report, faults []history.FaultWindow) {
	crashes, clocks := firedCrashes(faults), clockFaults(faults)
	if len(crashes) == 0 && len(clocks) == 0 {
		return
	}
	byTime := func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) }
	for i := range rep.Results {
		for j := range rep.Results[i].Findings {
			f := &rep.Results[i].Findings[j]
			if len(f.Ops) == 0 {
				continue
			}
			first, last := slices.MinFunc(f.Ops, byTime).Time, slices.MaxFunc(f.Ops, byTime).Time
			f.Explanation += crashNote(crashes, last) + clockNote(clocks, first, last)
		}
	}
}

// crash is a crash point that fired on some of its victims.
type crash struct {
	armed, at time.Duration // when armed; when it had fired on every victim it would
	did       []string      // the victims it fired on, and how
}

// firedCrashes are the crash points that fired, in the order they did.
func firedCrashes(faults []history.FaultWindow) []crash {
	var crashes []crash
	for _, f := range faults {
		did := slices.DeleteFunc(slices.Clone(f.Victims), func(v string) bool {
			return strings.Contains(v, "never fired") || strings.Contains(v, "(not armed")
		})
		if f.Kind == "crash-point" && len(did) > 0 {
			crashes = append(crashes, crash{f.Start, f.Hit, did})
		}
	}
	slices.SortFunc(crashes, func(a, b crash) int { return cmp.Compare(a.at, b.at) })
	return crashes
}

// crashNote names the last crash point that fired before a finding's
// operations ended: a member that comes back behind what it acknowledged,
// or without data, shows it after the crash, and the crash names the
// operation its node was at.
func crashNote(crashes []crash, end time.Duration) string {
	k := slices.IndexFunc(crashes, func(c crash) bool { return c.at >= end })
	if k == -1 {
		k = len(crashes)
	}
	if k == 0 {
		return ""
	}
	c := crashes[k-1]
	return fmt.Sprintf(" (After the crash point armed at %.3fs, fired by %.3fs: %s.)", c.armed.Seconds(), c.at.Seconds(), strings.Join(c.did, "; "))
}

func clockFaults(faults []history.FaultWindow) []history.FaultWindow {
	return slices.DeleteFunc(slices.Clone(faults), func(f history.FaultWindow) bool { return f.Kind != "clock" })
}

// clockNote names the clock faults in force at some time between a
// finding's first operation and its last: a process whose clock jumped
// times leases, deadlines and elections by it (those of the monotonic
// clock too, when the fault moved it), so a lease may end early or a
// request time out at once, as its clock says, not as the history's does.
func clockNote(clocks []history.FaultWindow, first, last time.Duration) string {
	var during []string
	for _, c := range clocks {
		if c.Start <= last && c.End >= first { // End: the history's, if never healed
			during = append(during, fmt.Sprintf("%s from %.3fs", strings.Join(c.Victims, ", "), c.Start.Seconds()))
		}
	}
	if len(during) == 0 {
		return ""
	}
	return fmt.Sprintf(" (While a clock fault was in force: %s.)", strings.Join(during, "; "))
}
