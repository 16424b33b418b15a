package zookeeper

import (
	"context"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/targets"
)

// TestReconfigureMember changes a real ensemble's members as the
// remove-member fault does, by dynamic reconfiguration: server 3, killed,
// is removed (the configuration then lists servers 1 and 2), added back
// and started; once Joined, the configuration lists all three again and
// server 3 serves a value written while it was out.
func TestReconfigureMember(t *testing.T) {
	cli := testenv.Docker(t)
	run := testenv.NewRun(t, cli, "reconfigzk")
	e, err := bindEnsemble(targets.Spec[struct{}]{Nodes: 3, Config: map[string]string{"reconfigEnabled": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ChangesMembers(); err != nil {
		t.Fatal(err)
	}
	nodes := testenv.Start(t, cli, run, e)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	servers := func() string {
		t.Helper()
		names, err := e.Members(ctx, nodes[:2])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(names, ",")
	}
	if got := servers(); got != "n1,n2,n3" {
		t.Fatalf("servers at the start: %s", got)
	}
	n3 := nodes[2]
	if err := run.Signal(ctx, n3.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	run.Wait(ctx, n3.Container) // exits 137, an error
	testenv.Eventually(ctx, t, func() (string, error) { return e.RemoveMember(ctx, nodes[:2], n3) })
	if got := servers(); got != "n1,n2" {
		t.Fatalf("servers after the removal: %s", got)
	}
	if _, err := withSession(ctx, nodes[0], func(c *zk.Conn) (string, error) {
		return c.Create("/while-out", []byte("v"), 0, zk.WorldACL(zk.PermAll))
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(ctx, t, func() (string, error) { return e.AddMember(ctx, run, nodes[:2], n3) })
	if n3.Container, err = run.Restart(ctx, n3.Container); err != nil {
		t.Fatal(err)
	}
	if err := (e).Joined(ctx, run, nodes[:2], n3); err != nil {
		t.Fatal(err)
	}
	if got := servers(); got != "n1,n2,n3" {
		t.Fatalf("servers after the join: %s", got)
	}
	c, _, err := zk.Connect([]string{net.JoinHostPort(n3.Container.IP, strconv.Itoa(ClientPort))}, 4*time.Second,
		zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, _, err := c.Get("/while-out"); err != nil || string(v) != "v" {
		t.Errorf("n3's read of the value written while it was out: %q, %v", v, err)
	}
}
