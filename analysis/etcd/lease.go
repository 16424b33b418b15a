package etcd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

func init() { analysis.Register(LeaseChecker{}) }

// LeaseChecker judges etcd's answers to lease keep-alives against the
// grants, keep-alives and revokes around them, by recorded times. A lease
// ends when it is revoked, or when its TTL passes with no refresh: a grant
// or a keep-alive that found it refreshes it, at a moment between its
// invocation and its answer, for the TTL it answered with (etcd may
// lengthen a TTL, never shorten it):
//   - a keep-alive invoked after a revoke of its lease was acknowledged
//     must find no lease ("lease-revived");
//   - a keep-alive invoked after its lease's grant was acknowledged, with
//     no revoke of it sent before the keep-alive's answer, and answered
//     before the TTL of the last refresh known to precede it can have
//     passed, must find the lease ("lease-lost").
type LeaseChecker struct{}

func (LeaseChecker) Name() string { return "etcd-lease" }

// leaseLife is what the history says of one lease.
type leaseLife struct {
	grant   *history.Pair  // the acknowledged grant
	revokes []history.Pair // revokes sent, whatever their outcome
	// refreshes are the acknowledged grant and keep-alives that found
	// the lease, each with the TTL it answered (seconds).
	refreshes []refresh
}

type refresh struct {
	history.Pair
	ttl int64
}

// aliveUntil is the time until which the lease cannot have expired, as the
// refreshes answered before at say: each keeps it at least its TTL past
// its invocation. 0: no refresh is known before at.
func (l *leaseLife) aliveUntil(at time.Duration) time.Duration {
	var until time.Duration
	for _, r := range l.refreshes {
		if r.Done.Time < at {
			until = max(until, r.Inv.Time+time.Duration(r.ttl)*time.Second)
		}
	}
	return until
}

// keepAlive is an answered keep-alive: the TTL it found its lease with,
// 0 if it found none.
type keepAlive struct {
	history.Pair
	lease, ttl int64
}

// readLeases reads what a history says of each lease, and its answered
// keep-alives.
func readLeases(h []history.Op) (map[int64]*leaseLife, []keepAlive, analysis.ErrCount) {
	var bad analysis.ErrCount
	lives := map[int64]*leaseLife{}
	life := func(id int64) *leaseLife {
		if lives[id] == nil {
			lives[id] = &leaseLife{}
		}
		return lives[id]
	}
	var keeps []keepAlive
	for _, p := range history.Pairs(h, func(op *history.Op) bool {
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
				l := life(resp.Lease)
				l.grant = &p
				l.refreshes = append(l.refreshes, refresh{p, max(req.TTL, resp.TTL)})
			}
		case etcdop.FLeaseRevoke:
			if p.Done == nil || p.Done.Type != history.Fail {
				life(req.Lease).revokes = append(life(req.Lease).revokes, p)
			}
		default:
			if ok {
				keeps = append(keeps, keepAlive{p, req.Lease, resp.TTL})
				if resp.TTL > 0 {
					life(req.Lease).refreshes = append(life(req.Lease).refreshes, refresh{p, resp.TTL})
				}
			}
		}
	}
	return lives, keeps, bad
}

func (LeaseChecker) Check(_ context.Context, in analysis.Input) analysis.Result {
	lives, keeps, bad := readLeases(in.History)
	if bad.N > 0 {
		return analysis.UnknownResult(fmt.Sprintf("%d lease operations could not be read; first: %v", bad.N, bad.First))
	}
	life := func(id int64) *leaseLife {
		if lives[id] == nil {
			return &leaseLife{}
		}
		return lives[id]
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
		case l.grant != nil && l.grant.Done.Time < k.Inv.Time && k.Done.Time < l.aliveUntil(k.Inv.Time) &&
			!slices.ContainsFunc(l.revokes, func(r history.Pair) bool { return r.Inv.Time < k.Done.Time }):
			found.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "lease-lost", Explanation: fmt.Sprintf(
					"%s's keep-alive of lease %d (#%d) found no such lease, although its grant was acknowledged (#%d), no revoke of it had been sent, and its TTL could not have passed since it was last refreshed (alive until at least %.3fs).",
					history.ProcessName(k.Inv.Process), k.lease, k.Done.Index, l.grant.Done.Index, l.aliveUntil(k.Inv.Time).Seconds()),
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

// leaseExpiries are the expiries etcd may carry out on its own, as revokes
// by history.Server invoked when each acknowledged grant's lease can first
// have expired (its last refresh's TTL past), Index from next on. A lease
// whose revoke was acknowledged cannot expire before it, nor matter after.
func leaseExpiries(h []history.Op, next int) []history.Op {
	lives, _, _ := readLeases(h) // etcd-lease reports what it cannot read
	var out []history.Op
	for _, id := range slices.Sorted(maps.Keys(lives)) {
		l := lives[id]
		if l.grant == nil || slices.ContainsFunc(l.revokes, func(r history.Pair) bool { return r.Done != nil && r.Done.Type == history.Ok }) {
			continue
		}
		value, _ := json.Marshal(etcdop.KVRequest{Lease: id}) // of plain fields: cannot fail
		out = append(out, history.Op{Index: next + len(out), Time: l.aliveUntil(math.MaxInt64), Type: history.Invoke,
			Process: history.Server, F: etcdop.FLeaseRevoke, Value: value})
	}
	return out
}
