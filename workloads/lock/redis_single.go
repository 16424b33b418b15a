package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/redisclient"
)

func init() {
	workloads.Register[Params]("redis-single-lock", Workload{Backend: workloads.Backend{TargetKind: "redis", Modules: []string{redisclient.Module}}, NewLocker: newSingleLock})
}

// singleLock is the lock most Redis users write: SET key random NX PX lease
// on one instance, released by deleting the key only if it still holds our
// value. The random value guards the release; it is no fencing token, as
// nothing orders two values.
type singleLock struct {
	c     *goredis.Client
	lease time.Duration
	value string
}

// release deletes the key only if it is still ours.
var release = goredis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

func newSingleLock(_ context.Context, cfg Client) (Locker, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("redis-single-lock: no Redis node given")
	}
	// Every client uses the first node: the lock lives on one instance.
	c := goredis.NewClient(&goredis.Options{Addr: cfg.Nodes[0], DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, MaxRetries: -1})
	return &singleLock{c: c, lease: cfg.Params.Lease.Duration}, nil
}

// Acquire retries SET NX until it succeeds or ctx ends. A SET whose answer
// was lost may have taken the lock: that outcome is unknown, not a failure.
func (l *singleLock) Acquire(ctx context.Context) (Held, error) {
	var b [16]byte
	rand.Read(b[:])
	l.value = hex.EncodeToString(b[:])
	for {
		ok, err := l.c.SetNX(ctx, Name, l.value, l.lease).Result()
		switch {
		case err != nil:
			return nil, err
		case ok:
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: still taken when the attempt ended", ErrNotAcquired)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Token is nil: a single-instance Redis lock hands out no fencing token.
func (l *singleLock) Token() *int64 { return nil }

func (l *singleLock) Release(ctx context.Context) error {
	n, err := release.Run(ctx, l.c, []string{Name}, l.value).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: the key had expired or belonged to another client", ErrNotHeld)
	}
	return nil
}
