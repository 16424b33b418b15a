package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/natsclient"
)

func init() {
	workloads.Workloads.Register("nats-lock", Workload{TargetKind: "nats", NewLocker: newNATSLock, Modules: []string{natsclient.Module}})
}

// natsLockBucket holds the lock: one key, in a bucket replicated on every
// server whose entries expire after the lease (its max age).
const natsLockBucket = "chaos-lock"

// natsLock is the lock NATS users build on a KV bucket: create the key
// (which succeeds only if it does not exist) with the bucket's max age as
// the lease; the revision the create got is the fencing token, unique to
// the grant and growing with each; release deletes the key at that
// revision only.
type natsLock struct {
	nc  *nats.Conn
	kv  jetstream.KeyValue
	rev uint64
}

func newNATSLock(cfg workloads.Config) (Locker, error) {
	nc, js, err := natsclient.Connect(cfg.Node())
	if err != nil {
		return nil, fmt.Errorf("nats-lock: %w", err)
	}
	kv, err := natsclient.Bucket(js, jetstream.KeyValueConfig{Bucket: natsLockBucket, History: 1, TTL: params(cfg).Lease.Duration,
		Storage: jetstream.FileStorage, Replicas: len(cfg.Nodes)})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats-lock: %s: %w", cfg.Node(), err)
	}
	return &natsLock{nc: nc, kv: kv}, nil
}

// Acquire creates the key until a create succeeds or ctx ends. A create
// whose answer was lost may have taken the lock: that is unknown.
func (l *natsLock) Acquire(ctx context.Context) (Held, error) {
	for {
		if err := natsclient.Ready(ctx, l.nc); err != nil {
			return nil, err
		}
		rev, err := l.kv.Create(ctx, Name, []byte("held"))
		switch {
		case err == nil:
			l.rev = rev
			return l, nil
		case !errors.Is(err, jetstream.ErrKeyExists) && !natsclient.WrongLastSequence(err):
			// Create's second try, at a released key's delete marker, gives
			// the stream's own refusal when another client got there first.
			return nil, natsclient.Classify(err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: still taken when the attempt ended", ErrNotAcquired)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Token is the revision of the create that took the lock.
func (l *natsLock) Token() *int64 {
	t := int64(l.rev)
	return &t
}

// Release deletes the key if it is still at our revision.
func (l *natsLock) Release(ctx context.Context) error {
	err := l.kv.Delete(ctx, Name, jetstream.LastRevision(l.rev))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("%w: the key had expired or belonged to another client", ErrNotHeld)
	}
	return natsclient.Classify(err)
}
