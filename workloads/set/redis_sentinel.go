package set

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/targets/redis"
	"github.com/chaos-testing/chaos/workloads"
)

func init() {
	workloads.Workloads.Register("redis-sentinel-set", Workload{TargetKind: "redis-sentinel", Open: openSentinel, Modules: []string{redis.ClientModule}, Also: []string{"primaries"}})
}

// key is the set the clients add to.
const key = "chaos:set"

// sentinelStore is go-redis's Sentinel-aware client, as applications use
// it: it asks the sentinels for the primary, follows their +switch-master
// announcements, and sends every command to the primary it was told of.
type sentinelStore struct {
	c *goredis.Client

	mu sync.Mutex
	// node is the server the client last connected to. With one
	// connection in the pool, that is the one that answered.
	node string
}

func openSentinel(_ context.Context, cfg workloads.Config) (Store, error) {
	if len(cfg.Nodes) == 0 {
		return nil, errors.New("redis-sentinel-set: no sentinel address given")
	}
	s := &sentinelStore{}
	dialer := &net.Dialer{Timeout: opTimeout}
	s.c = goredis.NewFailoverClient(&goredis.FailoverOptions{
		MasterName:    redis.MasterName,
		SentinelAddrs: cfg.Nodes,
		// The dialer connects to the sentinels too; a server is told apart
		// by its port.
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if host, port, _ := net.SplitHostPort(addr); err == nil && port == strconv.Itoa(redis.Port) {
				s.mu.Lock()
				s.node = host
				s.mu.Unlock()
			}
			return conn, err
		},
		PoolSize: 1,
		// A retry would hide the failure of the first attempt.
		MaxRetries:  -1,
		DialTimeout: opTimeout, ReadTimeout: opTimeout, WriteTimeout: opTimeout,
	})
	return s, nil
}

func (s *sentinelStore) answered() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.node
}

func (s *sentinelStore) Add(ctx context.Context, v int64) (string, error) {
	err := s.c.SAdd(ctx, key, v).Err()
	return s.answered(), classify(err)
}

func (s *sentinelStore) Read(ctx context.Context) (Snapshot, error) {
	members, err := s.c.SMembers(ctx, key).Result()
	if err != nil {
		return Snapshot{Node: s.answered()}, err
	}
	vs := make([]int64, 0, len(members))
	for _, m := range members {
		v, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			return Snapshot{Node: s.answered()}, fmt.Errorf("set member %q is not a number", m)
		}
		vs = append(vs, v)
	}
	return Snapshot{Values: vs, Node: s.answered()}, nil
}

func (s *sentinelStore) Close() error { return s.c.Close() }

// classify marks the errors after which an add certainly did not happen:
// a replica's READONLY refusal, and a connection that was never made.
func classify(err error) error {
	var op *net.OpError
	switch {
	case err == nil:
		return nil
	case strings.HasPrefix(err.Error(), "READONLY"):
		return fmt.Errorf("%w: %w", workloads.ErrNotApplied, err)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w: %w", workloads.ErrNotApplied, err)
	}
	return err
}
