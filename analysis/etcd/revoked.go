package etcd

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

// What acknowledged revokes show. A revoke of lease L answered at
// revision R deleted, in one revision, every key L had; so from R on no
// key has L, and no put on L runs after it (etcd refuses a put on a lease
// it does not know). A put on L at R or later would have left L a key
// for the revoke to delete at a revision past R, so every put on L that
// ran made a revision below R.

// leaseEnds are, by lease, the acknowledged revoke that answered the
// lowest revision; leases granted more than once are left out, since
// the rule holds for one life of a lease.
func leaseEnds(answers []answered) map[int64]answered {
	grants := map[int64]int{}
	for _, a := range answers {
		if a.Inv.F == etcdop.FLeaseGrant && a.resp != nil {
			grants[a.resp.Lease]++
		}
	}
	ends := map[int64]answered{}
	for _, a := range answers {
		if a.Inv.F != etcdop.FLeaseRevoke || a.resp == nil || grants[a.req.Lease] > 1 {
			continue
		}
		if e, ok := ends[a.req.Lease]; !ok || a.resp.Revision < e.resp.Revision {
			ends[a.req.Lease] = a
		}
	}
	return ends
}

// leaseBound is the highest revision write a can have made, when each
// branch of it that writes puts a key on a lease a revoke ended: below
// the lowest such revoke's revision; with the revoke that bounds it. ok
// is false when nothing bounds it so.
func leaseBound(a answered, ends map[int64]answered) (rev int64, by answered, ok bool) {
	rev = math.MinInt64
	for _, branch := range [][]etcdop.KVOp{a.req.Then, a.req.Else} {
		if !slices.ContainsFunc(branch, func(op etcdop.KVOp) bool { return op.F == etcdop.FPut || op.F == etcdop.FDelete }) {
			continue // it makes no revision
		}
		var first answered
		found := false
		for _, op := range branch {
			if e, ended := ends[op.Lease]; op.F == etcdop.FPut && op.Lease != 0 && ended && (!found || e.resp.Revision < first.resp.Revision) {
				first, found = e, true
			}
		}
		if !found {
			return 0, answered{}, false
		}
		if r := first.resp.Revision - 1; r > rev {
			rev, by = r, first
		}
	}
	return rev, by, rev != math.MinInt64
}

// checkLeaseLive finds a key that src showed on a lease at a revision
// at or past the one its revoke answered (a finding of kind).
func checkLeaseLive(kv etcdop.KV, rev int64, ends map[int64]answered, src string, ops []history.Op, kind string, found *analysis.FindingList) {
	e, ok := ends[kv.Lease]
	if kv.Lease == 0 || !ok || rev < e.resp.Revision {
		return
	}
	found.Add(func() analysis.Finding {
		return analysis.Finding{Kind: kind, Explanation: fmt.Sprintf(
			"%s showed %s=%s on lease %d at revision %d, but %s ended that lease at revision %d, deleting its keys.",
			src, kv.Key, kv.Value, kv.Lease, rev, e.src(), e.resp.Revision), Ops: slices.Concat(ops, e.ops())}
	})
}

// keyLeases is, by key, what acknowledged writes show of the lease it
// had: the revisions at which one put it on a lease (or on none) or
// deleted it, in order, and, by lease, the highest revision a put can
// have given it that lease (any, for a put of unknown outcome).
type keyLeases struct {
	set map[string][]leaseSet
	on  map[string]map[int64]int64
}

// leaseSet is a key put at rev on lease (0: none), or deleted (-1).
type leaseSet struct{ rev, lease int64 }

func keyLeasesOf(answers []answered) keyLeases {
	k := keyLeases{set: map[string][]leaseSet{}, on: map[string]map[int64]int64{}}
	for _, a := range answers {
		rev := int64(math.MaxInt64)
		if a.resp != nil {
			rev = a.resp.Revision
		}
		for i, op := range a.branch() {
			switch {
			case op.F == etcdop.FPut:
				if k.on[op.Key] == nil {
					k.on[op.Key] = map[int64]int64{}
				}
				k.on[op.Key][op.Lease] = max(k.on[op.Key][op.Lease], rev)
				if a.resp != nil {
					k.set[op.Key] = append(k.set[op.Key], leaseSet{rev, op.Lease})
				}
			case op.F == etcdop.FDelete && op.End == "" && a.resp != nil && i < len(a.resp.Results) && a.resp.Results[i].Deleted > 0:
				k.set[op.Key] = append(k.set[op.Key], leaseSet{rev, -1})
			}
		}
	}
	for _, s := range k.set {
		slices.SortFunc(s, func(a, b leaseSet) int { return cmp.Compare(a.rev, b.rev) })
	}
	return k
}

// detached says whether lease held none of keys at rev-1: each was, by
// then, put on another lease or deleted by an acknowledged write that no
// put giving it the lease can have followed. An end of the lease then
// deletes nothing, and makes no revision.
func (k keyLeases) detached(lease int64, keys []string, rev int64) bool {
	for _, key := range keys {
		s := k.set[key]
		i, _ := slices.BinarySearchFunc(s, rev, func(l leaseSet, r int64) int { return cmp.Compare(l.rev, r) })
		i-- // the last set below rev
		for i >= 0 && s[i].lease == lease {
			i--
		}
		if i < 0 || k.on[key][lease] >= s[i].rev {
			return false
		}
	}
	return len(keys) > 0
}
