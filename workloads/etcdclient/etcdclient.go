// Package etcdclient is what the etcd workloads share: a client bound to
// one member, with settings fit for a cluster under faults.
package etcdclient

import (
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
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
