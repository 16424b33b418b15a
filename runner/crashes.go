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

// noteCrashes adds to each finding whose operations end after a crash
// point fired the last such crash before their end: a member that comes
// back behind what it acknowledged, or without data, shows it after the
// crash, and the crash names the operation its node was at.
func noteCrashes(rep *analysis.Report, faults []history.FaultWindow) {
	type crash struct {
		at  time.Duration
		did []string // the victims it fired on, and how
	}
	var crashes []crash
	for _, f := range faults {
		did := slices.DeleteFunc(slices.Clone(f.Victims), func(v string) bool { return strings.Contains(v, "never fired") })
		if f.Kind == "crash-point" && len(did) > 0 {
			crashes = append(crashes, crash{f.Start, did})
		}
	}
	if len(crashes) == 0 {
		return
	}
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
			f.Explanation += fmt.Sprintf(" (After the crash point armed at %.3fs: %s.)", c.at.Seconds(), strings.Join(c.did, "; "))
		}
	}
}
