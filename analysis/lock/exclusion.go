// The lock checker's "mutual-exclusion" findings: two processes holding the
// lock at once, by their own account.

package lock

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// mutualExclusion finds the holds that overlap a hold of another process
// that comes before them (earlier start, or the same start and a lower
// process number). Two holds overlap when one holds the lock at the other's
// start. It sweeps the holds in that order, keeping the one that reaches
// furthest. A process's own holds never overlap (scanLock ends one before
// the next begins), so a hold that overlaps any earlier hold overlaps the
// furthest-reaching one unless that is its own process's, in which case it
// overlaps nothing. One finding per overlapping hold, not per pair:
// O(n log n) however long a paused holder's tenure.
func mutualExclusion(lh *lockHistory) analysis.FindingList {
	hs := slices.Clone(lh.holds)
	slices.SortFunc(hs, func(a, b hold) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.proc, b.proc), cmp.Compare(a.acq, b.acq))
	})
	var found analysis.FindingList
	var reach *hold
	for i := range hs {
		h := &hs[i]
		if reach != nil && h.proc != reach.proc && reach.holdsAt(h.start) && h.holdsAt(h.start) {
			found.Add(func() analysis.Finding { return lh.overlapFinding(reach, h) })
		}
		if reach == nil || h.stop > reach.stop || h.stop == reach.stop && h.kept {
			reach = h
		}
	}
	return found
}

func (lh *lockHistory) overlapFinding(a, b *hold) analysis.Finding {
	o := lh.ops
	return analysis.Finding{
		Kind: lh.v.exclusion,
		Explanation: fmt.Sprintf("%s and %s both %s by their own account: %s from %s (#%d) %s, %s from %s (#%d) %s.",
			history.ProcessName(a.proc), history.ProcessName(b.proc), lh.v.held,
			history.ProcessName(a.proc), analysis.Secs(a.start), o[a.acq].Index, lh.describeEnd(a.end),
			history.ProcessName(b.proc), analysis.Secs(b.start), o[b.acq].Index, lh.describeEnd(b.end)),
		Ops: lh.entries([]int{a.acq, a.end, b.acq, b.end}),
	}
}

func (lh *lockHistory) describeEnd(i int) string {
	op := &lh.ops[i]
	switch {
	case op.Type() == history.Invoke && op.f == releaseFn:
		return fmt.Sprintf("until its %s at %s (#%d)", lh.v.released, analysis.Secs(op.Time), op.Index)
	case op.Type() == history.Invoke && op.f == acquireFn:
		return fmt.Sprintf("until it %s at %s (#%d)", lh.v.again, analysis.Secs(op.Time), op.Index)
	}
	return fmt.Sprintf("until its last entry at %s (#%d), with no %s", analysis.Secs(op.Time), op.Index, lh.v.released)
}
