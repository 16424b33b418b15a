package set

import (
	"context"
	"fmt"
	"strconv"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/primaries"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/redisclient"
)

func init() {
	workloads.Register[Params]("redis-sentinel-set", Workload{Backend: workloads.Backend{TargetKind: "redis-sentinel", Modules: []string{redisclient.Module}}, Open: openSentinel, Also: []analysis.Checker{primaries.Checker{}}})
}

// key is the set the clients add to.
const key = "chaos:set"

// sentinelStore adds to the set through go-redis's Sentinel client.
type sentinelStore struct{ c *redisclient.Sentinel }

func openSentinel(_ context.Context, cfg Client) (Store, error) {
	c, err := redisclient.NewSentinel(cfg.Nodes, cfg.Service, opTimeout)
	if err != nil {
		return nil, fmt.Errorf("redis-sentinel-set: %w", err)
	}
	return &sentinelStore{c}, nil
}

func (s *sentinelStore) Add(ctx context.Context, v int64) (Added, error) {
	err := s.c.SAdd(ctx, key, v).Err()
	return Added{Node: s.c.Answered()}, redisclient.Classify(err)
}

func (s *sentinelStore) Read(ctx context.Context) (Snapshot, error) {
	members, err := s.c.SMembers(ctx, key).Result()
	if err != nil {
		return Snapshot{Node: s.c.Answered()}, err
	}
	vs := make([]int64, 0, len(members))
	for _, m := range members {
		v, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			return Snapshot{Node: s.c.Answered()}, fmt.Errorf("set member %q is not a number", m)
		}
		vs = append(vs, v)
	}
	return Snapshot{Values: vs, Node: s.c.Answered()}, nil
}

func (s *sentinelStore) Close() error { return s.c.Close() }
