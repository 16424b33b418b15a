package etcdkv

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/chaos-testing/chaos/ops/etcdop"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// call sends req to etcd by the API a client would use for it: Get, Put
// and Delete for single operations (each its own path in the server), Txn
// for transactions, and the lease API, and returns the answer as the
// history records it.
func call(ctx context.Context, cli *clientv3.Client, f string, req etcdop.KVRequest) (*etcdop.KVResponse, error) {
	switch f {
	case etcdop.FLeaseGrant:
		resp, err := cli.Grant(ctx, req.TTL)
		if err != nil {
			return nil, err
		}
		return &etcdop.KVResponse{Revision: resp.Revision, Member: member(resp.ResponseHeader), Lease: int64(resp.ID)}, nil
	case etcdop.FLeaseRevoke:
		resp, err := cli.Revoke(ctx, clientv3.LeaseID(req.Lease))
		if err != nil {
			return nil, err
		}
		return &etcdop.KVResponse{Revision: resp.Header.Revision, Member: member(resp.Header)}, nil
	case etcdop.FLeaseKeepAlive:
		resp, err := cli.KeepAliveOnce(ctx, clientv3.LeaseID(req.Lease))
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return &etcdop.KVResponse{}, nil // an answer: etcd has no such lease
		}
		if err != nil {
			return nil, err
		}
		return &etcdop.KVResponse{Revision: resp.Revision, Member: member(resp.ResponseHeader), TTL: resp.TTL}, nil
	case etcdop.FKVTxn:
		conds := make([]clientv3.Cmp, len(req.If))
		for i, c := range req.If {
			conds[i] = compare(c)
		}
		resp, err := cli.Txn(ctx).If(conds...).Then(ops(req.Then)...).Else(ops(req.Else)...).Commit()
		if err != nil {
			return nil, err
		}
		out := &etcdop.KVResponse{Revision: resp.Header.Revision, Member: member(resp.Header), Succeeded: resp.Succeeded, Results: []etcdop.KVResult{}}
		for _, r := range resp.Responses {
			out.Results = append(out.Results, result(r))
		}
		return out, nil
	}
	var opts []clientv3.OpOption
	if f == etcdop.FRangeSerializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	resp, err := cli.Do(ctx, ops(req.Then, opts...)[0])
	if err != nil {
		return nil, err
	}
	out := &etcdop.KVResponse{Results: []etcdop.KVResult{{}}}
	switch {
	case resp.Get() != nil:
		g := resp.Get()
		out.Revision, out.Member, out.Results[0].KVs = g.Header.Revision, member(g.Header), kvs(g.Kvs)
	case resp.Put() != nil:
		p := resp.Put()
		out.Revision, out.Member = p.Header.Revision, member(p.Header)
	case resp.Del() != nil:
		d := resp.Del()
		out.Revision, out.Member, out.Results[0].Deleted = d.Header.Revision, member(d.Header), d.Deleted
	default:
		return nil, fmt.Errorf("etcd answered %s with nothing", f)
	}
	return out, nil
}

// ops are the client's operations for a transaction's; ranges get
// rangeOpts too.
func ops(in []etcdop.KVOp, rangeOpts ...clientv3.OpOption) []clientv3.Op {
	out := make([]clientv3.Op, len(in))
	for i, op := range in {
		var opts []clientv3.OpOption
		if op.End != "" {
			opts = append(opts, clientv3.WithRange(op.End))
		}
		switch op.F {
		case etcdop.FRange:
			out[i] = clientv3.OpGet(op.Key, append(opts, rangeOpts...)...)
		case etcdop.FDelete:
			out[i] = clientv3.OpDelete(op.Key, opts...)
		default:
			if op.Lease != 0 {
				opts = append(opts, clientv3.WithLease(clientv3.LeaseID(op.Lease)))
			}
			out[i] = clientv3.OpPut(op.Key, etcdop.Wire(op.Value), opts...)
		}
	}
	return out
}

func compare(c etcdop.KVCompare) clientv3.Cmp {
	op := cmp.Or(c.Op, etcdop.CompareEqual)
	var out clientv3.Cmp
	switch c.Target {
	case etcdop.CompareValue:
		out = clientv3.Compare(clientv3.Value(c.Key), op, etcdop.Wire(c.Value))
	case etcdop.CompareMod:
		out = clientv3.Compare(clientv3.ModRevision(c.Key), op, c.Rev)
	case etcdop.CompareCreate:
		out = clientv3.Compare(clientv3.CreateRevision(c.Key), op, c.Rev)
	default:
		out = clientv3.Compare(clientv3.Version(c.Key), op, c.Rev)
	}
	if c.End != "" {
		out = out.WithRange(c.End)
	}
	return out
}

// result is one operation's answer within a transaction.
func result(r *etcdserverpb.ResponseOp) etcdop.KVResult {
	switch {
	case r.GetResponseRange() != nil:
		return etcdop.KVResult{KVs: kvs(r.GetResponseRange().Kvs)}
	case r.GetResponseDeleteRange() != nil:
		return etcdop.KVResult{Deleted: r.GetResponseDeleteRange().Deleted}
	}
	return etcdop.KVResult{}
}

func kvs(in []*mvccpb.KeyValue) []etcdop.KV {
	var out []etcdop.KV
	for _, kv := range in {
		out = append(out, etcdop.KV{Key: string(kv.Key), Value: etcdop.Recorded(string(kv.Value)), Create: kv.CreateRevision, Mod: kv.ModRevision, Version: kv.Version, Lease: kv.Lease})
	}
	return out
}

// member names the member that answered, as etcd's member IDs are written.
func member(h *etcdserverpb.ResponseHeader) string {
	if h == nil {
		return ""
	}
	return fmt.Sprintf("%x", h.MemberId)
}
