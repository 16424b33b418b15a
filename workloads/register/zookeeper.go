package register

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/zkclient"
)

func init() {
	register("zookeeper-register", Workload{Backend: workloads.Backend{TargetKind: "zookeeper", Modules: []string{zkclient.Module}}, ReadModes: []string{"sync", "plain", "checked"}, Open: openZooKeeper})
}

// zkRoot is the parent of every register's znode.
const zkRoot = "/chaos"

// zkStore is a register on znodes /chaos/<key>, values as decimal strings.
type zkStore struct {
	conn *zk.Conn
	// readMode is how Read reads:
	//   - plain: getData on the bound server, which may be stale, as
	//     ZooKeeper allows;
	//   - sync: sync, then getData; not linearizable either, since sync is
	//     not a quorum operation (ZOOKEEPER-1675);
	//   - checked: getData, then a multi holding only a check of the
	//     version read. A multi is a write: the leader orders it with every
	//     other write and a quorum commits it, so when the check passes the
	//     znode still had that version, hence that value, at a point
	//     between the read's start and its end: a linearizable read.
	readMode string
}

func openZooKeeper(_ context.Context, cfg Client) (Store, error) {
	switch cfg.Params.ReadMode {
	case "", "plain", "sync", "checked":
	default:
		return nil, fmt.Errorf("zookeeper-register: read_mode %q: want plain, sync or checked", cfg.Params.ReadMode)
	}
	conn, err := zkclient.Open(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("zookeeper-register: %w", err)
	}
	return &zkStore{conn: conn, readMode: cfg.Params.ReadMode}, nil
}

func (s *zkStore) Read(ctx context.Context, key string) (*int64, error) {
	if err := zkclient.Session(ctx, s.conn); err != nil {
		return nil, err
	}
	p := zkPath(key)
	if s.readMode == "sync" {
		// The bound server catches up with the leader before the read.
		if _, err := zkclient.Call(ctx, func() (string, error) { return s.conn.Sync(p) }); err != nil {
			return nil, fmt.Errorf("sync: %w", err)
		}
	}
	r, absent, err := s.getChecked(ctx, p)
	if err != nil {
		return nil, err
	}
	if absent {
		return nil, nil
	}
	v, err := strconv.ParseInt(string(r.data), 10, 64)
	if err != nil {
		return nil, BadValue{Raw: string(r.data)}
	}
	return &v, nil
}

// Write sets the znode, creating it (and its parent) on first use.
func (s *zkStore) Write(ctx context.Context, key string, v int64) error {
	if err := zkclient.Session(ctx, s.conn); err != nil {
		return err
	}
	p, data := zkPath(key), []byte(strconv.FormatInt(v, 10))
	for {
		_, err := zkclient.Call(ctx, func() (*zk.Stat, error) { return s.conn.Set(p, data, -1) })
		if !errors.Is(err, zk.ErrNoNode) {
			return zkclient.Classify(err)
		}
		_, err = zkclient.Call(ctx, func() (string, error) { return s.create(p, data) })
		if !errors.Is(err, zk.ErrNodeExists) {
			return zkclient.Classify(err)
		}
		// Another client created it between our set and create: set again.
		// Nothing deletes znodes, so this happens at most once.
	}
}

// Cas reads the znode's value and version, then sets it only at that
// version: a write in between makes the server refuse it.
func (s *zkStore) Cas(ctx context.Context, key string, from, to int64) error {
	if err := zkclient.Session(ctx, s.conn); err != nil {
		return err
	}
	p := zkPath(key)
	r, err := s.get(ctx, p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s does not exist", workloads.ErrNotApplied, p)
	case err != nil:
		// Nothing was written yet.
		return fmt.Errorf("%w: reading %s: %v", workloads.ErrNotApplied, p, err)
	}
	if string(r.data) != strconv.FormatInt(from, 10) {
		return fmt.Errorf("%w: %s is %q, not %d", workloads.ErrNotApplied, p, r.data, from)
	}
	_, err = zkclient.Call(ctx, func() (*zk.Stat, error) {
		return s.conn.Set(p, []byte(strconv.FormatInt(to, 10)), r.stat.Version)
	})
	return zkclient.Classify(err)
}

// checkedTries bounds how often a checked read reads again after a write
// changed the znode between its getData and its check: under contention
// most checks would otherwise fail, and a refused read checks nothing.
const checkedTries = 3

// getChecked is getData on p (a znode that does not exist is a register
// never written: absent), followed in read_mode checked by a check through
// a quorum that p is still as getData saw it. A read whose check never
// passes cannot be placed in time: it is refused, and constrains nothing.
func (s *zkStore) getChecked(ctx context.Context, p string) (r getResult, absent bool, err error) {
	for try := 1; ; try++ {
		r, err = s.get(ctx, p)
		if absent = errors.Is(err, zk.ErrNoNode); absent {
			err = nil
		}
		if err != nil || s.readMode != "checked" {
			return r, absent, err
		}
		err = s.check(ctx, p, r.stat, absent)
		if !errors.Is(err, errChanged) || try == checkedTries {
			return r, absent, err
		}
	}
}

// errChanged is a check that found the znode changed since getData.
var errChanged = fmt.Errorf("%w: changed between getData and its check", workloads.ErrNotApplied)

// check is a multi holding only a check that p is at stat's version, or
// absent (nothing deletes znodes, so a check that finds no node confirms
// an absent register).
func (s *zkStore) check(ctx context.Context, p string, stat *zk.Stat, absent bool) error {
	version := int32(-1) // any version: only the znode's absence is checked
	if !absent {
		version = stat.Version
	}
	_, err := zkclient.Call(ctx, func() ([]zk.MultiResponse, error) {
		return s.conn.Multi(&zk.CheckVersionRequest{Path: p, Version: version})
	})
	switch {
	case absent && errors.Is(err, zk.ErrNoNode), !absent && err == nil:
		return nil
	case absent && err == nil, errors.Is(err, zk.ErrBadVersion):
		return errChanged
	}
	return fmt.Errorf("check of version %d: %w", version, zkclient.Classify(err))
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

func (s *zkStore) get(ctx context.Context, p string) (getResult, error) {
	return zkclient.Call(ctx, func() (getResult, error) {
		data, stat, err := s.conn.Get(p)
		return getResult{data, stat}, err
	})
}

// create creates p, and zkRoot first if p's creation finds it missing.
func (s *zkStore) create(p string, data []byte) (string, error) {
	_, err := s.conn.Create(p, data, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrNoNode) {
		return p, err
	}
	if _, err := s.conn.Create(zkRoot, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return p, err
	}
	return s.conn.Create(p, data, 0, zk.WorldACL(zk.PermAll))
}

func zkPath(key string) string { return zkRoot + "/" + key }
