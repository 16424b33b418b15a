package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/targets"
)

func TestSentinelConfig(t *testing.T) {
	if c := serverConfig("n1", true); strings.Contains(c, "replicaof") || !strings.Contains(c, "replica-announce-ip n1\n") {
		t.Errorf("primary's config:\n%s", c)
	}
	if c := serverConfig("n2", false); !strings.Contains(c, "replicaof n1 6379\n") {
		t.Errorf("replica's config:\n%s", c)
	}
	c := sentinelConfig("s2")
	// Sentinel resolves the monitored name as it reads the monitor line.
	if strings.Index(c, "resolve-hostnames yes") > strings.Index(c, "sentinel monitor chaos n1 6379 2") {
		t.Errorf("resolve-hostnames must come before monitor:\n%s", c)
	}
}

// TestSentinelFailover pauses the primary (SIGSTOP) and checks that the
// sentinels promote a replica that takes writes, while the paused primary,
// resumed, still claims to be primary until Sentinel demotes it.
func TestSentinelFailover(t *testing.T) {
	run, nodes := testenv.Cluster(t, Sentinel{}, "", 3, "sentinel")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	first, err := Sentinel{}.Leader(ctx, nodes)
	if err != nil || first.Container.Name != "n1" {
		t.Fatalf("leader at start: %s, %v; want n1", first.Container.Name, err)
	}
	if role, accepts, err := (Sentinel{}).Role(ctx, first); role != "master" || !accepts || err != nil {
		t.Fatalf("n1 claims %q, accepts writes %v, %v", role, accepts, err)
	}
	if err := run.Signal(ctx, first.Container, "STOP"); err != nil {
		t.Fatal(err)
	}
	var next targets.Node
	err = targets.WaitReady(ctx, "failover", 30*time.Second, func(ctx context.Context) error {
		next, err = Sentinel{}.Leader(ctx, nodes)
		if err == nil && next.Container.Name == first.Container.Name {
			err = context.DeadlineExceeded
		}
		return err
	})
	if err := run.Signal(ctx, first.Container, "CONT"); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s promoted", next.Container.Name)
	if role, accepts, err := (Sentinel{}).Role(ctx, next); role != "master" || !accepts || err != nil {
		t.Errorf("%s claims %q, accepts writes %v, %v", next.Container.Name, role, accepts, err)
	}
	err = targets.WaitReady(ctx, "demotion of n1", 30*time.Second, func(ctx context.Context) error {
		role, _, err := Sentinel{}.Role(ctx, first)
		if err == nil && role != "slave" {
			err = context.DeadlineExceeded
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}
