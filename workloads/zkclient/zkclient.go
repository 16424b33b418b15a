// Package zkclient is what the ZooKeeper workloads share: a session bound
// to one server, and requests bounded by a context, which the zk library
// does not take.
package zkclient

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/workloads"
)

// Module is the ZooKeeper client library's module.
const Module = "github.com/go-zookeeper/zk"

// Connect opens a session with the one server a client process is bound
// to, as in Jepsen: the client must not fail over to another server, or a
// fault on its node would go unobserved. Reconnects go to stderr, the
// process's log.
func Connect(node string, sessionTimeout time.Duration) (*zk.Conn, error) {
	return ConnectWatching(node, sessionTimeout, nil)
}

// Open is Connect, for a workload's client that works with plain
// requests: a session timeout of 4 s (the server allows 1 to 10 s at
// tickTime 500; the client gives up on a silent connection after two
// thirds of it and reconnects), and a first session awaited for up to
// 10 s.
func Open(node string) (*zk.Conn, error) {
	conn, err := Connect(node, 4*time.Second)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Session(ctx, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", node, err)
	}
	return conn, nil
}

// ConnectWatching is Connect with onEvent called for every event the
// session receives, in the order they come off the connection, before the
// event reaches its watch and before any later answer (nil: none).
func ConnectWatching(node string, sessionTimeout time.Duration, onEvent zk.EventCallback) (*zk.Conn, error) {
	conn, _, err := zk.Connect([]string{node}, sessionTimeout,
		zk.WithHostProvider(&oneHost{}),
		zk.WithLogger(log.New(os.Stderr, "zk "+node+": ", log.LstdFlags|log.Lmicroseconds)),
		zk.WithEventCallback(onEvent))
	return conn, err
}

// ErrNotSent is a request never handed to the client, because ctx had
// ended: it certainly was not applied.
var ErrNotSent = errors.New("not sent")

// Call runs f, one request of the zk client, until ctx ends. When ctx ends
// first, f's request is still queued or in flight and may yet be applied,
// so that error is an unknown outcome.
func Call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, fmt.Errorf("no answer: %w", ctx.Err())
	}
}

// oneHost is a zk.HostProvider for the one server a client is bound to. The
// library's default resolves host names once, at Connect, and would never
// find a node that a restart gave another address; this one leaves the
// name to the dialer, which resolves it on every connection.
type oneHost struct {
	server  string
	retried bool // a connection attempt failed since the last success
}

func (h *oneHost) Init(servers []string) error {
	if len(servers) != 1 {
		return fmt.Errorf("zkclient: %d servers, want the bound one", len(servers))
	}
	h.server = servers[0]
	return nil
}

func (h *oneHost) Len() int { return 1 }

// Next returns the server. retryStart makes the client pause a second (and
// fail its queued requests): not before the first attempt after a success,
// so a lost connection is retried at once, but before every later one.
func (h *oneHost) Next() (string, bool) {
	retry := h.retried
	h.retried = true
	return h.server, retry
}

func (h *oneHost) Connected() { h.retried = false }

// Session waits, within ctx, for the client to hold a session. The client
// queues requests while it reconnects and sends them once it is back, so a
// request that waited in vain may still be sent after its caller gave up;
// holding it back until connected keeps that window small, and a request
// refused here was certainly never sent.
func Session(ctx context.Context, conn *zk.Conn) error {
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: no session with %s (%s)", workloads.ErrNotApplied, conn.Server(), conn.State())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Classify marks the errors after which a write certainly did not happen:
// the server's own refusals, and ErrNoServer, which the client gives the
// requests it flushes from its queue unsent while it cannot connect. A
// connection lost or a session expired after sending (ErrConnectionClosed,
// ErrSessionExpired) leaves the outcome unknown, as does a timeout.
func Classify(err error) error {
	switch {
	case err == nil, errors.Is(err, workloads.ErrNotApplied):
		return err
	case errors.Is(err, ErrNotSent):
		return fmt.Errorf("%w: %v", workloads.ErrNotApplied, err)
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode),
		errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoServer):
		return fmt.Errorf("%w: %v", workloads.ErrNotApplied, err)
	}
	return err
}
