// Package zkwatch is the ZooKeeper watch workload: writers set a few
// znodes to values unique to each write, and each client's watcher holds a
// one-shot data watch on every znode, reads them plainly meanwhile, and
// records every event as it comes, for the zookeeper-watch checker
// (ZooKeeper's watch guarantees).
package zkwatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/traffic"
	"github.com/chaos-testing/chaos/workloads/zkclient"
)

func init() { workloads.Workloads.Register("zookeeper-watch", Workload{}) }

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
)

// kinds: the writers' one kind of operation.
var kinds = []traffic.Kind{{Name: history.FZKSet, Weight: 1}}

// Workload is the ZooKeeper watch workload.
type Workload struct{}

// Params are the workload's own fields.
type Params struct {
	// Spec is the writers' pace (their mix has one kind, zk-set).
	traffic.Spec `yaml:",inline"`
	// Keys is how many znodes the clients share.
	Keys int `yaml:"keys" json:"keys"`
}

// NewParams makes Workload a plans.Parameterized.
func (Workload) NewParams() any { return &Params{} }

// CheckPlan checks the znodes and the pace.
func (Workload) CheckPlan(p *plans.Plan) error {
	ps := p.Workload.Spec.(*Params)
	if err := p.Count("workload.keys", &ps.Keys, 3, 1, 100); err != nil {
		return err
	}
	return ps.Spec.Check(p, kinds)
}

// Needs is time for the write in flight and for the watchers to settle.
func (Workload) Needs(plans.Workload) workloads.Needs {
	return workloads.Needs{Finish: opTimeout + settle + opTimeout}
}

// Checkers judge the watches by ZooKeeper's guarantees.
func (Workload) Checkers() []string { return []string{"zookeeper-watch"} }

// Target is ZooKeeper.
func (Workload) Target() string { return "zookeeper" }

// Libraries are the ZooKeeper client.
func (Workload) Libraries() []string { return []string{zkclient.Module} }

func path(key string) string { return root + "/" + key }

// Run creates the znodes if need be, then runs the writers and a watcher
// (the last worker) until ctx ends.
func (Workload) Run(ctx context.Context, cfg workloads.Config, h *history.Appender) error {
	arrivals := &arrivals{latest: map[string]int64{}}
	conn, err := zkclient.ConnectWatching(cfg.Node(), sessionTimeout, arrivals.note)
	if err != nil {
		return fmt.Errorf("zookeeper-watch: %w", err)
	}
	defer conn.Close()
	ps := cfg.Workload.Spec.(*Params)
	keys := make([]string, ps.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("z%d", i)
	}
	if err := create(ctx, conn, keys); err != nil {
		return fmt.Errorf("zookeeper-watch: %s: %w", cfg.Node(), err)
	}
	return workloads.Workers(ctx, cfg, h, ps.Concurrency+1, func(ctx context.Context, process int, h *history.Appender) error {
		rng := plans.Rand(cfg.Seed, plans.ClientStream(process))
		if process >= cfg.Process+ps.Concurrency*cfg.Workload.Clients {
			return (&watcher{conn: conn, h: h, rng: rng, keys: keys, arrivals: arrivals,
				watches: map[string]<-chan zk.Event{}, arrived: map[string]zk.Event{}}).run(ctx)
		}
		gen := ps.Generator(kinds, rng)
		for n := 1; ; n++ {
			if _, ok := gen.Next(ctx); !ok {
				return nil
			}
			if err := set(conn, h, keys[rng.IntN(len(keys))], fmt.Sprintf("p%d-%d", process, n)); err != nil {
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

func set(conn *zk.Conn, h *history.Appender, key, value string) error {
	_, err := workloads.Record(context.Background(), h, workloads.Op[*zk.Stat]{
		F: history.FZKSet, Value: history.ZKValue{Key: key, Value: value}, Timeout: opTimeout,
		Call: func(ctx context.Context) (*zk.Stat, error) {
			if err := zkclient.Session(ctx, conn); err != nil {
				return nil, err
			}
			st, err := zkclient.Call(ctx, func() (*zk.Stat, error) { return conn.Set(path(key), []byte(value), -1) })
			return st, zkclient.Classify(err)
		},
		Completion: func(st *zk.Stat, err error) any {
			if err != nil {
				return history.ZKValue{Key: key, Value: value}
			}
			return history.ZKValue{Key: key, Value: value, Version: st.Version, Zxid: st.Mzxid}
		},
	})
	return err
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
	f, v := history.FZKEvent, history.ZKValue{Key: key, Event: ev.Type.String()}
	if ev.Type == zk.EventNotWatching {
		f = history.FZKLost // the session expired: the watch is gone
	} else {
		v.Seq, v.Conn = w.arrivals.of(path(key)), w.arrivals.connection()
	}
	_, err := workloads.Record(context.Background(), w.h, workloads.Op[struct{}]{F: f, Value: v, Timeout: opTimeout, ReadOnly: true,
		Call: func(context.Context) (struct{}, error) { return struct{}{}, nil }})
	return err
}

// watch reads key and leaves a data watch on it.
func (w *watcher) watch(key string) error {
	type got struct {
		data []byte
		st   *zk.Stat
		ch   <-chan zk.Event
	}
	d, err := workloads.Record(context.Background(), w.h, workloads.Op[got]{
		F: history.FZKWatch, Value: history.ZKValue{Key: key}, Timeout: opTimeout, ReadOnly: true,
		Call: func(ctx context.Context) (got, error) {
			if err := zkclient.Session(ctx, w.conn); err != nil {
				return got{}, err
			}
			return zkclient.Call(ctx, func() (got, error) {
				data, st, ch, err := w.conn.GetW(path(key))
				return got{data, st, ch}, err
			})
		},
		Completion: func(g got, err error) any {
			if err != nil {
				return history.ZKValue{Key: key}
			}
			return history.ZKValue{Key: key, Value: string(g.data), Version: g.st.Version, Zxid: g.st.Mzxid, Conn: w.arrivals.connection()}
		},
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
	type got struct {
		data []byte
		st   *zk.Stat
		seen bool
	}
	_, err := workloads.Record(context.Background(), w.h, workloads.Op[got]{
		F: history.FZKRead, Value: history.ZKValue{Key: key}, Timeout: opTimeout, ReadOnly: true,
		Call: func(ctx context.Context) (got, error) {
			if err := zkclient.Session(ctx, w.conn); err != nil {
				return got{}, err
			}
			g, err := zkclient.Call(ctx, func() (got, error) {
				data, st, err := w.conn.Get(path(key))
				return got{data: data, st: st}, err
			})
			if err == nil {
				_, g.seen = w.take(key)
			}
			return g, err
		},
		Completion: func(g got, err error) any {
			if err != nil {
				return history.ZKValue{Key: key}
			}
			return history.ZKValue{Key: key, Value: string(g.data), Version: g.st.Version, Zxid: g.st.Mzxid, EventSeen: g.seen, Conn: w.arrivals.connection()}
		},
	})
	return err
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
