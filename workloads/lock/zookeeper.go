package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/zkclient"
)

func init() {
	workloads.Register[Params]("zookeeper-lock", Workload{Backend: workloads.Backend{TargetKind: "zookeeper", Modules: []string{zkclient.Module}}, NewLocker: newZooKeeperLock})
	// ZooKeeper's leader election recipe is its lock recipe: the candidate
	// with the lowest sequential znode leads, each watching its predecessor.
	workloads.Register[Params]("zookeeper-election", Workload{Backend: workloads.Backend{TargetKind: "zookeeper", Modules: []string{zkclient.Module}}, NewLocker: newZooKeeperLock, Election: true})
}

const (
	// zkLockDir holds one ephemeral sequential znode per client waiting for
	// or holding the lock. It is never deleted, so sequence numbers under it
	// never start again.
	zkLockDir = "/" + Name
	// zkOpenLimit bounds the wait for a first session.
	zkOpenLimit = 10 * time.Second
	// zkWithdraw is kept back from Acquire's deadline to withdraw from the
	// queue (delete the own znode) when the lock did not come in time.
	zkWithdraw = time.Second
	// zkRecheck: a waiter lists the queue again this often even without a
	// watch event, in case one was lost with a connection.
	zkRecheck = time.Second
)

// zkLock is the lock recipe of ZooKeeper's documentation, each client
// process talking to the one server it is bound to, in one session that the
// client library renews (a new session once the server has expired the old
// one, e.g. while the process was stopped). To acquire, a client creates an
// ephemeral sequential znode under /chaos-lock and lists the children: if
// its znode has the lowest sequence number it holds the lock, else it
// watches the next lower znode only (no herd effect) and lists again when
// that one goes. The server deletes a session's ephemeral znodes when it
// expires the session, which is what lets a lock whose holder stopped
// answering go to the next client.
//
// The fencing token is the holder's sequence number: the server assigns
// them in increasing order under /chaos-lock, and a znode holds the lock
// only once every lower one is gone, so each holder's number is higher than
// every earlier holder's, a holder whose session expired included. The
// creation zxid (Czxid) would do as well, but needs a request of its own
// (this client's create returns no Stat) and is a 64-bit epoch|counter; the
// sequence number is in the znode's name, readable in any listing.
//
// go-zookeeper's own zk.Lock is not used: it takes no context, so a wait
// cannot be given up (and a Lock abandoned in a goroutine leaves its znode
// queued, to block every other client once it is the lowest); it keeps the
// sequence number to itself; it never checks that its own znode is still
// listed, so a waiter whose session expired between two of its requests,
// seeing no lower znode, would take the lock with a znode the server had
// deleted; and a create whose answer it lost three times, or an error
// after the create, leaves a znode nobody deletes while the process lives.
//
// Names follow Curator's protected form, _c_<32 hex digits>-lock-<seq>: a
// create whose answer was lost (connection closed) is looked for by its
// name once the client reconnects, rather than created twice. The 32 digits
// are this process's random owner id (16) and the attempt's number (16),
// so any znode of this process other than the current attempt's is known
// to be left over (an answer never heard, a withdrawal or release that got
// no answer) and is deleted when a waiter sees it, before it can hold the
// lock with nobody acting on it.
type zkLock struct {
	conn    *zk.Conn
	node    string
	owner   string // 16 hex digits
	attempt uint64
}

func newZooKeeperLock(_ context.Context, cfg Client) (Locker, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("zookeeper-lock: no ZooKeeper servers given")
	}
	if cfg.Params.Lease.Duration <= 0 {
		return nil, fmt.Errorf("zookeeper-lock: no lease, which is the session timeout")
	}
	node := cfg.Node()
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("zookeeper-lock: %w", err)
	}
	// The session timeout is the plan's lease: the server expires a silent
	// holder's session, and with it its znode, that long after last hearing
	// from it. The server keeps it within 2 to 20 ticks (1 s to 10 s at the
	// target's tickTime of 500 ms).
	conn, err := zkclient.Connect(node, cfg.Params.Lease.Duration)
	if err != nil {
		return nil, fmt.Errorf("zookeeper-lock: %w", err)
	}
	z := &zkLock{conn: conn, node: node, owner: hex.EncodeToString(id[:])}
	ctx, cancel := context.WithTimeout(context.Background(), zkOpenLimit)
	defer cancel()
	if _, err := z.waitSession(ctx, 0); err != nil {
		conn.Close()
		return nil, fmt.Errorf("zookeeper-lock: %w", err)
	}
	return z, nil
}

// zkAttempt is one znode queued for the lock.
type zkAttempt struct {
	name    string // under zkLockDir
	seq     int64
	session int64 // that created it, and that it dies with
}

func (a zkAttempt) path() string { return zkLockDir + "/" + a.name }

// errZKGone: the attempt's znode went with its session.
var errZKGone = errors.New("znode gone with its session")

// Acquire queues a znode and waits to be first, within ctx less the time
// kept back to withdraw. A znode that went with an expired session while
// waiting is queued again, in the new session.
//
// ErrNotAcquired (certain) is returned when no znode of this acquisition is
// left: none was created (no session, or the server refused), or the client
// withdrew its znode when the wait ran out, or the znode went with its
// session. The znode may have been the lowest for a moment before it went,
// but the client never acted as the holder. An error otherwise (a create or
// a withdrawal without an answer) leaves the outcome unknown: the znode may
// be there, and hold the lock, until this process's next Acquire deletes it.
func (z *zkLock) Acquire(ctx context.Context) (Held, error) {
	wait, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		wait, cancel = context.WithDeadline(ctx, dl.Add(-zkWithdraw))
	}
	defer cancel()
	for {
		a, err := z.enqueue(wait)
		if err != nil {
			return nil, err
		}
		h, err := z.await(wait, a)
		switch {
		case err == nil:
			return h, nil
		case errors.Is(err, errZKGone):
			continue
		}
		return nil, z.withdraw(ctx, a, err)
	}
}

// enqueue creates the attempt's znode.
func (z *zkLock) enqueue(ctx context.Context) (zkAttempt, error) {
	z.attempt++
	prefix := fmt.Sprintf("_c_%s%016x-lock-", z.owner, z.attempt)
	// unheard: a create may have been applied whose answer was lost.
	unheard := false
	fail := func(err error) (zkAttempt, error) {
		if unheard {
			return zkAttempt{}, fmt.Errorf("zookeeper-lock: creating %s/%s… on %s, answer lost: %w", zkLockDir, prefix, z.node, err)
		}
		return zkAttempt{}, fmt.Errorf("%w: %s: %v", ErrNotAcquired, z.node, err)
	}
	for {
		sid, err := z.waitSession(ctx, 0)
		if err != nil {
			return fail(err)
		}
		p, err := zkclient.Call(ctx, func() (string, error) {
			return z.conn.Create(zkLockDir+"/"+prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		})
		switch {
		case err == nil && z.conn.SessionID() == sid:
			name := strings.TrimPrefix(p, zkLockDir+"/")
			seq, ok := zkSeq(name)
			if !ok {
				return fail(fmt.Errorf("server named the znode %q", p))
			}
			return zkAttempt{name: name, seq: seq, session: sid}, nil
		case errors.Is(err, zk.ErrNoNode):
			// The first client creates the directory.
			_, err := zkclient.Call(ctx, func() (string, error) { return z.conn.Create(zkLockDir, nil, 0, zk.WorldACL(zk.PermAll)) })
			if err != nil && !errors.Is(err, zk.ErrNodeExists) && !zkConnErr(err) {
				return fail(fmt.Errorf("creating %s: %w", zkLockDir, err))
			}
			continue
		case errors.Is(err, zk.ErrNoServer):
			continue // never sent: the client flushed it while reconnecting
		case errors.Is(err, zkclient.ErrNotSent):
			return fail(err)
		case err != nil && ctx.Err() != nil:
			// Sent, or still queued to be: it may create the znode yet.
			unheard = true
			return fail(err)
		case err != nil && !zkConnErr(err):
			return fail(err) // the server's refusal
		}
		// The answer was lost with the connection, or came in another
		// session than the request left in: look for the znode by name.
		unheard = true
		a, found, err := z.find(ctx, prefix)
		if err != nil {
			return fail(err)
		}
		if found {
			return a, nil
		}
		// Not created, or created in a session since expired, which took
		// it along. (As in Curator, a request lost with its connection is
		// taken to have been applied, or not, by the time the client has
		// reconnected and listed.) Create it again.
		unheard = false
	}
}

// find looks for the lowest znode whose name starts with prefix.
func (z *zkLock) find(ctx context.Context, prefix string) (zkAttempt, bool, error) {
	for {
		sid, err := z.waitSession(ctx, 0)
		if err != nil {
			return zkAttempt{}, false, err
		}
		kids, err := zkclient.Call(ctx, func() ([]string, error) { kids, _, err := z.conn.Children(zkLockDir); return kids, err })
		if err != nil && (ctx.Err() != nil || !zkConnErr(err)) {
			return zkAttempt{}, false, err
		}
		if err != nil || z.conn.SessionID() != sid {
			continue
		}
		var a zkAttempt
		for _, k := range kids {
			if seq, ok := zkSeq(k); ok && strings.HasPrefix(k, prefix) && (a.name == "" || seq < a.seq) {
				a = zkAttempt{name: k, seq: seq, session: sid}
			}
		}
		return a, a.name != "", nil
	}
}

// await waits for a's znode to be the lowest. It returns errZKGone when the
// znode went with its session.
func (z *zkLock) await(ctx context.Context, a zkAttempt) (Held, error) {
	for {
		kids, err := zkclient.Call(ctx, func() ([]string, error) { kids, _, err := z.conn.Children(zkLockDir); return kids, err })
		if err != nil {
			if ctx.Err() != nil || !zkConnErr(err) {
				return nil, err
			}
			// A read: ask again once connected.
			if _, err := z.waitSession(ctx, a.session); err != nil {
				return nil, err
			}
		}
		if z.conn.SessionID() != a.session {
			return nil, errZKGone
		}
		if err != nil {
			continue
		}
		mine := false
		var pred string
		var predSeq int64 = -1
		for _, k := range kids {
			seq, ok := zkSeq(k)
			if !ok {
				return nil, fmt.Errorf("zookeeper-lock: %s/%s is not a lock znode", zkLockDir, k)
			}
			switch {
			case k == a.name:
				mine = true
				continue
			case z.ours(k) && z.drop(ctx, k):
				continue // left over by this process, now deleted
			}
			if seq < a.seq && seq > predSeq {
				pred, predSeq = k, seq
			}
		}
		if !mine {
			// The session is the same one: nothing but its expiry deletes
			// the znode, so it is about to be noticed.
			return nil, errZKGone
		}
		if pred == "" {
			return &zkHeld{z: z, a: a}, nil
		}
		// Watch the next lower znode only.
		ch, err := zkclient.Call(ctx, func() (<-chan zk.Event, error) { _, _, ch, err := z.conn.GetW(zkLockDir + "/" + pred); return ch, err })
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue // gone already
		case err != nil && (ctx.Err() != nil || !zkConnErr(err)):
			return nil, err
		case err != nil:
			ch = nil // lost connection: list again after a pause
		}
		select {
		case <-ch:
		case <-time.After(zkRecheck):
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s to go: %w", pred, ctx.Err())
		}
	}
}

// ours tells whether a znode was created by this process.
func (z *zkLock) ours(name string) bool { return strings.HasPrefix(name, "_c_"+z.owner) }

// drop deletes a znode this process left over and reports whether it is gone.
func (z *zkLock) drop(ctx context.Context, name string) bool {
	_, err := zkclient.Call(ctx, func() (struct{}, error) { return struct{}{}, z.conn.Delete(zkLockDir+"/"+name, -1) })
	return err == nil || errors.Is(err, zk.ErrNoNode)
}

// withdraw deletes a's znode after a wait that failed with cause, using the
// time kept back from ctx's deadline.
func (z *zkLock) withdraw(ctx context.Context, a zkAttempt, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), zkWithdraw)
	defer cancel()
	if z.conn.SessionID() != a.session {
		return fmt.Errorf("%w: %v; %s went with session %#x", ErrNotAcquired, cause, a.name, a.session)
	}
	_, err := zkclient.Call(ctx, func() (struct{}, error) { return struct{}{}, z.conn.Delete(a.path(), -1) })
	switch {
	case err == nil:
		return fmt.Errorf("%w: %v; withdrew %s", ErrNotAcquired, cause, a.name)
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w: %v; %s went with its session", ErrNotAcquired, cause, a.name)
	}
	return fmt.Errorf("zookeeper-lock: %v; withdrawing %s on %s: %w", cause, a.name, z.node, err)
}

// zkHeld is a lock held with a's znode.
type zkHeld struct {
	z    *zkLock
	a    zkAttempt
	lost chan struct{} // made by Lost
	stop chan struct{} // closed by Release, to end Lost's watch
}

// Lost is closed once the session that created the znode is gone: the
// znode, and with it the lock or the leadership, went with it. The client
// learns so when it reconnects after a pause.
func (h *zkHeld) Lost() <-chan struct{} {
	if h.lost == nil {
		h.lost, h.stop = make(chan struct{}), make(chan struct{})
		go func() {
			for h.z.conn.SessionID() == h.a.session && h.z.conn.State() != zk.StateExpired {
				select {
				case <-h.stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			close(h.lost)
		}()
	}
	return h.lost
}

// Token is the sequence number of the holder's znode.
func (h *zkHeld) Token() *int64 { t := h.a.seq; return &t }

// Release deletes the holder's znode. ErrNotHeld (certain) is returned when
// the server answered that the znode is gone, or the session that owned it
// has expired, which deleted it. Before the delete, an exists checks the
// znode in the same session: a holder waking from a pause past its session
// timeout learns of the expiry from that read, not from a delete whose
// answer the dead connection lost, which would leave it unknown whether the
// lock was released or lost. An error leaves the outcome unknown; a znode
// left behind is deleted by this process's next Acquire.
func (h *zkHeld) Release(ctx context.Context) error {
	if h.stop != nil {
		close(h.stop)
	}
	z, a := h.z, h.a
	deleteSent := false // a delete may have been applied whose answer was lost
	for {
		sid, err := z.waitSession(ctx, a.session)
		if err != nil {
			return fmt.Errorf("zookeeper-lock: release on %s: %w", z.node, err)
		}
		if sid != a.session {
			if deleteSent {
				return fmt.Errorf("zookeeper-lock: release of %s: the delete got no answer and session %#x has expired since: released or lost, unknown", a.name, a.session)
			}
			return fmt.Errorf("%w: session %#x expired, and %s with it", ErrNotHeld, a.session, a.name)
		}
		type existsResult struct {
			ok    bool
			owner int64
		}
		r, err := zkclient.Call(ctx, func() (existsResult, error) {
			ok, st, err := z.conn.Exists(a.path())
			if err != nil {
				return existsResult{}, err
			}
			return existsResult{ok, st.EphemeralOwner}, nil
		})
		if err != nil {
			if ctx.Err() != nil || !zkConnErr(err) {
				return fmt.Errorf("zookeeper-lock: release on %s: %w", z.node, err)
			}
			continue // a read: ask again, once connected
		}
		if z.conn.SessionID() != a.session {
			continue
		}
		if !r.ok || r.owner != a.session {
			if deleteSent {
				return nil // the delete whose answer was lost
			}
			return fmt.Errorf("%w: %s does not exist", ErrNotHeld, a.name)
		}
		_, err = zkclient.Call(ctx, func() (struct{}, error) { return struct{}{}, z.conn.Delete(a.path(), -1) })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrSessionExpired):
			continue // not applied: see why
		case errors.Is(err, zkclient.ErrNotSent):
		case zkConnErr(err) && ctx.Err() == nil:
			deleteSent = true
			continue
		default:
			deleteSent = true
		}
		return fmt.Errorf("zookeeper-lock: release of %s on %s: %w", a.name, z.node, err)
	}
}

// waitSession waits, within ctx, for the client to hold a session, and
// returns its id; or, when want is not 0, for the session to be another
// than want (the client has learnt that want expired), and returns the id
// then (0 while it has none yet).
func (z *zkLock) waitSession(ctx context.Context, want int64) (int64, error) {
	for {
		sid := z.conn.SessionID()
		if want != 0 && sid != want {
			return sid, nil
		}
		if sid != 0 && z.conn.State() == zk.StateHasSession {
			return sid, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no session with %s (%s): %w", z.node, z.conn.State(), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// zkSeq is the sequence number of a lock znode: the 10 digits the server
// appends to the name. (They would turn negative past 2^31 creations.)
func zkSeq(name string) (int64, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || len(name)-i-1 != 10 {
		return 0, false
	}
	seq, err := strconv.ParseInt(name[i+1:], 10, 64)
	return seq, err == nil
}

// zkConnErr tells the errors that say nothing of the server's state: the
// connection was lost (the request may have been applied, or not), or the
// request was never sent.
func zkConnErr(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrSessionMoved)
}
