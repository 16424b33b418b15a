// The words of the lock checker. A leader election is judged as a lock is:
// a leader acts by its own account from its election until it resigns or
// learns it lost (like a holder from acquire to release), and its acts go
// to the same protected resource. Only the names differ.

package lock

import (
	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// vocab names a lock-like workload's operations, findings and roles.
type vocab struct {
	checker                string // registered name
	acquire, release, act  string // operation names in the history
	exclusion, stale       string // finding kinds
	held, gotLater, gotten string // "held the lock", "acquired the lock later", "acquisition"
	released, again        string // "release", "asked for the lock again"
	// figures types the checker's figures.
	figures func(Figures) analysis.Figures
}

var lockVocab = &vocab{
	checker: "lock", acquire: lockop.FAcquire, release: lockop.FRelease, act: lockop.FWrite,
	exclusion: "mutual-exclusion", stale: "stale-write",
	held: "held the lock", gotLater: "acquired the lock later", gotten: "acquisition",
	released: "release", again: "asked for the lock again",
	figures: func(f Figures) analysis.Figures { return f },
}

var electionVocab = &vocab{
	checker: "split-brain", acquire: lockop.FCampaign, release: lockop.FResign, act: lockop.FWrite,
	exclusion: "two-leaders", stale: "stale-leader-write",
	held: "acted as leader", gotLater: "was elected later", gotten: "election",
	released: "resignation", again: "campaigned again",
	figures: func(f Figures) analysis.Figures { return ElectionFigures(f) },
}

// SplitBrain judges leader elections, as Checker judges locks, in the
// words of elections.
var SplitBrain = Checker{v: electionVocab}

func init() { analysis.Register(SplitBrain) }
