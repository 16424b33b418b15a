// Package etcdclient is what the etcd workloads share: a client bound to
// one member, with settings fit for a cluster under faults.
package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/chaos-testing/chaos/workloads"
)

// Module is the etcd client library's module.
const Module = "go.etcd.io/etcd/client/v3"

// warnings is a logger of warnings and errors to stderr, or none if it
// cannot be built.
func warnings() *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.WarnLevel)
	cfg.Sampling = nil
	lg, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return lg
}

// Connect makes a client of the one member a client process is bound to.
func Connect(node string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		// Only the bound node, as in Jepsen: the client must not fail over
		// to another member, or a fault on its node would go unobserved.
		Endpoints:   []string{node},
		DialTimeout: time.Second,
		// Warnings go to the client's log (logs/cN.log of the run): they
		// include each retry the client makes on its own, which the history
		// cannot show: a write it sends twice is applied twice.
		Logger: warnings(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			// gRPC's default reconnect backoff grows to 2 minutes: a client
			// of a member killed for a while would miss it coming back.
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		})},
	})
}

// Classify marks the errors after which a sent write certainly did not
// happen. Everything else (timeouts, a connection lost after sending,
// "request timed out" from a server whose proposal may still commit) stays
// unknown.
func Classify(err error) error {
	if err == nil || !notApplied(err) {
		return err
	}
	return fmt.Errorf("%w: %v", workloads.ErrNotApplied, err)
}

func notApplied(err error) bool {
	// The server refuses these before proposing the request to Raft, or
	// its apply refuses the whole request (a lease it does not have).
	if errors.Is(err, rpctypes.ErrTooManyRequests) || errors.Is(err, rpctypes.ErrRequestTooLarge) ||
		errors.Is(err, rpctypes.ErrNoSpace) || errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return true
	}
	// Raft dropped the proposal before it entered any log (a leader handing
	// over leadership, or over its limit of uncommitted entries); etcd
	// passes that on as an unknown gRPC error with raft's message.
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unknown && st.Message() == "raft proposal dropped"
}

// Connected waits, within ctx, for the connection to the node to be up.
// The etcd client has gRPC hold a request until a connection is up, and a
// request that waited in vain fails just like one whose answer was lost
// (deadline exceeded), so a write is only handed over once connected: a
// write refused here was certainly never sent.
func Connected(ctx context.Context, cli *clientv3.Client) error {
	conn := cli.ActiveConnection()
	for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		conn.Connect() // an idle connection (none yet) starts connecting
		if !conn.WaitForStateChange(ctx, st) {
			return fmt.Errorf("%w: not connected to %s (%s)", workloads.ErrNotApplied, cli.Endpoints()[0], st)
		}
	}
	return nil
}
