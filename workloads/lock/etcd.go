package lock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/etcdclient"
)

func init() {
	workloads.Register[Params]("etcd-lock", Workload{Backend: workloads.Backend{TargetKind: "etcd", Modules: []string{etcdclient.Module}}, NewLocker: newEtcdLock(false)})
	workloads.Register[Params]("etcd-election", Workload{Backend: workloads.Backend{TargetKind: "etcd", Modules: []string{etcdclient.Module}}, NewLocker: newEtcdLock(true), Election: true})
}

// etcdQueue is what etcd's lock and election recipes share: a key under a
// prefix, on the session's lease, that holds the lock or leads once every
// older key under the prefix is gone. concurrency.Mutex and
// concurrency.Election differ only in how they are asked.
type etcdQueue interface {
	wait(ctx context.Context) error // Lock or Campaign
	key() string
	owner() clientv3.Cmp // the key still exists as this attempt's
}

type mutexQueue struct{ m *concurrency.Mutex }

func (q mutexQueue) wait(ctx context.Context) error { return q.m.Lock(ctx) }
func (q mutexQueue) key() string                    { return q.m.Key() }
func (q mutexQueue) owner() clientv3.Cmp            { return q.m.IsOwner() }

type electionQueue struct {
	e   *concurrency.Election
	val string
}

func (q electionQueue) wait(ctx context.Context) error { return q.e.Campaign(ctx, q.val) }
func (q electionQueue) key() string                    { return q.e.Key() }
func (q electionQueue) owner() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(q.e.Key()), "=", q.e.Rev())
}

// lockGrace is how long Acquire waits, once its context has ended, for
// concurrency.Mutex.Lock to return. Lock cleans up after a failed wait with
// a delete under the client's own context, which never ends: towards a
// member that does not answer, that delete would wait for as long as the
// member is away.
const lockGrace = time.Second

// etcdLock is etcd's concurrency.Mutex, each client process talking to the
// one member it is bound to. The fencing token is the create revision of
// the holder's key: keys under the lock's prefix queue in create-revision
// order, and the holder is the oldest, so holders' tokens strictly increase.
//
// Every acquisition has a session (lease) of its own, granted in Acquire
// and revoked at release. A holder paused past its lease comes back to a
// lease etcd has expired; with one session per acquisition that dead lease
// dies with the hold, and the next acquisition starts clean, with nothing
// to detect or recreate. It costs a lease grant per acquisition, which is
// nothing next to the holds. Revoking at the end also deletes the key when
// the release's own delete got no answer.
//
// As an election (concurrency.Election, Campaign and a key per lease), the
// same holds: the leader is the oldest key, and its create revision is the
// leader's token.
type etcdLock struct {
	cli      *clientv3.Client
	node     string
	ttl      int // session TTL, seconds
	election bool
	name     string // the client's value as a candidate
}

func newEtcdLock(election bool) func(ctx context.Context, cfg Client) (Locker, error) {
	return func(_ context.Context, cfg Client) (Locker, error) {
		if len(cfg.Nodes) == 0 {
			return nil, fmt.Errorf("etcd-lock: no etcd members given")
		}
		node := cfg.Node()
		cli, err := etcdclient.Connect(node)
		if err != nil {
			return nil, fmt.Errorf("etcd-lock: %w", err)
		}
		return &etcdLock{cli: cli, node: node, ttl: sessionTTL(cfg.Params.Lease.Duration),
			election: election, name: fmt.Sprintf("p%d", cfg.Process)}, nil
	}
}

// sessionTTL is the lease in whole seconds, rounded up and at least 1.
// Rounding down would give a holder less time than the plan's lease, which
// CheckPlan only guarantees to be longer than hold_max. (etcd raises a TTL
// below its minimum, 1.5 election timeouts rounded up: 2 s with the
// defaults the etcd target runs with.)
func sessionTTL(lease time.Duration) int {
	return max(1, int(math.Ceil(lease.Seconds())))
}

// Acquire grants a lease, queues a key under it and waits to be the oldest.
//
// ErrNotAcquired (certain) is returned when no key was written (the grant
// failed), and when etcd answered that this acquisition's key no longer
// exists: its lease expired or was revoked while it waited, typically with
// the process stopped. The key may have been the oldest for a moment before
// its lease ran out, but the client never acted as the holder, and a lease
// once gone never comes back, so the lock is not this client's and cannot
// become so later. A waiter whose session expired used to be handed the
// lock (the history behind etcd #11456); Lock now reads its key back after
// the wait (concurrency.ErrSessionExpired when it is gone), and Acquire
// checks again, in the same read that finds the token, since the process
// may have been stopped between Lock's check and its return. (Lock still
// notices only once the older keys are gone, etcd #19597: a waiter stopped
// past its lease usually runs into its deadline first, an unknown outcome.)
//
// Any other failure leaves the outcome unknown, even after the session is
// revoked: a Txn that put the key may have got no answer, and a wait cut
// short by the deadline (Lock's own cleanup swallows the error of its
// delete) may end just as the last older key goes, so the key may have been
// granted, or still be there to be granted, until the lease is revoked.
func (l *etcdLock) Acquire(ctx context.Context) (Held, error) {
	lease, err := l.cli.Grant(ctx, int64(l.ttl))
	if err != nil {
		// A lease granted without our hearing of it holds no key and
		// expires on its own.
		return nil, fmt.Errorf("%w: lease grant on %s: %v", ErrNotAcquired, l.node, err)
	}
	// The lease is granted here, under ctx, rather than by NewSession, which
	// would grant it under the client's context, which never ends.
	s, err := concurrency.NewSession(l.cli, concurrency.WithTTL(l.ttl), concurrency.WithLease(lease.ID))
	if err != nil {
		l.revoke(lease.ID)
		return nil, fmt.Errorf("%w: session: %v", ErrNotAcquired, err)
	}
	var m etcdQueue = mutexQueue{concurrency.NewMutex(s, Name)}
	if l.election {
		m = electionQueue{concurrency.NewElection(s, Name), l.name}
	}

	done := make(chan error, 1)
	go func() { done <- m.wait(ctx) }()
	var lerr error
	select {
	case lerr = <-done:
	case <-ctx.Done():
		select {
		case lerr = <-done:
		case <-time.After(lockGrace):
			// Lock is stuck in its cleanup; the session is closed when it
			// returns, and the lease expires in the meantime anyway.
			go func() { <-done; s.Close() }()
			return nil, fmt.Errorf("etcd-lock: waiting for the lock on %s: %w", l.node, ctx.Err())
		}
	}
	switch {
	case errors.Is(lerr, concurrency.ErrSessionExpired):
		s.Close()
		return nil, fmt.Errorf("%w: lease %x ended while waiting: %w", ErrNotAcquired, lease.ID, lerr)
	case lerr != nil:
		s.Close()
		return nil, fmt.Errorf("etcd-lock: waiting for the lock on %s: %w", l.node, lerr)
	}

	// One read at one revision: this acquisition's key, and the oldest key
	// under the prefix, which is the holder. The key's create revision is
	// the token; Lock's response header carries the revision of its last
	// request, not that.
	resp, err := l.cli.Txn(ctx).Then(
		clientv3.OpGet(m.key()),
		clientv3.OpGet(Name+"/", clientv3.WithFirstCreate()...),
	).Commit()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("etcd-lock: reading back the lock key on %s: %w", l.node, err)
	}
	mine, first := resp.Responses[0].GetResponseRange().Kvs, resp.Responses[1].GetResponseRange().Kvs
	switch {
	case len(mine) == 0:
		s.Close()
		return nil, fmt.Errorf("%w: key %s gone at revision %d, its lease %x ended: %w",
			ErrNotAcquired, m.key(), resp.Header.Revision, lease.ID, concurrency.ErrSessionExpired)
	case len(first) == 0 || string(first[0].Key) != m.key() || mine[0].Lease != int64(lease.ID):
		// Cannot happen unless etcd broke the queue: give the lock up.
		s.Close()
		return nil, fmt.Errorf("etcd-lock: Lock returned, but at revision %d the oldest key is %q, not %s",
			resp.Header.Revision, firstKey(first), m.key())
	}
	select {
	case <-s.Done():
		// Held at that revision, but the lease is no longer kept alive and
		// will run out: give it up, having held it (so not ErrNotAcquired).
		s.Close()
		return nil, fmt.Errorf("etcd-lock: lease %x stopped being kept alive as the lock was taken", lease.ID)
	default:
	}
	return &etcdHeld{s: s, m: m, token: mine[0].CreateRevision}, nil
}

// revoke lets a lease go, with a short deadline of its own: the caller's may
// be what ended.
func (l *etcdLock) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(l.ttl)*time.Second)
	defer cancel()
	l.cli.Revoke(ctx, id)
}

func firstKey(kvs []*mvccpb.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	return string(kvs[0].Key)
}

// etcdHeld is one acquisition: its session, queue key and token.
type etcdHeld struct {
	s     *concurrency.Session
	m     etcdQueue
	token int64
}

// Lost is closed when the session's lease is no longer kept alive: a
// leader learns so on its next keep-alive after a pause.
func (h *etcdHeld) Lost() <-chan struct{} { return h.s.Done() }

// Token is the create revision of the holder's key.
func (h *etcdHeld) Token() *int64 { t := h.token; return &t }

// Release deletes the key if it is still this acquisition's, then revokes
// the session's lease. Mutex.Unlock is an unconditional delete whose answer
// it drops, so it cannot tell a released lock from one whose key had
// expired; the same delete is made here under the mutex's own IsOwner
// condition (the key exists, with this acquisition's create revision).
// A failed condition is etcd answering that the lock was no longer ours:
// ErrNotHeld. An error leaves it unknown, but the revoke that follows
// frees the lock anyway, or the lease runs out.
func (h *etcdHeld) Release(ctx context.Context) error {
	defer h.s.Close()
	resp, err := h.s.Client().Txn(ctx).If(h.m.owner()).Then(clientv3.OpDelete(h.m.key())).Commit()
	if err != nil {
		return fmt.Errorf("etcd-lock: release: %w", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: key %s gone at revision %d (lease %x expired or revoked)", ErrNotHeld, h.m.key(), resp.Header.Revision, h.s.Lease())
	}
	return nil
}
