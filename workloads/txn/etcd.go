package txn

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
)

func init() {
	Register("etcd", Workload{Backend: workloads.Backend{TargetKind: "etcd", Modules: []string{etcdclient.Module}}, ReadModes: []string{"linearizable", "serializable"}, Open: openEtcd})
}

// etcdStore runs transactions on etcd, as Jepsen's etcd test does: one
// Txn reads every key of the transaction, at one revision; a second Txn
// writes the keys written (a list with its appends, or a register's
// value) if no key it read has changed since (its mod revision
// compared), else aborts. A read-only transaction is its first Txn alone.
type etcdStore struct {
	cli *clientv3.Client
	// serializable makes the reads serializable: served by the bound
	// member from its own state, which may be stale. Only the keys a
	// transaction writes are compared at commit, so its reads of other
	// keys may be stale, as a plan choosing this wants caught.
	serializable bool
}

func openEtcd(_ context.Context, cfg Client, _ Model) (Store, error) {
	cli, err := etcdclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return &etcdStore{cli: cli, serializable: cfg.Params.ReadMode == "serializable"}, nil
}

func (s *etcdStore) Txn(ctx context.Context, steps []Step) error {
	if err := etcdclient.Connected(ctx, s.cli); err != nil {
		return err
	}
	keys := Keys(steps)
	var gets []clientv3.Op
	for _, k := range keys {
		var opts []clientv3.OpOption
		if s.serializable {
			opts = append(opts, clientv3.WithSerializable())
		}
		gets = append(gets, clientv3.OpGet(k, opts...))
	}
	resp, err := s.cli.Txn(ctx).Then(gets...).Commit()
	if err != nil {
		if ReadOnly(steps) {
			return err
		}
		return fmt.Errorf("%w: reading before the commit: %w", workloads.ErrNotApplied, err)
	}
	state := map[string][]int64{}
	revs := map[string]int64{} // each key's mod revision, 0 for absent
	for i, r := range resp.Responses {
		kvs := r.GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue
		}
		if state[keys[i]], err = DecodeList(kvs[0].Value); err != nil {
			return err
		}
		revs[keys[i]] = kvs[0].ModRevision
	}
	written := Apply(steps, state)
	if len(written) == 0 {
		return nil
	}
	var cmps []clientv3.Cmp
	var puts []clientv3.Op
	for _, k := range keys {
		if _, wrote := written[k]; s.serializable && !wrote {
			continue
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", revs[k]))
	}
	for k, l := range written {
		puts = append(puts, clientv3.OpPut(k, EncodeList(l)))
	}
	commit, err := s.cli.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if err != nil {
		return etcdclient.Classify(err)
	}
	if !commit.Succeeded {
		return fmt.Errorf("%w: a key changed since the transaction read it", workloads.ErrNotApplied)
	}
	return nil
}

func (s *etcdStore) Close() error { return s.cli.Close() }
