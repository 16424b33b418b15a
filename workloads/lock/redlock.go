package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/redisclient"
)

func init() {
	workloads.Register[Params]("redlock", Workload{Backend: workloads.Backend{TargetKind: "redis", Modules: []string{"github.com/go-redsync/redsync/v4", redisclient.Module}}, NewLocker: newRedlock})
}

// redlock is go-redsync's Redlock over the independent masters of a redis
// target: a lock is held when a majority of masters hold its key.
type redlock struct{ mutex *redsync.Mutex }

func newRedlock(_ context.Context, cfg Client) (Locker, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("redlock: no Redis masters given")
	}
	var pools []redis.Pool
	for _, addr := range cfg.Nodes {
		// Short timeouts: a paused master must cost an attempt a fraction
		// of the lease, as Redlock's design assumes.
		c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: 300 * time.Millisecond,
			ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, MaxRetries: -1})
		pools = append(pools, rsgoredis.NewPool(c))
	}
	m := redsync.New(pools...).NewMutex(Name, redsync.WithExpiry(cfg.Params.Lease.Duration))
	return &redlock{mutex: m}, nil
}

func (r *redlock) Acquire(ctx context.Context) (Held, error) {
	err := r.mutex.LockContext(ctx)
	var taken *redsync.ErrTaken
	if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
		return nil, fmt.Errorf("%w: %v", ErrNotAcquired, err)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Token is nil: Redlock hands out no fencing token.
func (r *redlock) Token() *int64 { return nil }

func (r *redlock) Release(ctx context.Context) error {
	ok, err := r.mutex.UnlockContext(ctx)
	if errors.Is(err, redsync.ErrLockAlreadyExpired) {
		return fmt.Errorf("%w: %v", ErrNotHeld, err)
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: a majority of masters did not release it", ErrNotHeld)
	}
	return nil
}
