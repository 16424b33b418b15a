package analysis

import (
	"context"
	"fmt"
	"testing"

	"github.com/chaos-testing/chaos/analysis/linear/oracle"
	"github.com/chaos-testing/chaos/history"
)

// mutexComparison draws mutex histories for TestOracleMutex and
// FuzzOracleMutex.
var mutexComparison = oracleComparison[[]history.Op]{oracle.RandomMutexHistory, diffMutexOracle, jsonLines[history.Op]}

// TestOracleMutex compares the "mutex" linearizability checker with the
// exhaustive oracle on random small histories.
func TestOracleMutex(t *testing.T) { mutexComparison.test(t, 20000, indexed(0x307e)) }

// FuzzOracleMutex turns fuzz bytes into a small mutex history and compares
// the checker with the oracle on it.
func FuzzOracleMutex(f *testing.F) {
	mutexComparison.fuzz(f, []byte{}, []byte("acquire, acquire, release: who held it?"),
		[]byte{3, 7, 1, 0, 0, 4, 2, 1, 0, 3, 0, 0, 1, 5, 2, 2, 0, 1})
}

// diffMutexOracle checks h with the mutex checker and the oracle and says
// how they differ, or else the verdict they agree on.
func diffMutexOracle(h []history.Op) ([]string, error) {
	ok, err := oracle.Mutex(h)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	c, found := Checkers.Lookup("mutex")
	if !found {
		return nil, fmt.Errorf("no mutex checker")
	}
	r := c.Check(context.Background(), Input{History: h})
	want := Invalid
	if ok {
		want = Valid
	}
	if r.Verdict != want {
		return nil, fmt.Errorf("checker %s, oracle %s; notes %q", r.Verdict, want, r.Notes)
	}
	return claimHolds(r, h, oracle.Mutex)
}
