package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets/zookeeper"
	"github.com/chaos-testing/chaos/workloads"
)

func TestZKSeq(t *testing.T) {
	for name, want := range map[string]int64{
		"_c_0123456789abcdef0000000000000001-lock-0000000042": 42,
		"lock-0000000000": 0,
	} {
		if seq, ok := zkSeq(name); !ok || seq != want {
			t.Errorf("zkSeq(%q) = %d, %v; want %d", name, seq, ok, want)
		}
	}
	for _, name := range []string{"lock-42", "lock", "_c_x-lock-00000000x1"} {
		if seq, ok := zkSeq(name); ok {
			t.Errorf("zkSeq(%q) = %d, want no sequence number", name, seq)
		}
	}
}

func TestZKNoLease(t *testing.T) {
	if _, err := newZooKeeperLock(t.Context(), Client{Config: workloads.Config{Nodes: []string{"n1:2181"}}}); err == nil {
		t.Error("a lock without a lease (session timeout) was made")
	}
}

// zkEnsemble starts a 3-server ensemble in a run of its own, removed at the
// end, or skips without Docker.
func zkEnsemble(t *testing.T) []cluster.Node {
	t.Helper()
	_, nodes := testenv.Cluster(t, testenv.Bind(t, zookeeper.Kind{}, 3, ""), "zklocktest")
	return nodes
}

func zkClientAddr(n cluster.Node) string {
	return net.JoinHostPort(n.Container.IP, strconv.Itoa(zookeeper.ClientPort))
}

// zkTestLocker is the workload's locker for a client dialling addr from the
// host, with a 2 s lease (session timeout).
func zkTestLocker(t *testing.T, addr string) *zkLock {
	t.Helper()
	cfg := Client{Config: workloads.Config{Nodes: []string{addr}}, Params: Params{Lease: plans.Duration{Duration: 2 * time.Second}}}
	l, err := newZooKeeperLock(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	z := l.(*zkLock)
	t.Cleanup(z.conn.Close)
	return z
}

// zkProxy forwards TCP connections to a server. Frozen, it cuts them and
// refuses new ones, as if the client had stopped: the server hears nothing
// of the session, and the client cannot learn that it expired.
type zkProxy struct {
	addr string
	mu   sync.Mutex
	cut  bool
	open []net.Conn
}

func newZKProxy(t *testing.T, server string) *zkProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &zkProxy{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(c, server)
		}
	}()
	t.Cleanup(func() { p.freeze(); p.thaw() })
	return p
}

func (p *zkProxy) forward(c net.Conn, server string) {
	s, err := net.DialTimeout("tcp", server, time.Second)
	p.mu.Lock()
	if err != nil || p.cut {
		p.mu.Unlock()
		c.Close()
		if s != nil {
			s.Close()
		}
		return
	}
	p.open = append(p.open, c, s)
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
}

func (p *zkProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

func (p *zkProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func zkAcquire(t *testing.T, l Locker, limit time.Duration) Held {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	h, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return h
}

func zkRelease(t *testing.T, h Held) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return h.Release(ctx)
}

type zkAcquired struct {
	h   Held
	err error
	at  time.Time
}

// zkAcquireAsync acquires in the background, with a limit long enough for a
// session to expire first.
func zkAcquireAsync(l Locker) <-chan zkAcquired {
	ch := make(chan zkAcquired, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		h, err := l.Acquire(ctx)
		ch <- zkAcquired{h, err, time.Now()}
	}()
	return ch
}

func zkNotYet(t *testing.T, ch <-chan zkAcquired, wait time.Duration, why string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("acquired (%v, token %v) %s", r.err, zkToken(r.h), why)
	case <-time.After(wait):
	}
}

func zkGot(t *testing.T, ch <-chan zkAcquired) zkAcquired {
	t.Helper()
	r := <-ch
	if r.err != nil {
		t.Fatalf("acquire: %v", r.err)
	}
	return r
}

func zkToken(h Held) any {
	if h == nil || h.Token() == nil {
		return nil
	}
	return *h.Token()
}

// TestZooKeeperLock runs the recipe against a real ensemble, from the host:
// A and B on different servers, A through a proxy that can cut it off.
func TestZooKeeperLock(t *testing.T) {
	nodes := zkEnsemble(t)
	proxy := newZKProxy(t, zkClientAddr(nodes[0]))
	a := zkTestLocker(t, proxy.addr)
	b := zkTestLocker(t, zkClientAddr(nodes[1]))

	// B waits while A holds, and gets the lock, with a higher token, when
	// A releases it.
	hA := zkAcquire(t, a, opTimeout)
	tA := *hA.Token()
	bCh := zkAcquireAsync(b)
	zkNotYet(t, bCh, time.Second, "by B while A holds the lock")
	released := time.Now()
	if err := zkRelease(t, hA); err != nil {
		t.Fatalf("A's release: %v", err)
	}
	r := zkGot(t, bCh)
	tB := *r.h.Token()
	t.Logf("A held with token %d; B acquired with token %d, %s after A released", tA, tB, r.at.Sub(released).Round(time.Millisecond))
	if tB <= tA {
		t.Errorf("B's token %d is not higher than A's %d", tB, tA)
	}
	if err := zkRelease(t, r.h); err != nil {
		t.Fatalf("B's release: %v", err)
	}

	// A znode of A's whose create answer A never heard (here: made behind
	// its back) is the lowest and blocks B, until A's next Acquire sees it
	// and deletes it; A then queues behind B.
	orphan, err := a.conn.Create(fmt.Sprintf("%s/_c_%s%016x-lock-", zkLockDir, a.owner, 0), nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	bCh = zkAcquireAsync(b)
	zkNotYet(t, bCh, time.Second, "by B behind a znode A left over")
	aCh := zkAcquireAsync(a)
	r = zkGot(t, bCh)
	t.Logf("B acquired with token %d once A's Acquire deleted %s", *r.h.Token(), orphan)
	if ok, _, err := b.conn.Exists(orphan); ok || err != nil {
		t.Errorf("A's left-over znode still exists (%v)", err)
	}
	zkNotYet(t, aCh, 300*time.Millisecond, "by A while B holds the lock")
	if err := zkRelease(t, r.h); err != nil {
		t.Fatalf("B's release: %v", err)
	}
	ra := zkGot(t, aCh)
	tA2 := *ra.h.Token()

	// A is cut off past its session timeout while holding: the server
	// expires the session and deletes A's znode, B takes the lock with a
	// higher token, and A's release, once it reaches the server again,
	// finds the lock no longer its own.
	sA := a.conn.SessionID()
	proxy.freeze()
	frozen := time.Now()
	bCh = zkAcquireAsync(b)
	r = zkGot(t, bCh)
	tB2 := *r.h.Token()
	t.Logf("A cut off holding token %d; B acquired with token %d %s later", tA2, tB2, r.at.Sub(frozen).Round(time.Millisecond))
	if tB2 <= tA2 {
		t.Errorf("B's token %d is not higher than A's %d", tB2, tA2)
	}
	proxy.thaw()
	if err := zkRelease(t, ra.h); !errors.Is(err, ErrNotHeld) {
		t.Errorf("A's release after its session expired: %v, want ErrNotHeld", err)
	} else {
		t.Logf("A's release: %v", err)
	}

	// A's next acquisition is in a new session, and waits for B.
	aCh = zkAcquireAsync(a)
	zkNotYet(t, aCh, 300*time.Millisecond, "by A while B holds the lock")
	if err := zkRelease(t, r.h); err != nil {
		t.Fatalf("B's release: %v", err)
	}
	ra = zkGot(t, aCh)
	if s := a.conn.SessionID(); s == sA {
		t.Errorf("A acquired again in its expired session %#x", s)
	}
	if tA3 := *ra.h.Token(); tA3 <= tB2 {
		t.Errorf("A's new token %d is not higher than B's %d", tA3, tB2)
	}
	if err := zkRelease(t, ra.h); err != nil {
		t.Errorf("A's release in its new session: %v", err)
	}
}

// A short give-up: with the lock held elsewhere, Acquire withdraws its
// znode before its deadline and says the lock was not acquired.
func TestZooKeeperLockGivesUp(t *testing.T) {
	nodes := zkEnsemble(t)
	a := zkTestLocker(t, zkClientAddr(nodes[0]))
	b := zkTestLocker(t, zkClientAddr(nodes[2]))
	hA := zkAcquire(t, a, opTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if h, err := b.Acquire(ctx); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("acquire while held elsewhere: token %v, %v; want ErrNotAcquired", zkToken(h), err)
	} else {
		t.Logf("gave up: %v", err)
	}
	// Listed in B's session, which reads its own writes; A's server may
	// not have applied B's delete yet.
	kids, _, err := b.conn.Children(zkLockDir)
	if err != nil || len(kids) != 1 {
		t.Errorf("after B gave up, %s holds %v (%v); want A's znode only", zkLockDir, kids, err)
	}
	if err := zkRelease(t, hA); err != nil {
		t.Fatal(err)
	}
}

// TestZooKeeperLockPlans runs both pause plans, shortened, end to end.
func TestZooKeeperLockPlans(t *testing.T) {
	testPausePlans(t, "zookeeper-lock-pause.yaml", "zookeeper-lock-pause-unfenced.yaml", 20*time.Second, func(t *testing.T, rep analysis.Report, res lockResult) {
		var checkers []string
		for _, r := range rep.Results {
			checkers = append(checkers, r.Checker)
		}
		if !slices.Equal(checkers, []string{"lock", "stats"}) {
			t.Errorf("checkers %q, want the lock's and the stats", checkers)
		}
		if rep.Verdict != analysis.Invalid {
			t.Errorf("verdict %s, want invalid", rep.Verdict)
		}
		if res.stat("tokens_seen") == 0 || res.stat("mutual_exclusion_violations") == 0 {
			t.Errorf("want tokens and mutual-exclusion findings (the paused holder believed it held the lock)")
		}
	})
}
