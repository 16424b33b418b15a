package txn

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/targets/redis"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/redisclient"
)

func init() {
	Register("redis-sentinel", Workload{Backend: workloads.Backend{TargetKind: "redis-sentinel", Modules: []string{redis.ClientModule}}, ReadModes: []string{"primary"}, Open: openSentinel})
}

// sentinelStore runs transactions on the primary the sentinels name, each
// one MULTI ... EXEC of the transaction's steps in order, which the
// primary runs with nothing in between: LRANGE and RPUSH for list-append,
// GET and SET for rw-register. Redis's replication is asynchronous, so
// what a primary acknowledged before a failover may be gone after it.
type sentinelStore struct {
	c        *redisclient.Sentinel
	register bool
}

func openSentinel(_ context.Context, cfg workloads.Config, m Model) (Store, error) {
	c, err := redisclient.NewSentinel(cfg.Nodes, opTimeout)
	if err != nil {
		return nil, fmt.Errorf("redis-sentinel: %w", err)
	}
	return &sentinelStore{c: c, register: m == RWRegister}, nil
}

func (s *sentinelStore) Txn(ctx context.Context, steps []Step) error {
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
		steps[i].List = []int64{}
		for _, e := range elems {
			v, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return fmt.Errorf("key %s holds %q, not a number", steps[i].Key, e)
			}
			steps[i].List = append(steps[i].List, v)
		}
	}
	return nil
}

func (s *sentinelStore) Close() error { return s.c.Close() }

// key is the Redis key of a list or register.
func key(k string) string { return "chaos:" + k }
