package etcd

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/linear"
	"github.com/chaos-testing/chaos/history"
)

// etcdByRevision decides a history of etcd-kv operations without a search,
// when every operation's answer is known (ok, or decided on evidence). An
// answer pins its operation in any linearization: the write that made
// revision r is at r, and every other operation answered with r comes
// after that write and before the one that made r+1. So the history is
// linearizable exactly when
//
//   - revision by revision, one operation of those answered with r makes r
//     from the state at r-1, and every other one answered with r is legal
//     in the state that follows (in the order of their invocations: what
//     they change, leases, none of them reads);
//   - real time agrees: an operation that completed before another was
//     invoked is pinned no later than it.
//
// The pinned order is then a linearization. A history whose answers are
// not all known, or where two operations could each make a revision
// (their states then differ), is left to porcupine (decided false). The
// search and this check are cross-checked on random histories.
func etcdByRevision(h []history.Op, p *linear.Part, init *etcdState) (f *analysis.Finding, decided bool) {
	groups := map[int64][]int{} // by answered revision, in order of invocation
	for i, op := range p.Ops {
		out := op.Output.(etcdOut)
		if out.resp == nil {
			return nil, false
		}
		groups[out.resp.Revision] = append(groups[out.resp.Revision], i)
	}
	revs := slices.Sorted(maps.Keys(groups))
	pos := make([]int64, len(p.Ops)) // 2r for the write that made r, 2r+1 for the rest
	entries := func(ids ...int) []history.Op {
		var lines []int
		for _, i := range ids {
			r := p.Refs[i]
			lines = append(lines, r.Inv)
			if r.Done >= 0 {
				lines = append(lines, r.Done)
			}
		}
		return analysis.OpsAt(h, lines)
	}
	describe := func(i int) string {
		return fmt.Sprintf("%s's %s", history.ProcessName(p.Ops[i].ClientId), describeEtcd(p.Ops[i].Input.(etcdIn), p.Ops[i].Output.(etcdOut)))
	}
	s := init
	for _, r := range revs {
		g := groups[r]
		slices.SortFunc(g, func(a, b int) int { return cmp.Compare(p.Ops[a].Call, p.Ops[b].Call) })
		if r < s.rev {
			return &analysis.Finding{Kind: "nonlinearizable", Explanation: fmt.Sprintf(
				"%s answered revision %d, before the history began (revision %d).", describe(g[0]), r, s.rev), Ops: entries(g[0])}, true
		}
		maker := -1
		if r > s.rev {
			if r > s.rev+1 {
				return &analysis.Finding{Kind: "nonlinearizable", Explanation: fmt.Sprintf(
					"no operation of the history made revision %d: %s answered %d while the store was at %s.",
					s.rev+1, describe(g[0]), r, s.String()), Ops: entries(g[0])}, true
			}
			var works []int
			var after *etcdState
			for _, c := range g {
				if next, ok := etcdGroup(s, p.Ops, g, c); ok {
					works, after = append(works, c), next
				}
			}
			switch len(works) {
			case 0:
				ids := g[:min(len(g), analysis.MaxOps)]
				return &analysis.Finding{Kind: "nonlinearizable", Explanation: fmt.Sprintf(
					"revision %d: no one of the %d operations answered with it can have made it from the store at %s with the others' answers all true; first: %s.",
					r, len(g), s.String(), describe(g[0])), Ops: entries(ids...)}, true
			case 1:
				maker, s = works[0], after
			default:
				return nil, false // two possible makers: the states after differ
			}
		} else if next, ok := etcdGroup(s, p.Ops, g, -1); ok {
			s = next
		} else {
			return &analysis.Finding{Kind: "nonlinearizable", Explanation: fmt.Sprintf(
				"the answers at the initial revision %d disagree with the store; first: %s.", r, describe(g[0])), Ops: entries(g...)}, true
		}
		for _, i := range g {
			pos[i] = 2*r + 1
		}
		if maker >= 0 {
			pos[maker] = 2 * r
		}
	}
	// Real time: sweep by invocation; every operation completed before one
	// is invoked must be pinned no later.
	byReturn := make([]int, len(p.Ops))
	byCall := make([]int, len(p.Ops))
	for i := range p.Ops {
		byReturn[i], byCall[i] = i, i
	}
	slices.SortFunc(byReturn, func(a, b int) int { return cmp.Compare(p.Ops[a].Return, p.Ops[b].Return) })
	slices.SortFunc(byCall, func(a, b int) int { return cmp.Compare(p.Ops[a].Call, p.Ops[b].Call) })
	latest, next := -1, 0 // the operation pinned latest among those completed
	for _, b := range byCall {
		for ; next < len(byReturn) && p.Ops[byReturn[next]].Return < p.Ops[b].Call; next++ {
			if a := byReturn[next]; latest < 0 || pos[a] > pos[latest] {
				latest = a
			}
		}
		if latest >= 0 && pos[latest] > pos[b] {
			return &analysis.Finding{Kind: "nonlinearizable", Explanation: fmt.Sprintf(
				"%s completed before %s was invoked, yet saw a later state (revision %d, against %d).",
				describe(latest), describe(b), pos[latest]/2, pos[b]/2), Ops: entries(latest, b)}, true
		}
	}
	return nil, true
}

// etcdGroup applies the operations answered with one revision to s: maker
// first (-1: none, the group is at s's revision), then the others in
// order, none of which may change the revision. It says whether every
// answer holds.
func etcdGroup(s *etcdState, ops []porcupine.Operation, g []int, maker int) (*etcdState, bool) {
	rev := s.rev
	if maker >= 0 {
		ok, next := etcdStep(s, ops[maker].Input.(etcdIn), ops[maker].Output.(etcdOut))
		if !ok || next.rev != s.rev+1 {
			return nil, false
		}
		s, rev = next, next.rev
	}
	for _, i := range g {
		if i == maker {
			continue
		}
		ok, next := etcdStep(s, ops[i].Input.(etcdIn), ops[i].Output.(etcdOut))
		if !ok || next.rev != rev {
			return nil, false
		}
		s = next
	}
	return s, true
}
