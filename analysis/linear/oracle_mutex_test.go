package linear

import (
	"context"
	"fmt"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/analysis/linear/oracle"
	"github.com/chaos-testing/chaos/history"
)

// mutexComparison draws mutex histories for TestOracleMutex and
// FuzzOracleMutex.
var mutexComparison = analysistest.Comparison[[]history.Op]{Draw: oracle.RandomMutexHistory, Diff: diffMutexOracle, Show: analysistest.JSONLines[history.Op]}

// TestOracleMutex compares the "mutex" linearizability checker with the
// exhaustive oracle on random small histories.
func TestOracleMutex(t *testing.T) { mutexComparison.Test(t, 20000, analysistest.Indexed(0x307e)) }

// FuzzOracleMutex turns fuzz bytes into a small mutex history and compares
// the checker with the oracle on it.
func FuzzOracleMutex(f *testing.F) {
	mutexComparison.Fuzz(f, []byte{}, []byte("acquire, acquire, release: who held it?"),
		[]byte{3, 7, 1, 0, 0, 4, 2, 1, 0, 3, 0, 0, 1, 5, 2, 2, 0, 1})
}

// diffMutexOracle checks h with the mutex checker and the oracle and says
// how they differ, or else the verdict they agree on.
func diffMutexOracle(h []history.Op) ([]string, error) {
	ok, err := oracle.Mutex(h)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	c, found := analysis.Checkers.Lookup("mutex")
	if !found {
		return nil, fmt.Errorf("no mutex checker")
	}
	r := c.Check(context.Background(), analysis.Input{History: h})
	want := analysis.Invalid
	if ok {
		want = analysis.Valid
	}
	if r.Verdict != want {
		return nil, fmt.Errorf("checker %s, oracle %s; notes %q", r.Verdict, want, r.Notes)
	}
	return claimHolds(r, h, oracle.Mutex)
}
