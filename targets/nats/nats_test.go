package nats

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/register"
)

// bindCluster is the cluster spec asks for, as its kind binds it.
func bindCluster(s targets.Spec[struct{}]) (Cluster, error) {
	c, err := Kind{}.Bind(&s)
	cl, _ := c.(Cluster)
	return cl, err
}

func TestBind(t *testing.T) {
	if _, err := bindCluster(targets.Spec[struct{}]{Nodes: 3}); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		spec       targets.Spec[struct{}]
		field, msg string
	}{
		{targets.Spec[struct{}]{Nodes: 4}, "nodes", "4: a JetStream cluster here has 3 or 5 servers"},
		{targets.Spec[struct{}]{Nodes: 3, Version: "2"}, "version", `"v2": expected a NATS server v2 release`},
	} {
		_, err := bindCluster(c.spec)
		if e, ok := errors.AsType[*plans.FieldError](err); !ok || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%+v: %v; want an error on %s saying %q", c.spec, err, c.field, c.msg)
		}
	}
}

// A plan's settings land in their block; those chaos sets, and unknown
// ones, are refused by name.
func TestConfig(t *testing.T) {
	c, err := bindCluster(targets.Spec[struct{}]{Nodes: 3, Config: map[string]string{"sync_interval": "always", "write_deadline": `"2s"`}})
	if err != nil {
		t.Fatal(err)
	}
	got := config("n2", 3, c.Settings())
	for _, want := range []string{
		"server_name: n2\n", "listen: 0.0.0.0:4222\n", "write_deadline: \"2s\"\njetstream {\n",
		"  store_dir: /srv/nats\n  sync_interval: always\n}\n",
		"  routes: [nats-route://n1:6222, nats-route://n2:6222, nats-route://n3:6222]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
	for k, field := range map[string]string{"store_dir": "config.store_dir", "sync_intervall": "config.sync_intervall"} {
		if _, err := bindCluster(targets.Spec[struct{}]{Nodes: 3, Config: map[string]string{k: "x"}}); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("config %s: %v; want an error on %s", k, err, field)
		}
	}
}

// A cluster comes up with one meta leader; the leader killed, the others
// elect another, and it rejoins when restarted.
func TestCluster3(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, Kind{}, 3, ""), "nats")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	leader, err := Cluster{}.Leader(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	registers(t, nodes)
	v, err := Cluster{}.ServerVersion(ctx, nodes[0])
	if err != nil || "v"+v != DefaultVersion {
		t.Errorf("version %q, %v; want %s", v, err, DefaultVersion)
	}
	victim := slices.IndexFunc(nodes, func(n cluster.Node) bool { return n.Container.Name == leader.Container.Name })
	if err := run.Signal(ctx, leader.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	run.Wait(ctx, leader.Container) // exit status 137 is expected
	// The survivors name the dead leader until they elect another.
	others := slices.Delete(slices.Clone(nodes), victim, victim+1)
	began := time.Now()
	if err := targets.WaitReady(ctx, "a new leader", 30*time.Second, func(ctx context.Context) error {
		_, err := Cluster{}.Leader(ctx, others)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("new leader in %s", time.Since(began).Round(time.Millisecond))
	c, err := run.Restart(ctx, leader.Container)
	if err != nil {
		t.Fatal(err)
	}
	nodes[victim].Container = c
	if err := targets.WaitReady(ctx, "restarted", 30*time.Second, func(ctx context.Context) error { return ready(ctx, nodes) }); err != nil {
		t.Fatal(err)
	}
}

// registers checks the nats-register store on a fresh cluster: from every
// server, in every read mode, reads see writes and a cas on a stale value
// is certainly not applied; with the bucket made, the leader is its
// stream's.
func registers(t *testing.T, nodes []cluster.Node) {
	t.Helper()
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, net.JoinHostPort(n.Container.IP, strconv.Itoa(ClientPort)))
	}
	op := func(f func(context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return f(ctx)
	}
	// Each store is a client process of the cluster, as in a run: bound
	// to one server, and making the bucket replicated on every one.
	for i, mode := range []string{"leader", "direct", "checked", "leader"} {
		s, err := register.Dial(t.Context(), "nats-register", addrs, i, mode)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		key := "k" + strconv.Itoa(i)
		var v *int64
		read := func(ctx context.Context) (err error) { v, err = s.Read(ctx, key); return }
		err = op(read)
		// Right after the bucket is made, its stream may not answer
		// direct gets yet ("no responders"): asked again, it does.
		for try := 0; err != nil && strings.Contains(err.Error(), "no responders") && try < 10; try++ {
			time.Sleep(500 * time.Millisecond)
			err = op(read)
		}
		if err != nil || v != nil {
			t.Fatalf("%s read of a new key: %v, %v", mode, v, err)
		}
		// The bucket's stream may still be electing its leader: a write
		// it refused ("no response from stream") did not happen, and
		// is sent again.
		err = op(func(ctx context.Context) error { return s.Write(ctx, key, 1) })
		for try := 0; errors.Is(err, workloads.ErrNotApplied) && try < 10; try++ {
			time.Sleep(500 * time.Millisecond)
			err = op(func(ctx context.Context) error { return s.Write(ctx, key, 1) })
		}
		if err != nil {
			t.Fatal(err)
		}
		// A direct get may lag the write on a replica: try a while.
		for try := 0; try < 10; try++ {
			if err := op(func(ctx context.Context) (err error) { v, err = s.Read(ctx, key); return }); err != nil {
				t.Fatal(err)
			}
			if v != nil && *v == 1 || mode == "leader" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if v == nil || *v != 1 {
			t.Fatalf("%s read %v after writing 1", mode, v)
		}
		if err := op(func(ctx context.Context) error { return s.Cas(ctx, key, 1, 2) }); err != nil {
			t.Fatalf("%s cas 1→2: %v", mode, err)
		}
		if err := op(func(ctx context.Context) error { return s.Cas(ctx, key, 1, 3) }); !errors.Is(err, workloads.ErrNotApplied) {
			t.Fatalf("%s cas 1→3 on 2: %v, want ErrNotApplied", mode, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := (Cluster{}).Leader(ctx, nodes); err != nil {
		t.Errorf("the bucket's leader: %v", err)
	}
}
