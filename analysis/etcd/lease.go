package etcd

import (
	"context"
	"fmt"
	"slices"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

func init() { analysis.Register(LeaseChecker{}) }

// LeaseChecker judges etcd's answers to lease keep-alives against the
// grants and revokes around them, by recorded times. The workload's
// leases outlive the run (their TTL is an hour), so only a revoke ends
// one:
//   - a keep-alive invoked after a revoke of its lease was acknowledged
//     must find no lease ("lease-revived");
//   - a keep-alive invoked after its lease's grant was acknowledged, with
//     no revoke of it sent before the keep-alive's answer, must find the
//     lease ("lease-lost").
type LeaseChecker struct{}

func (LeaseChecker) Name() string { return "etcd-lease" }

// leaseLife is what the history says of one lease.
type leaseLife struct {
	grant   *history.Pair  // the acknowledged grant
	revokes []history.Pair // revokes sent, whatever their outcome
}

func (LeaseChecker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var bad analysis.ErrCount
	lives := map[int64]*leaseLife{}
	life := func(id int64) *leaseLife {
		if lives[id] == nil {
			lives[id] = &leaseLife{}
		}
		return lives[id]
	}
	type keepAlive struct {
		history.Pair
		lease, ttl int64
	}
	var keeps []keepAlive
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return op.F == etcdop.FLeaseGrant || op.F == etcdop.FLeaseRevoke || op.F == etcdop.FLeaseKeepAlive
	}) {
		var req etcdop.KVRequest
		if err := p.Inv.Decode(&req); err != nil {
			bad.Add(err)
			continue
		}
		var resp etcdop.KVResponse
		ok := p.Done != nil && p.Done.Type == history.Ok
		if ok {
			if err := p.Done.Decode(&resp); err != nil {
				bad.Add(err)
				continue
			}
		}
		switch p.Inv.F {
		case etcdop.FLeaseGrant:
			if ok {
				life(resp.Lease).grant = &p
			}
		case etcdop.FLeaseRevoke:
			if p.Done == nil || p.Done.Type != history.Fail {
				life(req.Lease).revokes = append(life(req.Lease).revokes, p)
			}
		default:
			if ok {
				keeps = append(keeps, keepAlive{p, req.Lease, resp.TTL})
			}
		}
	}
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d lease operations could not be read; first: %v", bad.N, bad.First))
	}
	var found analysis.FindingList
	for _, k := range keeps {
		l := life(k.lease)
		switch {
		case k.ttl > 0:
			for _, r := range l.revokes {
				if r.Done != nil && r.Done.Type == history.Ok && r.Done.Time < k.Inv.Time {
					found.Add(func() analysis.Finding {
						return analysis.Finding{Kind: "lease-revived", Explanation: fmt.Sprintf(
							"%s's keep-alive of lease %d (#%d) found it, with %d s to live, after its revoke was acknowledged (#%d).",
							history.ProcessName(k.Inv.Process), k.lease, k.Done.Index, k.ttl, r.Done.Index),
							Ops: []history.Op{*r.Inv, *r.Done, *k.Inv, *k.Done}}
					})
					break
				}
			}
		case l.grant != nil && l.grant.Done.Time < k.Inv.Time &&
			!slices.ContainsFunc(l.revokes, func(r history.Pair) bool { return r.Inv.Time < k.Done.Time }):
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "lease-lost", Explanation: fmt.Sprintf(
					"%s's keep-alive of lease %d (#%d) found no such lease, although its grant was acknowledged (#%d) and no revoke of it had been sent.",
					history.ProcessName(k.Inv.Process), k.lease, k.Done.Index, l.grant.Done.Index),
					Ops: []history.Op{*l.grant.Inv, *l.grant.Done, *k.Inv, *k.Done}}
			})
		}
	}
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"leases": len(lives), "keepalives": len(keeps)}}
	found.Put(&res)
	if found.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	if len(keeps) == 0 {
		res.Notes = append(res.Notes, "no keep-alive was answered: nothing to check")
	}
	return res
}
