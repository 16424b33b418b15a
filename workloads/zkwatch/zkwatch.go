// Package zkwatch is the ZooKeeper watch workload: writers set a few
// znodes to values unique to each write and create and delete children of
// one directory znode, and each client's watcher holds a one-shot data
// watch on every znode and a child watch on the directory, reads them
// plainly meanwhile, and records every event as it comes, for the
// zookeeper-watch checker (ZooKeeper's watch guarantees).
package zkwatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	watchcheck "github.com/chaos-testing/chaos/analysis/zkwatch"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/zkop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
	"github.com/chaos-testing/chaos/workloads/zkclient"
)

func init() { workloads.Register[Params]("zookeeper-watch", Workload{}) }

const (
	// opTimeout bounds one request; a longer silence is an unknown outcome.
	opTimeout = 2 * time.Second
	// sessionTimeout is asked of the server, as the register workload does.
	sessionTimeout = 4 * time.Second
	// settle is how long a watcher waits, once the run is over and the
	// writers have stopped, for the events still owed to it.
	settle = 5 * time.Second
	// readEvery spaces a watcher's plain reads.
	readEvery = 20 * time.Millisecond
	root      = "/chaos-watch"
	// dir is the key of the directory znode whose children the writers
	// create and delete.
	dir = "kids"
)

// kinds: the writers' kinds of operation, by name in a plan's mix.
var kinds = []traffic.Kind{{Name: zkop.FSet, Weight: 2}, {Name: zkop.FCreate, Weight: 1}, {Name: zkop.FDelete, Weight: 1}}

// Workload is the ZooKeeper watch workload.
type Workload struct{}

// Params are the workload's own fields.
type Params struct {
	// Spec is the writers' mix and pace.
	traffic.Spec `yaml:",inline"`
	// Keys is how many znodes the clients share, beside the directory.
	Keys int `yaml:"keys" json:"keys"`
}

// Check checks the znodes and the pace.
func (Workload) Check(ps *Params, _ workloads.Setting) error {
	if err := plans.Count("keys", &ps.Keys, 3, 1, 100); err != nil {
		return err
	}
	return ps.Spec.Check(kinds)
}

// Needs is time for the write in flight and for the watchers to settle.
func (Workload) Needs(Params) workloads.Needs {
	return workloads.Needs{Finish: opTimeout + settle + opTimeout}
}

// Checkers judge the watches by ZooKeeper's guarantees.
func (Workload) Checkers() []analysis.Checker { return []analysis.Checker{watchcheck.Checker{}} }

// Target is ZooKeeper.
func (Workload) Target() string { return "zookeeper" }

// Libraries are the ZooKeeper client.
func (Workload) Libraries() []string { return []string{zkclient.Module} }

func path(key string) string { return root + "/" + key }

// Run creates the znodes if need be, then runs the writers and a watcher
// (the last worker) until ctx ends.
func (Workload) Run(ctx context.Context, cfg workloads.Client[Params], h *history.Appender) error {
	arrivals := &arrivals{latest: map[string]int64{}}
	conn, err := zkclient.ConnectWatching(cfg.Node(), sessionTimeout, arrivals.note)
	if err != nil {
		return fmt.Errorf("zookeeper-watch: %w", err)
	}
	defer conn.Close()
	ps := cfg.Params
	keys := make([]string, ps.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("z%d", i)
	}
	if err := create(ctx, conn, append(keys, dir)); err != nil {
		return fmt.Errorf("zookeeper-watch: %s: %w", cfg.Node(), err)
	}
	return workloads.Workers(ctx, cfg.Config, h, ps.Concurrency+1, func(ctx context.Context, process int, h *history.Appender) error {
		rng := plans.Rand(cfg.Seed, plans.ClientStream(process))
		if process >= cfg.Process+ps.Concurrency*cfg.Clients {
			return (&watcher{conn: conn, h: h, rng: rng, keys: append(keys, dir), arrivals: arrivals,
				watches: map[string]<-chan zk.Event{}, arrived: map[string]zk.Event{}}).run(ctx)
		}
		gen := ps.Generator(kinds, rng)
		wr := &writer{conn: conn, h: h, rng: rng, keys: keys}
		for n := 1; ; n++ {
			kind, ok := gen.Next(ctx)
			if !ok {
				return nil
			}
			if err := wr.do(kind, fmt.Sprintf("p%d-%d", process, n)); err != nil {
				return err
			}
		}
	})
}

// create makes the root and the znodes, whichever client gets there first;
// it is set-up, not part of the history.
func create(ctx context.Context, conn *zk.Conn, keys []string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, p := range append([]string{root}, keys...) {
		if p != root {
			p = path(p)
		}
		for {
			_, err := zkclient.Call(ctx, func() (string, error) { return conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)) })
			if err == nil || errors.Is(err, zk.ErrNodeExists) {
				break
			}
			if ctx.Err() != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// writer is one writer worker, with the children of the directory it has
// created (or may have) and not deleted.
type writer struct {
	conn     *zk.Conn
	h        *history.Appender
	rng      *rand.Rand
	keys     []string
	children []string
}

// do sends one write of kind; value is unique to it.
func (w *writer) do(kind, value string) error {
	switch {
	case kind == zkop.FSet:
		key := w.keys[w.rng.IntN(len(w.keys))]
		_, err := w.send(kind, key, value, func() (*zk.Stat, error) { return w.conn.Set(path(key), []byte(value), -1) })
		return err
	case kind == zkop.FDelete && len(w.children) > 0:
		i := w.rng.IntN(len(w.children))
		child := w.children[i]
		w.children = slices.Delete(w.children, i, i+1)
		_, err := w.send(kind, dir, child, func() (*zk.Stat, error) { return nil, w.conn.Delete(path(dir)+"/"+child, -1) })
		return err
	}
	// A create, or a delete with no child to delete.
	d, err := w.send(zkop.FCreate, dir, value, func() (*zk.Stat, error) {
		_, err := w.conn.Create(path(dir)+"/"+value, nil, 0, zk.WorldACL(zk.PermAll))
		return nil, err
	})
	if d != history.Fail {
		w.children = append(w.children, value)
	}
	return err
}

// send records one write; the completion has the znode's new version when
// the answer gives one (setData's does).
func (w *writer) send(f, key, value string, call func() (*zk.Stat, error)) (history.Type, error) {
	d, err := workloads.Record(context.Background(), w.h, workloads.Op[*zk.Stat]{
		F: f, Value: zkop.Value{Key: key, Value: value}, Timeout: opTimeout,
		Call: func(ctx context.Context) (*zk.Stat, error) {
			if err := zkclient.Session(ctx, w.conn); err != nil {
				return nil, err
			}
			st, err := zkclient.Call(ctx, call)
			return st, zkclient.Classify(err)
		},
		Completion: func(st *zk.Stat, err error) any {
			if err != nil || st == nil {
				return zkop.Value{Key: key, Value: value}
			}
			return zkop.Value{Key: key, Value: value, Version: st.Version, Zxid: st.Mzxid}
		},
	})
	return d.Type, err
}

// arrivals numbers the watch events of a session in the order they came
// off the connection: the zk client calls note for each before it hands
// the event to its watches' channels, and before any answer that came
// after it. A watcher that polls several channels cannot tell that order.
type arrivals struct {
	mu     sync.Mutex
	n      int64
	conn   int64            // connections so far
	latest map[string]int64 // by znode, the number of its latest event
}

func (a *arrivals) note(ev zk.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ev.Type == zk.EventSession {
		if ev.State == zk.StateHasSession {
			a.conn++
		}
		return
	}
	if ev.Path == "" {
		return
	}
	a.n++
	a.latest[ev.Path] = a.n
}

// connection is the number of the session's current connection.
func (a *arrivals) connection() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conn
}

// of is the number of the znode's latest event: the one its watch just
// delivered, since a znode has one watch at a time. (A getData that timed
// out here may still have left a watch, whose event reaches no one: a
// queue of numbers per znode would fall behind by one for good.) 0 if
// none came through note.
func (a *arrivals) of(p string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.latest[p]
}

// watcher holds a data watch on every znode.
type watcher struct {
	conn     *zk.Conn
	arrivals *arrivals
	h        *history.Appender
	rng      *rand.Rand
	keys     []string
	watches  map[string]<-chan zk.Event // the live watch of each znode
	arrived  map[string]zk.Event        // events taken from a channel, not yet recorded
}

func (w *watcher) run(ctx context.Context) error {
	tick := time.NewTicker(readEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		if err := w.round(true); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	// The writers have stopped: the events owed arrive now, or never.
	end := time.Now().Add(settle)
	for time.Now().Before(end) {
		if err := w.round(false); err != nil {
			return err
		}
		time.Sleep(readEvery)
	}
	return nil
}

// round records the events that came, sets the watches missing, and (if
// read) reads one watched znode plainly.
func (w *watcher) round(read bool) error {
	for _, key := range w.keys {
		if ev, ok := w.take(key); ok {
			delete(w.arrived, key)
			if err := w.event(key, ev); err != nil {
				return err
			}
		}
		if _, ok := w.watches[key]; !ok {
			if err := w.watch(key); err != nil {
				return err
			}
		}
	}
	if !read {
		return nil
	}
	return w.read(w.keys[w.rng.IntN(len(w.keys))])
}

func (w *watcher) event(key string, ev zk.Event) error {
	f, v := zkop.FEvent, zkop.Value{Key: key, Event: ev.Type.String()}
	if ev.Type == zk.EventNotWatching {
		f = zkop.FLost // the session expired: the watch is gone
	} else {
		v.Seq, v.Conn = w.arrivals.of(path(key)), w.arrivals.connection()
	}
	_, err := workloads.Record(context.Background(), w.h, workloads.Op[struct{}]{F: f, Value: v, Timeout: opTimeout, ReadOnly: true,
		Call: func(context.Context) (struct{}, error) { return struct{}{}, nil }})
	return err
}

// snapshot is what a read of a key returned: a znode's data, version and
// mzxid, or the directory's cversion and pzxid; and the watch it left, if
// asked to.
type snapshot struct {
	value   string
	version int32
	zxid    int64
	ch      <-chan zk.Event
}

// fetch reads key, a znode's data or the directory's children, leaving a
// watch of the matching kind when asked.
func (w *watcher) fetch(key string, watch bool) (snapshot, error) {
	p := path(key)
	var (
		data []byte
		st   *zk.Stat
		ch   <-chan zk.Event
		err  error
	)
	switch {
	case key == dir && watch:
		_, st, ch, err = w.conn.ChildrenW(p)
	case key == dir:
		_, st, err = w.conn.Children(p)
	case watch:
		data, st, ch, err = w.conn.GetW(p)
	default:
		data, st, err = w.conn.Get(p)
	}
	if err != nil {
		return snapshot{}, err
	}
	if key == dir {
		return snapshot{version: st.Cversion, zxid: st.Pzxid, ch: ch}, nil
	}
	return snapshot{value: string(data), version: st.Version, zxid: st.Mzxid, ch: ch}, nil
}

// names are the operation names of a watch and of a plain read of key.
func names(key string) (watch, read string) {
	if key == dir {
		return zkop.FChildWatch, zkop.FChildRead
	}
	return zkop.FWatch, zkop.FRead
}

// watch reads key and leaves a watch on it.
func (w *watcher) watch(key string) error {
	f, _ := names(key)
	d, err := workloads.Record(context.Background(), w.h, workloads.Op[snapshot]{
		F: f, Value: zkop.Value{Key: key}, Timeout: opTimeout, ReadOnly: true,
		Call: func(ctx context.Context) (snapshot, error) {
			if err := zkclient.Session(ctx, w.conn); err != nil {
				return snapshot{}, err
			}
			return zkclient.Call(ctx, func() (snapshot, error) { return w.fetch(key, true) })
		},
		Completion: func(g snapshot, err error) any { return w.value(key, g, false, err) },
	})
	if d.Type == history.Ok {
		w.watches[key] = d.Result.ch
	}
	return err
}

// read reads key without a watch and notes whether the watch event of key
// had come when the answer did: ZooKeeper sends it before any answer that
// shows the change.
func (w *watcher) read(key string) error {
	_, f := names(key)
	seen := false
	_, err := workloads.Record(context.Background(), w.h, workloads.Op[snapshot]{
		F: f, Value: zkop.Value{Key: key}, Timeout: opTimeout, ReadOnly: true,
		Call: func(ctx context.Context) (snapshot, error) {
			if err := zkclient.Session(ctx, w.conn); err != nil {
				return snapshot{}, err
			}
			g, err := zkclient.Call(ctx, func() (snapshot, error) { return w.fetch(key, false) })
			if err == nil {
				_, seen = w.take(key)
			}
			return g, err
		},
		Completion: func(g snapshot, err error) any { return w.value(key, g, seen, err) },
	})
	return err
}

// value is the completion of a watch or read of key.
func (w *watcher) value(key string, g snapshot, seen bool, err error) zkop.Value {
	if err != nil {
		return zkop.Value{Key: key}
	}
	return zkop.Value{Key: key, Value: g.value, Version: g.version, Zxid: g.zxid, EventSeen: seen,
		Conn: w.arrivals.connection(), Session: w.conn.SessionID()}
}

// take moves key's event, if it has come, from its watch to arrived (the
// watch has fired: the client closes its channel after the one event),
// and returns the event arrived and not yet recorded, if any.
func (w *watcher) take(key string) (zk.Event, bool) {
	if ch, ok := w.watches[key]; ok {
		select {
		case ev := <-ch:
			w.arrived[key] = ev
			delete(w.watches, key)
		default:
		}
	}
	ev, ok := w.arrived[key]
	return ev, ok
}
