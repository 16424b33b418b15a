package txn

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/zkclient"
)

func init() {
	Register("zookeeper", Workload{Backend: workloads.Backend{TargetKind: "zookeeper", Modules: []string{zkclient.Module}}, ReadModes: []string{"checked"}, Open: openZooKeeper})
}

// zkRoot is the parent of every key's znode.
const zkRoot = "/txn"

// zkStore runs transactions on ZooKeeper: getData of every key of the
// transaction on the bound server (which may be stale), then one multi
// that sets each written key's znode at the version read and
// checks every other key's version, so that the server refuses the whole
// transaction if any key changed since it was read. A multi is ordered
// by the leader with every other write and committed by a quorum, so a
// transaction that commits read what its keys held at that point.
type zkStore struct {
	conn *zk.Conn
	// made are the keys whose znodes this client knows exist.
	made map[string]bool
}

func openZooKeeper(_ context.Context, cfg Client, _ Model) (Store, error) {
	conn, err := zkclient.Open(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	return &zkStore{conn: conn, made: map[string]bool{}}, nil
}

func (s *zkStore) Txn(ctx context.Context, steps []Step) error {
	if err := zkclient.Session(ctx, s.conn); err != nil {
		return err
	}
	keys := Keys(steps)
	state := map[string][]int64{}
	versions := map[string]int32{}
	for _, k := range keys {
		if err := s.make(ctx, k); err != nil {
			return fmt.Errorf("%w: creating %s: %w", workloads.ErrNotApplied, k, err)
		}
		r, err := zkclient.Call(ctx, func() (getResult, error) {
			data, stat, err := s.conn.Get(zkPath(k))
			return getResult{data, stat}, err
		})
		if err != nil {
			return fmt.Errorf("%w: reading %s: %w", workloads.ErrNotApplied, k, err)
		}
		if state[k], err = DecodeList(r.data); err != nil {
			return err
		}
		versions[k] = r.stat.Version
	}
	written := Apply(steps, state)
	var ops []any
	for _, k := range keys {
		if l, ok := written[k]; ok {
			ops = append(ops, &zk.SetDataRequest{Path: zkPath(k), Data: []byte(EncodeList(l)), Version: versions[k]})
		} else {
			ops = append(ops, &zk.CheckVersionRequest{Path: zkPath(k), Version: versions[k]})
		}
	}
	_, err := zkclient.Call(ctx, func() ([]zk.MultiResponse, error) { return s.conn.Multi(ops...) })
	if errors.Is(err, zk.ErrBadVersion) {
		return fmt.Errorf("%w: a key changed since the transaction read it", workloads.ErrNotApplied)
	}
	return zkclient.Classify(err)
}

// make creates key's znode, empty (the empty list, a register never
// written), unless it exists: every key then has a version to check,
// read or written. An empty znode is what an absent key reads as, so
// making it changes no value.
func (s *zkStore) make(ctx context.Context, key string) error {
	if s.made[key] {
		return nil
	}
	for _, p := range []string{zkRoot, zkPath(key)} {
		_, err := zkclient.Call(ctx, func() (string, error) { return s.conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)) })
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	s.made[key] = true
	return nil
}

func (s *zkStore) Close() error {
	s.conn.Close()
	return nil
}

// getResult is getData's answer.
type getResult struct {
	data []byte
	stat *zk.Stat
}

func zkPath(key string) string { return zkRoot + "/" + key }
