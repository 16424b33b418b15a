package txn

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/targets/redis"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/redisclient"
)

func init() {
	workloads.Workloads.Register("redis-sentinel-list-append", Workload{Backend: workloads.Backend{TargetKind: "redis-sentinel", Modules: []string{redis.ClientModule}}, ReadModes: []string{"primary"}, Open: openSentinel})
}

// sentinelStore runs list-append transactions on the primary the
// sentinels name, each one MULTI ... EXEC: LRANGE for a read, RPUSH for
// an append, in the transaction's order, which the primary runs with
// nothing in between. Redis's replication is asynchronous, so what a
// primary acknowledged before a failover may be gone after it.
type sentinelStore struct{ c *redisclient.Sentinel }

func openSentinel(_ context.Context, cfg workloads.Config) (Store, error) {
	c, err := redisclient.NewSentinel(cfg.Nodes, opTimeout)
	if err != nil {
		return nil, fmt.Errorf("redis-sentinel-list-append: %w", err)
	}
	return &sentinelStore{c}, nil
}

func (s *sentinelStore) Txn(ctx context.Context, steps []Step) error {
	reads := make([]*goredis.StringSliceCmd, len(steps))
	_, err := s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		for i, st := range steps {
			if st.F == FRead {
				reads[i] = p.LRange(ctx, key(st.Key), 0, -1)
			} else {
				p.RPush(ctx, key(st.Key), st.Value)
			}
		}
		return nil
	})
	if err != nil {
		return redisclient.Classify(err)
	}
	for i, r := range reads {
		if r == nil {
			continue
		}
		steps[i].List = []int64{}
		for _, e := range r.Val() {
			v, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return fmt.Errorf("list %s holds %q, not a number", steps[i].Key, e)
			}
			steps[i].List = append(steps[i].List, v)
		}
	}
	return nil
}

func (s *sentinelStore) Close() error { return s.c.Close() }

// key is the Redis key of a list.
func key(k string) string { return "chaos:" + k }
