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
	noteCrashes(rep, faults)
	noteClocks(rep, faults)
}

// noteCrashes adds to each finding whose operations end after a crash
// point fired the last such crash before their end: a member that comes
// back behind what it acknowledged, or without data, shows it after the
// crash, and the crash names the operation its node was at.
func noteCrashes(rep *analysis.Report, faults []history.FaultWindow) {
	type crash struct {
		armed, at time.Duration // when armed; when it had fired on every victim it would
		did       []string      // the victims it fired on, and how
	}
	var crashes []crash
	for _, f := range faults {
		did := slices.DeleteFunc(slices.Clone(f.Victims), func(v string) bool {
			return strings.Contains(v, "never fired") || strings.Contains(v, "(not armed")
		})
		if f.Kind == "crash-point" && len(did) > 0 {
			crashes = append(crashes, crash{f.Start, f.Hit, did})
		}
	}
	if len(crashes) == 0 {
		return
	}
	slices.SortFunc(crashes, func(a, b crash) int { return cmp.Compare(a.at, b.at) })
	for i := range rep.Results {
		for j := range rep.Results[i].Findings {
			f := &rep.Results[i].Findings[j]
			if len(f.Ops) == 0 {
				continue
			}
			end := slices.MaxFunc(f.Ops, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) }).Time
			k := slices.IndexFunc(crashes, func(c crash) bool { return c.at >= end })
			if k == -1 {
				k = len(crashes)
			}
			if k == 0 {
				continue
			}
			c := crashes[k-1]
			f.Explanation += fmt.Sprintf(" (After the crash point armed at %.3fs, fired by %.3fs: %s.)", c.armed.Seconds(), c.at.Seconds(), strings.Join(c.did, "; "))
		}
	}
}

// noteClocks adds to each finding the clock faults in force at some time
// between its first operation and its last: a process whose clock jumped
// times leases, deadlines and elections by it (those of the monotonic
// clock too, when the fault moved it), so a lease may end early or a
// request time out at once, as its clock says, not as the history's does.
func noteClocks(rep *analysis.Report, faults []history.FaultWindow) {
	var clocks []history.FaultWindow
	for _, f := range faults {
		if f.Kind == "clock" {
			clocks = append(clocks, f)
		}
	}
	if len(clocks) == 0 {
		return
	}
	for i := range rep.Results {
		for j := range rep.Results[i].Findings {
			f := &rep.Results[i].Findings[j]
			if len(f.Ops) == 0 {
				continue
			}
			byTime := func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) }
			first, last := slices.MinFunc(f.Ops, byTime).Time, slices.MaxFunc(f.Ops, byTime).Time
			var during []string
			for _, c := range clocks {
				if c.Start <= last && c.End >= first { // End: the history's, if never healed
					during = append(during, fmt.Sprintf("%s from %.3fs", strings.Join(c.Victims, ", "), c.Start.Seconds()))
				}
			}
			if len(during) > 0 {
				f.Explanation += fmt.Sprintf(" (While a clock fault was in force: %s.)", strings.Join(during, "; "))
			}
		}
	}
}
