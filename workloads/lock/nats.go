package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/natsclient"
)

func init() {
	workloads.Register[Params]("nats-lock", Workload{Backend: workloads.Backend{TargetKind: "nats", Modules: []string{natsclient.Module}}, NewLocker: newNATSLock(false)})
	workloads.Register[Params]("nats-election", Workload{Backend: workloads.Backend{TargetKind: "nats", Modules: []string{natsclient.Module}}, NewLocker: newNATSLock(true), Election: true})
}

// natsLockBucket holds the lock: one key, in a bucket replicated on every
// server whose entries expire after the lease (its max age).
const natsLockBucket = "chaos-lock"

// natsLock is the lock NATS users build on a KV bucket: create the key
// (which succeeds only if it does not exist) with the bucket's max age as
// the lease; the revision the create got is the fencing token, unique to
// the grant and growing with each; release deletes the key at that
// revision only.
//
// As an election, the same create makes a leader, who keeps the key alive
// by updating it at its last revision every third of the lease, and stops
// leading (Lost) when an update is refused, or when a whole lease has gone
// by since it sent the last update that succeeded: the key may have
// expired by then, since the server counts the lease from when it stored
// the update, later than the leader sent it.
type natsLock struct {
	nc       *nats.Conn
	kv       jetstream.KeyValue
	lease    time.Duration
	election bool
	name     string // the client's value as a candidate
}

func newNATSLock(election bool) func(ctx context.Context, cfg Client) (Locker, error) {
	return func(ctx context.Context, cfg Client) (Locker, error) {
		nc, js, err := natsclient.Connect(cfg.Node())
		if err != nil {
			return nil, fmt.Errorf("nats-lock: %w", err)
		}
		lease := cfg.Params.Lease.Duration
		kv, err := natsclient.Bucket(ctx, js, jetstream.KeyValueConfig{Bucket: natsLockBucket, History: 1, TTL: lease,
			Storage: jetstream.FileStorage, Replicas: len(cfg.Nodes)})
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("nats-lock: %s: %w", cfg.Node(), err)
		}
		return &natsLock{nc: nc, kv: kv, lease: lease, election: election, name: fmt.Sprintf("p%d", cfg.Process)}, nil
	}
}

// Acquire creates the key until a create succeeds or ctx ends. A create
// whose answer was lost may have taken the lock: that is unknown.
func (l *natsLock) Acquire(ctx context.Context) (Held, error) {
	for {
		if err := natsclient.Ready(ctx, l.nc); err != nil {
			return nil, err
		}
		sent := time.Now()
		rev, err := l.kv.Create(ctx, Name, []byte(l.name))
		switch {
		case err == nil:
			t := &natsTenure{l: l, token: rev, rev: rev, lost: make(chan struct{}), stop: make(chan struct{})}
			if l.election {
				t.done = make(chan struct{})
				go t.keep(sent)
			}
			return t, nil
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

// natsTenure is one acquisition: the create's revision is its token, rev
// the key's revision now (a leader's updates move it).
type natsTenure struct {
	l     *natsLock
	token uint64
	mu    sync.Mutex
	rev   uint64
	lost  chan struct{} // closed when a leader stops leading
	stop  chan struct{} // closed by Release
	done  chan struct{} // closed when keep returns; nil for a lock
}

// keep updates a leader's key every third of the lease until Release, or
// until it loses: an update refused, or a lease since sent, the time the
// last update that succeeded (at first the create) was sent.
func (t *natsTenure) keep(sent time.Time) {
	defer close(t.done)
	every := t.l.lease / 3
	for {
		select {
		case <-t.stop:
			return
		case <-time.After(every):
		}
		left := t.l.lease - time.Since(sent)
		if left <= 0 {
			close(t.lost)
			return
		}
		try := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), min(every, left))
		rev, err := t.l.kv.Update(ctx, Name, []byte(t.l.name), t.current())
		cancel()
		switch {
		case err == nil:
			t.mu.Lock()
			t.rev = rev
			t.mu.Unlock()
			sent = try
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch), natsclient.WrongLastSequence(err),
			errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
			close(t.lost) // the key is another's, or gone
			return
		}
	}
}

func (t *natsTenure) current() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rev
}

// Lost makes natsTenure a Loser.
func (t *natsTenure) Lost() <-chan struct{} { return t.lost }

// Token is the revision of the create that took the lock.
func (t *natsTenure) Token() *int64 {
	v := int64(t.token)
	return &v
}

// Release stops a leader's updates and deletes the key if it is still at
// the tenure's last revision.
func (t *natsTenure) Release(ctx context.Context) error {
	close(t.stop)
	if t.done != nil {
		<-t.done
	}
	err := t.l.kv.Delete(ctx, Name, jetstream.LastRevision(t.current()))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || natsclient.WrongLastSequence(err) {
		return fmt.Errorf("%w: the key had expired or belonged to another client", ErrNotHeld)
	}
	return natsclient.Classify(err)
}
