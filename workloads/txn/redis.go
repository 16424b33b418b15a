package txn

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/redisclient"
)

func init() {
	Register("redis-sentinel", Workload{Backend: workloads.Backend{TargetKind: "redis-sentinel", Modules: []string{redisclient.Module}}, ReadModes: []string{"primary", "watch"}, Open: openSentinel})
}

// sentinelStore runs transactions on the primary the sentinels name. In
// read mode primary, each is one MULTI ... EXEC of the transaction's
// steps in order, which the primary runs with nothing in between: LRANGE
// and RPUSH for list-append, GET and SET for rw-register. In read mode
// watch, it is optimistic, as Redis's documentation shows: WATCH the
// keys, read them, then MULTI ... EXEC the writes, which the primary
// refuses if a watched key changed meanwhile. Redis's replication is
// asynchronous, so what a primary acknowledged before a failover may be
// gone after it.
type sentinelStore struct {
	c        *redisclient.Sentinel
	register bool
	watch    bool
}

func openSentinel(_ context.Context, cfg Client, m Model) (Store, error) {
	c, err := redisclient.NewSentinel(cfg.Nodes, cfg.Service, opTimeout)
	if err != nil {
		return nil, fmt.Errorf("redis-sentinel: %w", err)
	}
	return &sentinelStore{c: c, register: m == RWRegister, watch: cfg.Params.ReadMode == "watch"}, nil
}

func (s *sentinelStore) Txn(ctx context.Context, steps []Step) error {
	if s.watch {
		return s.optimistic(ctx, steps)
	}
	reads := make([]goredis.Cmder, len(steps))
	_, err := s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		for i, st := range steps {
			switch {
			case st.F == FRead && s.register:
				reads[i] = p.Get(ctx, key(st.Key))
			case st.F == FRead:
				reads[i] = p.LRange(ctx, key(st.Key), 0, -1)
			case s.register:
				p.Set(ctx, key(st.Key), st.Value, 0)
			default:
				p.RPush(ctx, key(st.Key), st.Value)
			}
		}
		return nil
	})
	// A GET of a key never set answers nil, which go-redis reports as
	// the pipeline's error: the transaction ran.
	if err != nil && !errors.Is(err, goredis.Nil) {
		return redisclient.Classify(err)
	}
	for i, r := range reads {
		var elems []string
		switch r := r.(type) {
		case nil:
			continue
		case *goredis.StringCmd:
			switch err := r.Err(); {
			case err == nil:
				elems = []string{r.Val()}
			case !errors.Is(err, goredis.Nil):
				return redisclient.Classify(err)
			}
		case *goredis.StringSliceCmd:
			elems = r.Val()
		}
		var err error
		if steps[i].List, err = parseElems(steps[i].Key, elems); err != nil {
			return err
		}
	}
	return nil
}

// optimistic runs a transaction under WATCH: it reads every key, works
// out the transaction's reads and writes from what it read (Apply), and
// commits the writes in MULTI ... EXEC, which fails, as a whole, if a
// watched key changed since the WATCH: the transaction then did nothing.
func (s *sentinelStore) optimistic(ctx context.Context, steps []Step) error {
	keys := Keys(steps)
	redisKeys := make([]string, len(keys))
	for i, k := range keys {
		redisKeys[i] = key(k)
	}
	err := s.c.Watch(ctx, func(tx *goredis.Tx) error {
		state := map[string][]int64{}
		for _, k := range keys {
			var elems []string
			var err error
			if s.register {
				var v string
				if v, err = tx.Get(ctx, key(k)).Result(); err == nil {
					elems = []string{v}
				}
			} else {
				elems, err = tx.LRange(ctx, key(k), 0, -1).Result()
			}
			if err != nil && !errors.Is(err, goredis.Nil) {
				return fmt.Errorf("%w: reading %s: %w", workloads.ErrNotApplied, k, err)
			}
			if state[k], err = parseElems(k, elems); err != nil {
				return err
			}
		}
		written := Apply(steps, state)
		_, err := tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			if len(written) == 0 {
				// A read-only transaction commits too, so that EXEC says
				// whether what it read one key at a time held together.
				p.Ping(ctx)
			}
			for _, k := range keys {
				l, ok := written[k]
				switch {
				case !ok:
				case s.register:
					p.Set(ctx, key(k), l[0], 0)
				default:
					for _, v := range l[len(state[k]):] {
						p.RPush(ctx, key(k), v)
					}
				}
			}
			return nil
		})
		return err
	}, redisKeys...)
	if errors.Is(err, goredis.TxFailedErr) {
		return fmt.Errorf("%w: a watched key changed since the transaction read it", workloads.ErrNotApplied)
	}
	return redisclient.Classify(err)
}

// parseElems reads a key's stored elements as numbers.
func parseElems(k string, elems []string) ([]int64, error) {
	l := []int64{}
	for _, e := range elems {
		v, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("key %s holds %q, not a number", k, e)
		}
		l = append(l, v)
	}
	return l, nil
}

func (s *sentinelStore) Close() error { return s.c.Close() }

// key is the Redis key of a list or register.
func key(k string) string { return "chaos:" + k }
