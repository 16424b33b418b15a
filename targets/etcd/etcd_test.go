package etcd

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/register"
)

func TestCommand(t *testing.T) {
	c, err := Kind{}.Bind(&targets.Spec[Params]{Nodes: 3, Config: map[string]string{"snapshot-count": "100", "experimental-initial-corrupt-check": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	got := command("n2", 3, "tok", c.(targets.Configured).Settings())
	for _, want := range []string{"--snapshot-count=100", "--experimental-initial-corrupt-check=true"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q missing from %q", want, got)
		}
	}
	i := slices.Index(got, "--initial-cluster")
	if i < 0 || got[i+1] != "n1=http://n1:2380,n2=http://n2:2380,n3=http://n3:2380" {
		t.Errorf("initial cluster in %q", got)
	}
	if got[0] != "sh" || got[4] != "etcd" || !strings.Contains(got[2], `exec "$@" --initial-cluster-state existing --initial-cluster "$(cat /chaos-rejoin)"`) ||
		!strings.HasSuffix(got[2], `exec "$@" --initial-cluster-state new`) {
		t.Errorf("etcd is not exec'd by the shell that reads the rejoin note: %q", got)
	}
	for _, want := range []string{"http://n2:2379", "http://n2:2380", "/var/lib/etcd", "tok"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q missing from %q", want, got)
		}
	}
}

func TestNormVersion(t *testing.T) {
	for in, want := range map[string]string{"": DefaultVersion, "3.7.3": "v3.7.3", "v3.6.0-rc.1": "v3.6.0-rc.1", "3.4.13": "v3.4.13"} {
		if got, err := normVersion(in); got != want || err != nil {
			t.Errorf("normVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"v2.3.8", "latest", "v3.6", "v3.6.1/../x", "v3.4.23"} {
		if _, err := normVersion(bad); err == nil {
			t.Errorf("normVersion(%q) accepted", bad)
		}
	}
}

// TestBind: versions by source, flags by name, before anything starts.
func TestBind(t *testing.T) {
	debian := Params{Source: "debian"}
	for _, s := range []targets.Spec[Params]{
		{Nodes: 3}, {Nodes: 5, Version: "v3.5.21"},
		{Nodes: 3, Version: "3.3.25", Params: debian}, {Nodes: 3, Version: "v3.4.23", Params: debian},
	} {
		if _, err := (Kind{}).Bind(&s); err != nil {
			t.Errorf("%+v refused: %v", s, err)
		}
	}
	for _, c := range []struct {
		spec       targets.Spec[Params]
		field, msg string
	}{
		{targets.Spec[Params]{Nodes: 4}, "nodes", "4: an etcd cluster here has 3 or 5 members"},
		{targets.Spec[Params]{Nodes: 3, Version: "v3.4.23"}, "version", `"v3.4.23": built from the Go module proxy, etcd is v3.4.13 or a release from v3.5 on`},
		{targets.Spec[Params]{Nodes: 3, Version: "3.4.22", Params: debian}, "version", "etcd 3.4.22 is in no Debian suite"},
		{targets.Spec[Params]{Nodes: 3, Params: Params{Source: "git"}}, "source", `"git": expected module or debian`},
		{targets.Spec[Params]{Nodes: 3, Config: map[string]string{"snapshot-cnt": "1"}}, "config.snapshot-cnt", "unknown setting; known: "},
		{targets.Spec[Params]{Nodes: 3, Config: map[string]string{"data-dir": "1"}}, "config.data-dir", "chaos sets this itself"},
	} {
		_, err := Kind{}.Bind(&c.spec)
		if e, ok := errors.AsType[*plans.FieldError](err); !ok || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%+v: %v; want an error on %s saying %q", c.spec, err, c.field, c.msg)
		}
	}
}

// The source a plan leaves out is filled in: the module proxy.
func TestBindDefaultSource(t *testing.T) {
	s := targets.Spec[Params]{Nodes: 3}
	if _, err := (Kind{}).Bind(&s); err != nil || s.Params.Source != "module" {
		t.Errorf("source %q, %v; want module", s.Params.Source, err)
	}
}

func TestReadMode(t *testing.T) {
	if s, err := register.Dial(t.Context(), "etcd-register", []string{"n1:2379"}, 0, "sync"); err == nil {
		s.Close()
		t.Error("read mode sync accepted")
	}
}

// TestClassify checks, against this gRPC version's real errors, that a
// write never sent is not applied and one lost after sending is unknown.
func TestClassify(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close() // nobody listens there now: connections are refused
	err = openAddr(t, l.Addr().String(), "").Write(ctx, "k", 1)
	if !errors.Is(err, workloads.ErrNotApplied) {
		t.Errorf("write to a closed port: %v, want ErrNotApplied", err)
	}
	t.Logf("write to a closed port: %v after %s", err, time.Since(start).Round(time.Millisecond))
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	// A server that takes the request, then drops the connection.
	if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var srv *grpc.Server
	srv = grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		go srv.Stop()
		<-stream.Context().Done()
		return nil
	}))
	go srv.Serve(l)
	defer srv.Stop()
	s := openAddr(t, l.Addr().String(), "")
	if err := s.Cas(ctx, "k", 1, 2); err == nil || errors.Is(err, workloads.ErrNotApplied) {
		t.Errorf("cas lost after sending: %v, want an unknown outcome", err)
	} else {
		t.Logf("cas lost after sending: %v", err)
	}
}

// start starts an n-member cluster in a run of its own, removed at the
// end, of the etcd version in $CHAOS_ETCD_VERSION (default: DefaultVersion).
func start(t *testing.T, n int) (*containers.Run, []cluster.Node) {
	return testenv.Cluster(t, testenv.Bind(t, Kind{}, n, os.Getenv("CHAOS_ETCD_VERSION")), "etcdtest")
}

// open is the register workload's store bound to n, dialled from the host.
func open(t *testing.T, n cluster.Node, readMode string) register.Store {
	return openAddr(t, net.JoinHostPort(n.Container.IP, strconv.Itoa(ClientPort)), readMode)
}

// openAddr is the etcd-register store dialled at addr, closed when t ends.
func openAddr(t *testing.T, addr, readMode string) register.Store {
	t.Helper()
	s, err := register.Dial(t.Context(), "etcd-register", []string{addr}, 0, readMode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestCluster3(t *testing.T) {
	run, nodes := start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ready(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	leader, err := Cluster{}.Leader(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader: %s", leader.Container.Name)
	victim := slices.IndexFunc(nodes, func(n cluster.Node) bool { return n.Container.Name == leader.Container.Name })
	// A leader that does not answer us itself is found through the others.
	hidden := slices.Clone(nodes)
	hidden[victim].Container.IP = "192.0.2.1" // TEST-NET: nobody there
	if l, err := (Cluster{}).Leader(ctx, hidden); err != nil || l.Container.Name != leader.Container.Name {
		t.Errorf("leader with the leader silent: %s, %v; want %s", l.Container.Name, err, leader.Container.Name)
	}

	s := open(t, nodes[0], "")
	op := func(f func(context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return f(ctx)
	}
	read := func(s register.Store, key string) *int64 {
		var v *int64
		if err := op(func(ctx context.Context) (err error) { v, err = s.Read(ctx, key); return }); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := read(s, "k"); v != nil {
		t.Fatalf("read of a new key: %d", *v)
	}
	if err := op(func(ctx context.Context) error { return s.Write(ctx, "k", 1) }); err != nil {
		t.Fatal(err)
	}
	if v := read(s, "k"); v == nil || *v != 1 {
		t.Fatalf("read %v after writing 1", v)
	}
	if err := op(func(ctx context.Context) error { return s.Cas(ctx, "k", 1, 2) }); err != nil {
		t.Fatalf("cas 1→2: %v", err)
	}
	if err := op(func(ctx context.Context) error { return s.Cas(ctx, "k", 1, 3) }); !errors.Is(err, workloads.ErrNotApplied) {
		t.Fatalf("cas 1→3 on 2: %v, want ErrNotApplied", err)
	}

	// Kill the leader; the others elect another, and the killed member
	// comes back with its data.
	before, errs := ask(ctx, nodes[victim:victim+1], status)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	vs := open(t, nodes[victim], "serializable")
	if err := run.Signal(ctx, leader.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	run.Wait(ctx, leader.Container) // exit status 137 is expected
	// Never sent, since nothing is there to connect to: certainly not applied.
	if err := op(func(ctx context.Context) error { return vs.Write(ctx, "k", 9) }); !errors.Is(err, workloads.ErrNotApplied) {
		t.Fatalf("write to the killed member: %v, want ErrNotApplied", err)
	}
	others := slices.Delete(slices.Clone(nodes), victim, victim+1)
	if err := targets.WaitReady(ctx, "survivors", 10*time.Second, func(ctx context.Context) error { return ready(ctx, others) }); err != nil {
		t.Fatal(err)
	}
	if l, err := (Cluster{}).Leader(ctx, others); err != nil || l.Container.Name == leader.Container.Name {
		t.Fatalf("leader after kill: %s, %v", l.Container.Name, err)
	}
	// Written while the member is down: it must catch up on rejoining.
	if err := op(func(ctx context.Context) error { return open(t, others[0], "").Write(ctx, "k2", 5) }); err != nil {
		t.Fatal(err)
	}

	c, err := run.Restart(ctx, leader.Container)
	if err != nil {
		t.Fatal(err)
	}
	nodes[victim].Container = c
	began := time.Now()
	if err := targets.WaitReady(ctx, "restarted", 10*time.Second, func(ctx context.Context) error { return ready(ctx, nodes) }); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted member rejoined in %s", time.Since(began).Round(time.Millisecond))
	after, errs := ask(ctx, nodes[victim:victim+1], status)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if before[0].Header.MemberId != after[0].Header.MemberId {
		t.Errorf("member id %x became %x: data lost?", before[0].Header.MemberId, after[0].Header.MemberId)
	}
	// Serializable reads answer from the member's own store: what it had
	// before the kill, and what it missed.
	rs := open(t, nodes[victim], "serializable")
	if v := read(rs, "k"); v == nil || *v != 2 {
		t.Errorf("restarted member reads k = %v, want 2", v)
	}
	if v := read(rs, "k2"); v == nil || *v != 5 {
		t.Errorf("restarted member reads k2 = %v, want 5", v)
	}
}

func TestReadiness5(t *testing.T) {
	_, nodes := start(t, 5)
	if _, err := (Cluster{}).Leader(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
}
