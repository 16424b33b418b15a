// Package redisclient is what the Redis Sentinel workloads share: go-redis's
// Sentinel-aware client, as applications use it, and which of its errors
// mean a command certainly did not take effect.
package redisclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/workloads"
)

// Module is the Redis client library's module, which the Redis workloads
// drive their clusters with.
const Module = "github.com/redis/go-redis/v9"

// Sentinel is a client that asks the sentinels for the primary, follows
// their +switch-master announcements, and sends every command to the
// primary it was told of.
type Sentinel struct {
	*goredis.Client

	mu sync.Mutex
	// node is the server the client last connected to. With one
	// connection in the pool, that is the one that answered.
	node string
}

// NewSentinel is a client of the sentinels at addrs, which know the
// primary as service, every command and connection bounded by timeout.
func NewSentinel(addrs []string, service string, timeout time.Duration) (*Sentinel, error) {
	if len(addrs) == 0 || service == "" {
		return nil, errors.New("no sentinel address or service given")
	}
	s := &Sentinel{}
	dialer := &net.Dialer{Timeout: timeout}
	s.Client = goredis.NewFailoverClient(&goredis.FailoverOptions{
		MasterName:    service,
		SentinelAddrs: addrs,
		// The dialer connects to the sentinels too; a server is any
		// address but theirs.
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if host, _, _ := net.SplitHostPort(addr); err == nil && !slices.Contains(addrs, addr) {
				s.mu.Lock()
				s.node = host
				s.mu.Unlock()
			}
			return conn, err
		},
		PoolSize: 1,
		// A retry would hide the failure of the first attempt.
		MaxRetries:  -1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
	})
	return s, nil
}

// Answered is the server that answered the last command.
func (s *Sentinel) Answered() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.node
}

// Classify marks the errors after which a write certainly did not
// happen: a replica's READONLY refusal (of a command, or of a
// transaction, which EXECABORT reports), and a connection that was never
// made.
func Classify(err error) error {
	var op *net.OpError
	switch {
	case err == nil:
		return nil
	case strings.HasPrefix(err.Error(), "READONLY"), strings.HasPrefix(err.Error(), "EXECABORT"):
		return fmt.Errorf("%w: %w", workloads.ErrNotApplied, err)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w: %w", workloads.ErrNotApplied, err)
	}
	return err
}
