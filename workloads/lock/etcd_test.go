package lock

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets/etcd"
	"github.com/chaos-testing/chaos/workloads"
)

func TestSessionTTL(t *testing.T) {
	for lease, want := range map[time.Duration]int{
		0: 1, 300 * time.Millisecond: 1, time.Second: 1, 2 * time.Second: 2, 2500 * time.Millisecond: 3,
	} {
		if got := sessionTTL(lease); got != want {
			t.Errorf("sessionTTL(%s) = %d, want %d", lease, got, want)
		}
	}
}

// The shipped plans pass the workload's own checks.
func TestEtcdLockPlansCheck(t *testing.T) {
	w, ok := workloads.Workloads.Lookup("etcd-lock")
	if !ok || w.Target() != "etcd" {
		t.Fatal("etcd-lock is not registered as a workload on etcd")
	}
	for _, name := range []string{"etcd-lock-pause.yaml", "etcd-lock-pause-unfenced.yaml"} {
		p, err := plans.Load(filepath.Join("..", "..", "plans", name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bind.Bind(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ps Params
		if f, err := b.Workload.Fields(); err != nil || json.Unmarshal(f, &ps) != nil {
			t.Fatalf("%s: the workload's fields %s: %v", name, f, err)
		}
		lease := ps.Lease.Duration
		if b.Workload.Kind != "etcd-lock" || sessionTTL(lease) != 2 || b.Faults[0].Duration.Duration <= lease {
			t.Errorf("%s: want etcd-lock, a 2 s lease and a pause longer than it: %+v", name, p)
		}
	}
}

// etcdCluster starts a 3-member etcd cluster in a run of its own and returns its
// client addresses as the host reaches them, and a client of all three.
func etcdCluster(t *testing.T) ([]string, *clientv3.Client) {
	t.Helper()
	_, nodes := testenv.Cluster(t, testenv.Bind(t, etcd.Kind{}, 3, ""), "etcdlock")
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, net.JoinHostPort(n.Container.IP, strconv.Itoa(etcd.ClientPort)))
	}
	admin, err := clientv3.New(clientv3.Config{Endpoints: addrs, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return addrs, admin
}

// etcdLocker is process p's locker, bound to member p%3, with a 2 s lease.
func etcdLocker(t *testing.T, addrs []string, p int) Locker {
	t.Helper()
	cfg := Client{Config: workloads.Config{Process: p, Nodes: addrs}, Params: Params{Lease: plans.Duration{Duration: 2 * time.Second}}}
	l, err := newEtcdLock(false)(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.(*etcdLock).cli.Close() })
	return l
}

type etcdAcquired struct {
	h   Held
	err error
}

// etcdAcquireAsync starts an acquisition bounded by limit.
func etcdAcquireAsync(l Locker, limit time.Duration) <-chan etcdAcquired {
	ch := make(chan etcdAcquired, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		h, err := l.Acquire(ctx)
		ch <- etcdAcquired{h, err}
	}()
	return ch
}

func etcdWaitAcquired(t *testing.T, ch <-chan etcdAcquired, within time.Duration) etcdAcquired {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(within):
		t.Fatalf("acquire still waiting after %s", within)
		return etcdAcquired{}
	}
}

func etcdMustAcquire(t *testing.T, who string, l Locker) (Held, int64) {
	t.Helper()
	a := etcdWaitAcquired(t, etcdAcquireAsync(l, 5*time.Second), 10*time.Second)
	if a.err != nil {
		t.Fatalf("%s: acquire: %v", who, a.err)
	}
	tok := a.h.Token()
	if tok == nil {
		t.Fatalf("%s: no token", who)
	}
	return a.h, *tok
}

func etcdRelease(t *testing.T, h Held) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return h.Release(ctx)
}

// etcdLockKeys lists the keys queued under the lock's prefix, oldest first.
func etcdLockKeys(t *testing.T, admin *clientv3.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := admin.Get(ctx, Name+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys
}

func etcdLeaseOf(h Held) clientv3.LeaseID { return h.(*etcdHeld).s.Lease() }

func TestEtcdLock(t *testing.T) {
	addrs, admin := etcdCluster(t)
	a, b := etcdLocker(t, addrs, 0), etcdLocker(t, addrs, 1) // bound to n1 and n2
	var tokens []int64
	next := func(who string, tok int64) {
		t.Helper()
		if len(tokens) > 0 && tok <= tokens[len(tokens)-1] {
			t.Fatalf("%s got token %d after %v: tokens must strictly increase", who, tok, tokens)
		}
		tokens = append(tokens, tok)
	}

	// A holds; B waits in the queue until A releases.
	ha, ta := etcdMustAcquire(t, "A", a)
	next("A", ta)
	bch := etcdAcquireAsync(b, 10*time.Second)
	select {
	case r := <-bch:
		t.Fatalf("B acquired (%v) while A held the lock", r.err)
	case <-time.After(700 * time.Millisecond):
	}
	if err := etcdRelease(t, ha); err != nil {
		t.Fatalf("A: release: %v", err)
	}
	r := etcdWaitAcquired(t, bch, 3*time.Second)
	if r.err != nil {
		t.Fatalf("B: acquire after A's release: %v", r.err)
	}
	next("B", *r.h.Token())
	if err := etcdRelease(t, r.h); err != nil {
		t.Fatalf("B: release: %v", err)
	}

	// A holds again and its lease ends under it, as when A is paused past
	// it (revoked here, rather than waited out). B takes the lock with a
	// higher token, and A's release is told the lock was no longer A's.
	ha, ta = etcdMustAcquire(t, "A", a)
	next("A", ta)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := admin.Revoke(ctx, etcdLeaseOf(ha)); err != nil {
		t.Fatal(err)
	}
	hb, tb := etcdMustAcquire(t, "B", b)
	next("B", tb)
	if err := etcdRelease(t, ha); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("A: release after its lease was revoked: %v, want ErrNotHeld", err)
	} else {
		t.Logf("A: release after its lease was revoked: %v", err)
	}

	// While B holds: an acquisition whose deadline passes in the queue is
	// of unknown outcome, and leaves no key behind to block others.
	began := time.Now()
	r = etcdWaitAcquired(t, etcdAcquireAsync(a, 300*time.Millisecond), 300*time.Millisecond+lockGrace+2*time.Second)
	if r.err == nil || errors.Is(r.err, ErrNotAcquired) {
		t.Fatalf("A: acquire timing out in the queue: %v, want an unknown outcome", r.err)
	}
	t.Logf("A: acquire timing out in the queue: %v after %s", r.err, time.Since(began).Round(time.Millisecond))
	deadline := time.Now().Add(3 * time.Second)
	for keys := etcdLockKeys(t, admin); len(keys) != 1; keys = etcdLockKeys(t, admin) {
		if time.Now().After(deadline) {
			t.Fatalf("keys queued after A gave up: %q, want B's alone", keys)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A waits behind B, and its lease ends while it waits: when B lets go,
	// A is told its acquisition failed (etcd #11456), not given the lock.
	ach := etcdAcquireAsync(a, 10*time.Second)
	var waiting clientv3.LeaseID
	for deadline = time.Now().Add(3 * time.Second); waiting == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A's key never appeared in the queue")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := admin.Get(ctx, Name+"/", clientv3.WithPrefix())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			if id := clientv3.LeaseID(kv.Lease); id != etcdLeaseOf(hb) {
				waiting = id
			}
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := admin.Revoke(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	if err := etcdRelease(t, hb); err != nil {
		t.Fatalf("B: release: %v", err)
	}
	r = etcdWaitAcquired(t, ach, 3*time.Second)
	if !errors.Is(r.err, ErrNotAcquired) || !errors.Is(r.err, concurrency.ErrSessionExpired) {
		t.Fatalf("A: acquire whose lease ended in the queue: %v, want ErrNotAcquired (session expired)", r.err)
	}
	t.Logf("A: acquire whose lease ended in the queue: %v", r.err)

	// And the lock is free again: nothing was left behind.
	ha, ta = etcdMustAcquire(t, "A", a)
	next("A", ta)
	if err := etcdRelease(t, ha); err != nil {
		t.Fatalf("A: release: %v", err)
	}
	t.Logf("tokens in order of acquisition: %v", tokens)
}

// The shipped plans, shortened: a holder paused past its lease writes
// with its old token after another client has taken the lock and written.
// Fenced, the resource rejects that write; unfenced, it accepts it.
func TestEtcdLockPausePlans(t *testing.T) {
	// Two pauses, from 3 s to 9 s and from 13 s to 19 s, and time to come
	// back: a pause can miss (the holder it picked released the lock while
	// the engine delivered the SIGSTOP), and one missed pause would fail
	// the test for nothing.
	testPausePlans(t, "etcd-lock-pause.yaml", "etcd-lock-pause-unfenced.yaml", 25*time.Second, func(t *testing.T, rep analysis.Report, res lockResult) {
		if rep.Verdict != analysis.Invalid || res.stat("mutual_exclusion_violations") == 0 {
			t.Errorf("verdict %s with %d overlapping holds; want invalid: the paused holder and the next both believed they held the lock",
				rep.Verdict, res.stat("mutual_exclusion_violations"))
		}
		if res.stat("tokens_seen") == 0 || res.stat("tokens_seen") != res.stat("acquires_ok") {
			t.Errorf("%d tokens for %d acquisitions: every acquisition carries one", res.stat("tokens_seen"), res.stat("acquires_ok"))
		}
	})
}
