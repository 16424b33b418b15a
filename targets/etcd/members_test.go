package etcd

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/internal/testenv"
)

// A member joining names every member, by name and peer address; one
// added and not started yet is named after its address's host.
func TestInitialCluster(t *testing.T) {
	got := initialCluster([]*etcdserverpb.Member{
		{Name: "n2", PeerURLs: []string{"http://n2:2380"}},
		{PeerURLs: []string{"http://n3:2380"}},
		{Name: "n1", PeerURLs: []string{"http://n1:2380"}},
	})
	if want := "n1=http://n1:2380,n2=http://n2:2380,n3=http://n3:2380"; got != want {
		t.Errorf("initialCluster = %q, want %q", got, want)
	}
}

// TestReplaceMember replaces a member of a real 3-member cluster as the
// remove-member fault does: n3, killed, is removed (the cluster then lists
// two members), added back and started with its data wiped; once Joined,
// the cluster lists n1, n2 and n3 again, each started, under a new ID for
// n3, which serves a value written while it was out, and keeps its data
// (and its ID) through a restart.
func TestReplaceMember(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, Kind{}, 3, ""), "replaceetcd")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := func(n cluster.Node) *clientv3.Client {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{net.JoinHostPort(n.Container.IP, strconv.Itoa(ClientPort))},
			DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Close() })
		return cli
	}
	members := func() (names []string, ids map[string]uint64) {
		ml, err := client(nodes[0]).MemberList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = map[string]uint64{}
		for _, m := range ml.Members {
			names = append(names, m.Name)
			ids[m.Name] = m.ID
		}
		slices.Sort(names)
		return names, ids
	}
	_, before := members()
	n3 := nodes[2]
	if err := run.Signal(ctx, n3.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	// etcd refuses a change within 5 s of a member's start or of another
	// change (its leader must have seen the others healthy that long):
	// the fault tries again too.
	testenv.Eventually(ctx, t, func() (string, error) { return Cluster{}.RemoveMember(ctx, nodes[:2], n3) })
	if names, _ := members(); !slices.Equal(names, []string{"n1", "n2"}) {
		t.Fatalf("members after the removal: %q", names)
	}
	if names, err := (Cluster{}).Members(ctx, nodes); err != nil || !slices.Equal(names, []string{"n1", "n2"}) {
		t.Errorf("Members after the removal: %q, %v", names, err)
	}
	if _, err := client(nodes[0]).Put(ctx, "while-out", "v"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(ctx, t, func() (string, error) { return Cluster{}.AddMember(ctx, run, nodes[:2], n3) })
	var err error
	if n3.Container, err = run.Restart(ctx, n3.Container); err != nil {
		t.Fatal(err)
	}
	if err := (Cluster{}).Joined(ctx, run, nodes[:2], n3); err != nil {
		t.Fatal(err)
	}
	names, after := members()
	if !slices.Equal(names, []string{"n1", "n2", "n3"}) || after["n3"] == before["n3"] {
		t.Fatalf("members after the join: %q, n3 %x (was %x)", names, after["n3"], before["n3"])
	}
	if names, err := (Cluster{}).Members(ctx, nodes); err != nil || !slices.Equal(names, []string{"n1", "n2", "n3"}) {
		t.Errorf("Members after the join: %q, %v", names, err)
	}
	get := func() {
		r, err := client(n3).Get(ctx, "while-out", clientv3.WithSerializable())
		if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
			t.Fatalf("n3's own read of the value written while it was out: %v, %v", r, err)
		}
	}
	get()
	// Its restarts now keep its data: the note is gone.
	if err := run.Signal(ctx, n3.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	run.Wait(ctx, n3.Container) // exits 137, an error

	if n3.Container, err = run.Restart(ctx, n3.Container); err != nil {
		t.Fatal(err)
	}
	if err := (Cluster{}).Joined(ctx, run, nodes[:2], n3); err != nil {
		t.Fatal(err)
	}
	if _, ids := members(); ids["n3"] != after["n3"] {
		t.Errorf("n3 came back from a restart as %x, not %x", ids["n3"], after["n3"])
	}
	get()
}
