// The lock checker's typed figures, which compare reads: the same counts
// for locks and for elections, of different types, so that a tool that
// wants the figures of locks never takes an election's for them.

package lock

import "github.com/chaos-testing/chaos/analysis"

func init() {
	analysis.RegisterFigures[Figures]()
	analysis.RegisterFigures[ElectionFigures]()
}

// Figures are the lock checker's figures of a run.
type Figures struct {
	Holds               int `json:"holds"`
	StaleWritesAccepted int `json:"stale_writes_accepted"`
	StaleWritesRejected int `json:"stale_writes_rejected"`
	// ExclusionViolations counts pairs of holders (or leaders) at once.
	ExclusionViolations int `json:"exclusion_violations"`
	TokensSeen          int `json:"tokens_seen"`
	// TokensStrictlyIncreasing: per lock, every token greater than every
	// one granted before it was asked for, none handed to two grants.
	TokensStrictlyIncreasing bool `json:"tokens_strictly_increasing"`
}

// FiguresKind implements analysis.Figures: analysis.json has them under
// "lock", as it always had.
func (Figures) FiguresKind() string { return "lock" }

// ElectionFigures are the split-brain checker's figures of a run: a lock's,
// counted of leaders.
type ElectionFigures Figures

// FiguresKind implements analysis.Figures.
func (ElectionFigures) FiguresKind() string { return "election" }
