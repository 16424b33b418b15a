package nemesis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/nemesis/vdsoclock"
	"github.com/chaos-testing/chaos/plans"
	chaostargets "github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/targets/etcd"
	"github.com/chaos-testing/chaos/targets/redis"
	"github.com/chaos-testing/chaos/targets/zookeeper"
	"github.com/chaos-testing/chaos/workloads/register"
)

// nodeEnv is an Env whose only candidate is one node of a real cluster.
// The faults these tests start ask nothing of the target (their World's
// is nil).
type nodeEnv struct {
	run  *containers.Run
	node cluster.Node
}

func (e nodeEnv) Candidates(context.Context, string) []nemesis.Process {
	return []nemesis.Process{{Name: e.node.Container.Name, Container: e.node.Container}}
}
func (e nodeEnv) Nodes(bool) []cluster.Node { return []cluster.Node{e.node} }
func (e nodeEnv) Signal(ctx context.Context, p nemesis.Process, sig string) error {
	return e.run.Signal(ctx, p.Container, sig)
}
func (e nodeEnv) Restart(context.Context, nemesis.Process) error { return nil }
func (e nodeEnv) NetExec(ctx context.Context, p nemesis.Process, argv ...string) error {
	return e.run.NetnsExec(ctx, p.Container, argv...)
}
func (e nodeEnv) Address(p nemesis.Process) string { return p.Container.IP }
func (e nodeEnv) HostPID(ctx context.Context, p nemesis.Process) (int, error) {
	return e.run.HostPID(ctx, p.Container)
}

func clockFault(offset time.Duration, clocks string, strobe time.Duration) nemesis.Entry[nemesis.ClockParams] {
	return nemesis.Entry[nemesis.ClockParams]{Kind: "clock", Schedule: plans.Schedule{Target: "nodes", Count: 1, Duration: plans.Duration{Duration: time.Minute}},
		Params: nemesis.ClockParams{Offset: plans.Duration{Duration: offset}, Clocks: clocks, Strobe: plans.Duration{Duration: strobe}}}
}

// TestClockOnRedis bumps a Redis node's clock: the server's own TIME reads
// the offset within 100 ms, a key with 10 s to live is gone at once, and
// the reset puts TIME back within 100 ms.
func TestClockOnRedis(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, redis.Kind{}, 1, ""), "clockredis")
	env := nodeEnv{run, nodes[0]}
	c := goredis.NewClient(&goredis.Options{Addr: net.JoinHostPort(nodes[0].Container.IP, strconv.Itoa(redis.Port))})
	defer c.Close()
	ctx := context.Background()
	// skew is how far the server's clock is from the harness's, and how
	// far that may be wrong: half the round trip of the best of five
	// questions (a loaded machine answers some late).
	var slack time.Duration
	skew := func() time.Duration {
		var best, rtt time.Duration
		for i := range 5 {
			before := time.Now()
			tm, err := c.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(before); i == 0 || took < rtt {
				best, rtt = tm.Sub(before.Add(took/2)), took
			}
		}
		slack = rtt / 2
		return best
	}
	near := func(got, want time.Duration) bool { return (got - want).Abs() < 100*time.Millisecond+slack }
	if s := skew(); !near(s, 0) {
		t.Fatalf("server clock %s off before the fault", s)
	}
	if err := c.Set(ctx, "k", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	w := nemesis.NewWorld(env, nil)
	in, err := nemesis.Clock{}.Start(ctx, w, clockFault(20*time.Second, "realtime", 0), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	landed := time.Now()
	s := skew()
	t.Logf("%q: server clock %s ahead, %s after the fault", in.Targets, s, time.Since(landed))
	if !near(s, 20*time.Second) {
		t.Errorf("server clock %s ahead after a +20s bump", s)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("key with 10s to live: exists %d (%v) right after a +20s bump", n, err)
	}
	if err := (nemesis.Clock{}).Stop(ctx, w, in); err != nil {
		t.Fatal(err)
	}
	if s := skew(); !near(s, 0) {
		t.Errorf("server clock %s off after the reset", s)
	}
	pid, _ := run.HostPID(ctx, nodes[0].Container)
	if ok, err := vdsoclock.Patched(pid); ok || err != nil {
		t.Errorf("redis-server still patched after the heal: %v, %v", ok, err)
	}
}

// strobeWhileWriting strobes every clock of node (monotonic too) between
// +5 s and none every 50 ms for 5 s, while write writes through another
// node; the cluster must keep taking writes during the strobe and after,
// and the strobed server must still be running.
func strobeWhileWriting(t *testing.T, run *containers.Run, nodes []cluster.Node, node int, write func(ctx context.Context, i int) error) {
	ctx := context.Background()
	env := nodeEnv{run, nodes[node]}
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			if write(wctx, i) == nil {
				ok.Add(1)
			} else {
				failed.Add(1)
			}
			cancel()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	w := nemesis.NewWorld(env, nil)
	in, err := nemesis.Clock{}.Start(ctx, w, clockFault(5*time.Second, "all", 50*time.Millisecond), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		close(stop)
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	during := ok.Load()
	if err := (nemesis.Clock{}).Stop(ctx, w, in); err != nil {
		t.Error(err)
	}
	time.Sleep(2 * time.Second)
	close(stop)
	<-done
	t.Logf("%q: %d writes during the strobe, %d in all, %d failed", in.Targets, during, ok.Load(), failed.Load())
	if during == 0 || ok.Load() == during {
		t.Errorf("writes stopped: %d during the strobe, %d in all", during, ok.Load())
	}
	if !run.Running(ctx, nodes[node].Container) {
		t.Errorf("%s died while strobed", nodes[node].Container.Name)
	}
	pid, _ := run.HostPID(ctx, nodes[node].Container)
	if patched, err := vdsoclock.Patched(pid); patched || err != nil {
		t.Errorf("%s still patched after the heal: %v, %v", nodes[node].Container.Name, patched, err)
	}
}

func TestClockStrobeOnEtcd(t *testing.T) {
	strobeLeader(t, testenv.Bind(t, etcd.Kind{}, 3, ""), "etcd-register", etcd.ClientPort, "linearizable")
}

func TestClockStrobeOnZooKeeper(t *testing.T) {
	strobeLeader(t, testenv.Bind(t, zookeeper.Kind{}, 3, ""), "zookeeper-register", zookeeper.ClientPort, "sync")
}

// strobeLeader starts target, a cluster of 3 nodes that can tell its
// leader, and strobes its leader while a register client writes through
// another node.
func strobeLeader(t *testing.T, target chaostargets.Target, workload string, port int, readMode string) {
	run, nodes := testenv.Cluster(t, target, "clockstrobe")
	leader, err := target.(nemesis.Leaderer).Leader(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	other := nodes[0]
	if other.Container.Name == leader.Container.Name {
		other = nodes[1]
	}
	store, err := register.Dial(t.Context(), workload, []string{net.JoinHostPort(other.Container.IP, strconv.Itoa(port))}, 0, readMode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	strobeWhileWriting(t, run, nodes, indexOf(nodes, leader), func(ctx context.Context, i int) error {
		return store.Write(ctx, "k", int64(i))
	})
}

func indexOf(nodes []cluster.Node, n cluster.Node) int {
	for i := range nodes {
		if nodes[i].Container.Name == n.Container.Name {
			return i
		}
	}
	panic(fmt.Sprintf("node %s not in the cluster", n.Container.Name))
}
