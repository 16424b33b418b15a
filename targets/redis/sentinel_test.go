package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

func TestSentinelConfig(t *testing.T) {
	tg, err := SentinelKind{}.Bind(&targets.Spec[Params]{Nodes: 3, Config: map[string]string{"min-replicas-to-write": "1", "sentinel.down-after-milliseconds": "5000"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := tg.(targets.Configured).Settings()
	if c := serverConfig("n1", true, cfg); strings.Contains(c, "replicaof") || !strings.Contains(c, "replica-announce-ip n1\n") ||
		!strings.Contains(c, "min-replicas-to-write 1\n") || !strings.Contains(c, `save ""`) || strings.Contains(c, "sentinel") {
		t.Errorf("primary's config:\n%s", c)
	}
	if c := serverConfig("n2", false, cfg); !strings.Contains(c, "replicaof n1 6379\n") {
		t.Errorf("replica's config:\n%s", c)
	}
	c := sentinelConfig("s2", cfg)
	// Sentinel resolves the monitored name as it reads the monitor line.
	if strings.Index(c, "resolve-hostnames yes") > strings.Index(c, "sentinel monitor chaos n1 6379 2") {
		t.Errorf("resolve-hostnames must come before monitor:\n%s", c)
	}
	for _, want := range []string{"sentinel down-after-milliseconds chaos 5000\n", "sentinel failover-timeout chaos 10000\n"} {
		if !strings.Contains(c, want) || strings.Contains(c, "min-replicas") {
			t.Errorf("sentinel's config lacks %q, or has the servers':\n%s", want, c)
		}
	}
}

// TestBind: a server and version some Debian suite carries, and
// settings by name; Sentinel's own only for the Sentinel target.
func TestBind(t *testing.T) {
	valkey := Params{Server: "valkey"}
	if _, err := (Kind{}).Bind(&targets.Spec[Params]{Nodes: 5, Version: "6.0.16"}); err != nil {
		t.Errorf("redis 6.0.16 refused: %v", err)
	}
	for _, s := range []targets.Spec[Params]{{Nodes: 3}, {Nodes: 3, Version: "8.0.2"}, {Nodes: 3, Version: "8.1.1", Params: valkey}} {
		if _, err := (SentinelKind{}).Bind(&s); err != nil {
			t.Errorf("%+v refused: %v", s, err)
		}
	}
	for _, c := range []struct {
		spec       targets.Spec[Params]
		field, msg string
	}{
		{targets.Spec[Params]{Nodes: 1}, "nodes", "1: a primary needs at least one replica"},
		{targets.Spec[Params]{Nodes: 3, Version: "8.1.1"}, "version", "redis 8.1.1 is in no Debian suite"},
		// Sentinel 6.0 resolves no host names (measured: "Unrecognized
		// sentinel configuration statement" on resolve-hostnames).
		{targets.Spec[Params]{Nodes: 3, Version: "6.0.16"}, "version", "which Sentinel does from Redis 6.2 on (resolve-hostnames)"},
		{targets.Spec[Params]{Nodes: 3, Version: "7.0.15", Params: valkey}, "version", "valkey 7.0.15 is in no Debian suite"},
		{targets.Spec[Params]{Nodes: 3, Params: Params{Server: "keydb"}}, "server", `"keydb": expected redis or valkey`},
	} {
		_, err := (SentinelKind{}).Bind(&c.spec)
		if e, ok := errors.AsType[*plans.FieldError](err); !ok || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%+v: %v; want an error on %s saying %q", c.spec, err, c.field, c.msg)
		}
	}
	if _, err := (Kind{}).Bind(&targets.Spec[Params]{Nodes: 5, Config: map[string]string{"sentinel.parallel-syncs": "2"}}); err == nil {
		t.Error("redis (no sentinels) took a sentinel setting")
	}
	if _, err := (SentinelKind{}).Bind(&targets.Spec[Params]{Nodes: 3, Config: map[string]string{"replicaof": "n2 6379"}}); err == nil {
		t.Error("a plan set replicaof, which chaos sets")
	}
}

// TestSentinelFailover pauses the primary (SIGSTOP) and checks that the
// sentinels promote a replica that takes writes, while the paused primary,
// resumed, still claims to be primary until Sentinel demotes it.
func TestSentinelFailover(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, SentinelKind{}, 3, ""), "sentinel")
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
	var next cluster.Node
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
