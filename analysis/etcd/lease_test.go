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
