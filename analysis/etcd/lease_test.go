package etcd

import (
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/ops/etcdop"
)

func TestEtcdLease(t *testing.T) {
	grant := func(h *kvh, t1, t2 float64) *kvh {
		return h.op(0, t1, t2, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 3600}, &etcdop.KVResponse{Revision: 1, Lease: 7})
	}
	revoke := func(h *kvh, t1, t2 float64, ok bool) *kvh {
		var resp *etcdop.KVResponse
		if ok {
			resp = &etcdop.KVResponse{Revision: 1}
		}
		return h.op(0, t1, t2, etcdop.FLeaseRevoke, etcdop.KVRequest{Lease: 7}, resp)
	}
	grantTTL := func(h *kvh, t1, t2 float64, ttl int64) *kvh {
		return h.op(0, t1, t2, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: ttl}, &etcdop.KVResponse{Revision: 1, Lease: 7, TTL: ttl})
	}
	keep := func(h *kvh, t1, t2 float64, ttl int64) *kvh {
		return h.op(1, t1, t2, etcdop.FLeaseKeepAlive, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 1, TTL: ttl})
	}
	for name, c := range map[string]struct {
		h    *kvh
		want string
	}{
		"a live lease found":                      {keep(grant(&kvh{}, 0, 1), 2, 3, 3599), ""},
		"a revoked lease not found":               {keep(revoke(grant(&kvh{}, 0, 1), 2, 3, true), 4, 5, 0), ""},
		"a revoked lease found again":             {keep(revoke(grant(&kvh{}, 0, 1), 2, 3, true), 4, 5, 3599), "lease-revived"},
		"found while its revoke was under way":    {keep(revoke(grant(&kvh{}, 0, 1), 2, 5, true), 3, 4, 3599), ""},
		"a live lease lost":                       {keep(grant(&kvh{}, 0, 1), 2, 3, 0), "lease-lost"},
		"not found after a revoke of unknown end": {keep(revoke(grant(&kvh{}, 0, 1), 2, 3, false), 4, 5, 0), ""},
		"not found while granted":                 {keep(grant(&kvh{}, 0, 3), 2, 4, 0), ""},
		// Each grant's TTL is its own (issue 35, item 3): a lease of 5 s
		// not kept alive may be gone 5 s after its grant; kept alive, it
		// lives 5 s past the keep-alive that found it.
		"expired after its TTL":                {keep(grantTTL(&kvh{}, 0, 1, 5), 6, 7, 0), ""},
		"lost within its TTL":                  {keep(grantTTL(&kvh{}, 0, 1, 5), 3, 4, 0), "lease-lost"},
		"lost within a kept-alive TTL":         {keep(keep(grantTTL(&kvh{}, 0, 1, 5), 4, 4.5, 5), 7, 8, 0), "lease-lost"},
		"expired after a kept-alive TTL":       {keep(keep(grantTTL(&kvh{}, 0, 1, 5), 4, 4.5, 5), 9.5, 10, 0), ""},
		"found past its TTL (etcd lengthened)": {keep(grantTTL(&kvh{}, 0, 1, 5), 8, 9, 5), ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := analysistest.RunChecker(t, "etcd-lease", analysis.Input{History: c.h.Ops})
			switch {
			case c.want == "" && r.Verdict != analysis.Valid, c.want != "" && (r.Verdict != analysis.Invalid || r.Findings[0].Kind != c.want || len(r.Findings[0].Ops) != 4):
				t.Fatalf("got %s %+v, expected %q", r.Verdict, r.Findings, c.want)
			}
		})
	}
}

// A lease not kept alive expires, and etcd deletes its keys at a revision
// no operation made: legal once its TTL has passed, not before (issue 35,
// item 3; the first case failed before).
func TestEtcdKVLeaseExpiry(t *testing.T) {
	leased := func(read float64) *kvh {
		return (&kvh{}).op(0, 0, 0.1, etcdop.FLeaseGrant, etcdop.KVRequest{TTL: 2}, &etcdop.KVResponse{Revision: 1, Lease: 7, TTL: 2}).
			put(0, 0.2, 0.3, "a", "1", 7, 2).
			get(1, read, read+0.1, "a", "", 3)
	}
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: leased(10).Ops}), analysis.Valid)
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: leased(1).Ops}), analysis.Invalid)
	// Kept alive until 9 s, it lives until 11 s at least.
	kept := leased(10).op(2, 9, 9.1, etcdop.FLeaseKeepAlive, etcdop.KVRequest{Lease: 7}, &etcdop.KVResponse{Revision: 2, TTL: 2})
	analysistest.WantResult(t, analysistest.RunChecker(t, "etcd-kv", analysis.Input{History: kept.Ops}), analysis.Invalid)
}
