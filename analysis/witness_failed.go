// A failure that was not one: when a key is illegal, what a client was told
// may be what is false. A system that answers "failed" for a write it then
// makes (a deposed leader refusing from its stale state while the new one
// stores the write, say) leaves a history that only that write can explain.
// The witness asks whether one of the failed operations near where the
// order breaks would, had it taken effect, make the key linearizable, and
// names it if so: the operation and the failure it was answered with.
package analysis

import (
	"cmp"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// The search is an explanation, not the verdict: it tries a few failed
// operations, for a short time in all, and gives up rather than hold the
// report up.
const (
	maxFailedTries  = 8
	failedTryBudget = time.Second
)

// tookEffect is the index in p.failed of the latest failed operation
// invoked by horizon that makes p linearizable if it took effect (at any
// time after its invocation), or -1 if none of those tried does.
func tookEffect(model porcupine.Model, p *linPart, horizon int64) int {
	var tries []int
	for i, o := range p.failed {
		if o.Call <= horizon {
			tries = append(tries, i)
		}
	}
	// The nearest to where the order breaks first.
	slices.SortStableFunc(tries, func(a, b int) int { return cmp.Compare(p.failed[b].Call, p.failed[a].Call) })
	ops := append(slices.Clip(p.ops), porcupine.Operation{})
	end := time.Now().Add(failedTryBudget)
	for _, i := range tries[:min(len(tries), maxFailedTries)] {
		left := time.Until(end)
		if left <= 0 { // porcupine reads a timeout <= 0 as "none"
			break
		}
		ops[len(ops)-1] = p.failed[i]
		if porcupine.CheckOperationsTimeout(model, ops, left) == porcupine.Ok {
			return i
		}
	}
	return -1
}
