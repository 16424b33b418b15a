package register

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
)

func init() {
	register("etcd-register", Workload{Backend: workloads.Backend{TargetKind: "etcd", Modules: []string{etcdclient.Module}}, ReadModes: []string{"linearizable", "serializable"}, Open: openEtcd})
}

// etcdStore is a register on etcd keys, values as decimal strings.
type etcdStore struct {
	cli  *clientv3.Client
	read []clientv3.OpOption // how Read reads: linearizable or serializable
}

func openEtcd(_ context.Context, cfg Client) (Store, error) {
	var read []clientv3.OpOption
	switch cfg.Params.ReadMode {
	case "", "linearizable":
	case "serializable":
		// Served from the member's local state: may be stale, which is
		// what a plan choosing it wants the checker to catch.
		read = append(read, clientv3.WithSerializable())
	default:
		return nil, fmt.Errorf("etcd-register: read_mode %q: want linearizable or serializable", cfg.Params.ReadMode)
	}
	cli, err := etcdclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("etcd-register: %w", err)
	}
	return &etcdStore{cli: cli, read: read}, nil
}

func (s *etcdStore) Read(ctx context.Context, key string) (*int64, error) {
	resp, err := s.cli.Get(ctx, key, s.read...)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	v, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	if err != nil {
		return nil, BadValue{Raw: string(resp.Kvs[0].Value)}
	}
	return &v, nil
}

func (s *etcdStore) Write(ctx context.Context, key string, v int64) error {
	if err := etcdclient.Connected(ctx, s.cli); err != nil {
		return err
	}
	_, err := s.cli.Put(ctx, key, strconv.FormatInt(v, 10))
	return etcdclient.Classify(err)
}

func (s *etcdStore) Cas(ctx context.Context, key string, from, to int64) error {
	if err := etcdclient.Connected(ctx, s.cli); err != nil {
		return err
	}
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(key), "=", strconv.FormatInt(from, 10))).
		Then(clientv3.OpPut(key, strconv.FormatInt(to, 10))).
		Commit()
	if err != nil {
		return etcdclient.Classify(err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: %s is not %d", workloads.ErrNotApplied, key, from)
	}
	return nil
}

func (s *etcdStore) Close() error { return s.cli.Close() }
