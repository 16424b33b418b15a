// Fencing-token order: a lock service that hands a later holder a token no
// greater than an earlier holder's, or one token to two grants, makes
// fencing useless.

package lock

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// tokenGrant is a grant that carried a token: a successful acquire. A client
// numbers its grants (sessions 1, 2, ...), so a second acquire ok of the same
// process, lock, session and token reports the same grant again.
type tokenGrant struct {
	inv, ok       int // positions of the acquire's invocation and completion
	proc, session int
	lock          string
	token         int64
}

type grantKey struct {
	lock          string
	proc, session int
	token         int64
}

// addGrant records the grant of the acquire ok at i, invoked at inv, unless
// it reports a grant already recorded: a grant is judged by its first report.
// Without a session two reports cannot be told apart from two grants.
func (lh *lockHistory) addGrant(inv, i int, v lockop.Value) {
	g := tokenGrant{inv: inv, ok: i, proc: int(lh.ops[i].Process), session: v.Session, lock: v.Lock, token: *v.Token}
	if v.Session != 0 {
		k := grantKey{g.lock, g.proc, g.session, g.token}
		if lh.granted[k] {
			return
		}
		lh.granted[k] = true
	}
	lh.grants = append(lh.grants, g)
}

// tokenOrder finds, per lock, the grants whose token (1) is lower than that
// of a grant that completed before they were even asked for, or (2) is the
// token of another grant that came first (earlier ok, then lower process,
// then the process's own order): etcd create revisions and ZooKeeper
// sequence numbers name one grant each, whatever the timing. One finding
// per such grant. Grants that overlap in time are not compared for (1): a
// holder whose answer was delayed (paused while it was in flight) may
// observe an older token later.
func tokenOrder(lh *lockHistory) analysis.FindingList {
	var out analysis.FindingList
	byLock := map[string][]tokenGrant{}
	for _, g := range lh.grants {
		byLock[g.lock] = append(byLock[g.lock], g)
	}
	for _, lock := range analysis.SortedKeys(byLock) {
		gs := byLock[lock]
		byOk := slices.Clone(gs)
		slices.SortFunc(byOk, func(a, b tokenGrant) int {
			return cmp.Or(cmp.Compare(lh.ops[a.ok].Time, lh.ops[b.ok].Time), cmp.Compare(a.proc, b.proc), cmp.Compare(a.ok, b.ok))
		})
		first := map[int64]tokenGrant{} // the grant that came first with each token
		for _, g := range slices.Backward(byOk) {
			first[g.token] = g
		}
		slices.SortStableFunc(gs, func(a, b tokenGrant) int { return cmp.Compare(lh.ops[a.inv].Time, lh.ops[b.inv].Time) })
		best, next := -1, 0 // best: the highest-token grant completed so far
		for _, g := range gs {
			for ; next < len(byOk) && lh.ops[byOk[next].ok].Time < lh.ops[g.inv].Time; next++ {
				if best < 0 || byOk[next].token > byOk[best].token {
					best = next
				}
			}
			switch {
			case best >= 0 && g.token < byOk[best].token:
				out.Add(func() analysis.Finding { return lh.tokenFinding(g, byOk[best], false) })
			case first[g.token].ok != g.ok:
				out.Add(func() analysis.Finding { return lh.tokenFinding(g, first[g.token], true) })
			}
		}
	}
	return out
}

// tokenFinding says that g's token is lower than prev's, which was granted
// before g was asked for, or the same as prev's.
func (lh *lockHistory) tokenFinding(g, prev tokenGrant, same bool) analysis.Finding {
	o := lh.ops
	gp, pp := history.ProcessName(g.proc), history.ProcessName(prev.proc)
	why := fmt.Sprintf("lower than token %d that %s had been granted at %s (#%d), before %s asked",
		prev.token, pp, analysis.Secs(o[prev.ok].Time), o[prev.ok].Index, gp)
	if same {
		why = fmt.Sprintf("the same token as %s's grant at %s (#%d): a token must name one grant", pp, analysis.Secs(o[prev.ok].Time), o[prev.ok].Index)
	}
	return analysis.Finding{
		Kind:        "token-order",
		Explanation: fmt.Sprintf("%s was granted %q with token %d at %s (#%d), %s.", gp, g.lock, g.token, analysis.Secs(o[g.ok].Time), o[g.ok].Index, why),
		Ops:         lh.opsAt([]int{prev.inv, prev.ok, g.inv, g.ok}),
	}
}
