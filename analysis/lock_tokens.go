// Fencing-token order: a lock service that hands a later holder a token no
// greater than an earlier holder's makes fencing useless.
package analysis

import (
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/history"
)

// tokenGrant is a successful acquire that carried a token.
type tokenGrant struct {
	inv, ok int // positions of the acquire's invocation and completion
	lock    string
	token   int64
}

// tokenOrder finds grants whose token is not greater than that of a grant
// on the same lock that completed before they were even asked for. Grants
// that overlap in time are not compared: a holder whose answer was delayed
// (paused while it was in flight) may observe an older token later.
func tokenOrder(lh *lockHistory) findingList {
	var out findingList
	byLock := map[string][]tokenGrant{}
	for _, g := range lh.grants {
		byLock[g.lock] = append(byLock[g.lock], g)
	}
	for _, lock := range sortedKeys(byLock) {
		gs := byLock[lock]
		byOk := slices.Clone(gs)
		slices.SortStableFunc(byOk, func(a, b tokenGrant) int { return cmpTime(lh.ops[a.ok], lh.ops[b.ok]) })
		slices.SortStableFunc(gs, func(a, b tokenGrant) int { return cmpTime(lh.ops[a.inv], lh.ops[b.inv]) })
		best, next := -1, 0 // best: the highest-token grant completed so far
		for _, g := range gs {
			for ; next < len(byOk) && lh.ops[byOk[next].ok].Time < lh.ops[g.inv].Time; next++ {
				if best < 0 || byOk[next].token > byOk[best].token {
					best = next
				}
			}
			if best >= 0 && g.token <= byOk[best].token {
				prev := byOk[best]
				out.add(func() Finding {
					return Finding{
						Kind: "token-order",
						Explanation: fmt.Sprintf("%s was granted %q with token %d at %s (#%d), not greater than token %d that %s had been granted at %s (#%d), before %s asked.",
							history.ProcessName(lh.ops[g.ok].Process), lock, g.token, secs(lh.ops[g.ok].Time), lh.ops[g.ok].Index,
							prev.token, history.ProcessName(lh.ops[prev.ok].Process), secs(lh.ops[prev.ok].Time), lh.ops[prev.ok].Index,
							history.ProcessName(lh.ops[g.ok].Process)),
						Ops: opsAt(lh.ops, []int{prev.inv, prev.ok, g.inv, g.ok}),
					}
				})
			}
		}
	}
	return out
}

func cmpTime(a, b history.Op) int {
	switch {
	case a.Time < b.Time:
		return -1
	case a.Time > b.Time:
		return 1
	}
	return 0
}
