package nemesis_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/nfqueue"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets/redis"
)

// Queue makes nodeEnv a nemesis.QueueEnv, as the runner's env is.
func (e nodeEnv) Queue(ctx context.Context, p nemesis.Process, num uint16) (nemesis.PacketQueue, error) {
	netns, err := e.run.Netns(ctx, p.Container)
	if err != nil {
		return nil, err
	}
	return nfqueue.Open(netns, num)
}

// packetFault starts a fault of kind k, named kind, with params on the
// node, and returns its heal.
func packetFault[P any](t *testing.T, env nodeEnv, k nemesis.Kind[P], kind string, params P) func() {
	t.Helper()
	w := nemesis.NewWorld(env, nil)
	e := nemesis.Entry[P]{Kind: kind, Schedule: plans.Schedule{Target: "nodes", Count: 1}, Params: params}
	ctx := context.Background()
	in, err := k.Start(ctx, w, e, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %q", kind, in.Targets)
	return func() {
		if err := k.Stop(ctx, w, in); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDelayHoldsWithinItsBand: a delay of 100 ms ± 20 ms (uniform) on a
// Redis node makes each of 200 TCP connections from the harness take 80
// to 150 ms (the SYN is held; up to 30 ms over are a loaded machine's
// timers), 100 ms ± 10 on average; its heal gives them back at once.
func TestDelayHoldsWithinItsBand(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, redis.Kind{}, 1, ""), "delayredis")
	env := nodeEnv{run, nodes[0]}
	addr := net.JoinHostPort(nodes[0].Container.IP, strconv.Itoa(redis.Port))
	connects := func(n int) (lo, hi, mean time.Duration) {
		lo = time.Hour
		for range n {
			start := time.Now()
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			lo, hi, mean = min(lo, took), max(hi, took), mean+took/time.Duration(n)
		}
		return lo, hi, mean
	}
	if _, hi, _ := connects(50); hi > 30*time.Millisecond {
		t.Fatalf("a connection took %v before the fault", hi)
	}
	heal := packetFault(t, env, nemesis.Delay{}, "delay", nemesis.DelayParams{Delay: plans.Duration{Duration: 100 * time.Millisecond},
		Jitter: plans.Duration{Duration: 20 * time.Millisecond}, Distribution: "uniform"})
	lo, hi, mean := connects(200)
	t.Logf("under the delay: connections took %v to %v, %v on average", lo, hi, mean)
	if lo < 80*time.Millisecond || hi > 150*time.Millisecond || (mean-100*time.Millisecond).Abs() > 10*time.Millisecond {
		t.Errorf("connections took %v to %v, %v on average; want 80 to 150 ms, 100 ± 10 on average", lo, hi, mean)
	}
	heal()
	if _, hi, _ := connects(50); hi > 30*time.Millisecond {
		t.Errorf("a connection took %v after the heal", hi)
	}
}

// udpProbe is a UDP receiver inside a node's network namespace (the node
// itself keeps no UDP port) and a sender on the host: what a packet fault
// on the node does to datagrams from outside.
type udpProbe struct {
	t     *testing.T
	rx    net.PacketConn
	to    *net.UDPAddr
	netns string
}

func newUDPProbe(t *testing.T, env nodeEnv) *udpProbe {
	netns, err := env.run.Netns(context.Background(), env.node.Container)
	if err != nil {
		t.Fatal(err)
	}
	rx := testenv.UDPIn(t, netns, [4]byte{}, 9999)
	return &udpProbe{t, rx, &net.UDPAddr{IP: net.ParseIP(env.node.Container.IP), Port: 9999}, netns}
}

// send sends n numbered datagrams, 200 µs apart, and returns the numbers
// received, in the order they came, until none came for a second.
func (u *udpProbe) send(n int) []uint32 {
	u.t.Helper()
	tx, err := net.DialUDP("udp", nil, u.to)
	if err != nil {
		u.t.Fatal(err)
	}
	defer tx.Close()
	got := make(chan []uint32)
	go func() {
		var seq []uint32
		buf := make([]byte, 64)
		for {
			u.rx.SetReadDeadline(time.Now().Add(time.Second))
			k, _, err := u.rx.ReadFrom(buf)
			if err != nil {
				got <- seq
				return
			}
			if k == 8 {
				seq = append(seq, binary.BigEndian.Uint32(buf))
			}
		}
	}()
	for i := range n {
		tx.Write(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(i)), 0))
		time.Sleep(200 * time.Microsecond)
	}
	return <-got
}

// late counts the datagrams that came after one sent later than them.
func late(seq []uint32) int {
	n, highest := 0, int64(-1)
	for _, s := range seq {
		if int64(s) < highest {
			n++
		}
		highest = max(highest, int64(s))
	}
	return n
}

// TestPacketFaultsDoWhatTheySay: on a Redis node, with 1,000 datagrams
// from the host each time: reorder 30% (gap 20 ms) makes 25% to 35% of
// them come after a later one; duplicate 30% makes 250 to 350 come twice;
// corrupt 30% loses 250 to 350, most counted by the node's kernel as
// checksum errors (one with a bit flipped in the UDP header's length is
// dropped as malformed instead). Before each fault and after each heal,
// all 1,000 come once, in order.
func TestPacketFaultsDoWhatTheySay(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, redis.Kind{}, 1, ""), "packetsredis")
	env := nodeEnv{run, nodes[0]}
	u := newUDPProbe(t, env)
	clean := func(when string) {
		if seq := u.send(1000); len(seq) != 1000 || late(seq) != 0 {
			t.Fatalf("%s: %d of 1000 datagrams came, %d late", when, len(seq), late(seq))
		}
	}
	clean("before the faults")
	within := func(what string, got int) {
		t.Logf("%s: %d of 1000", what, got)
		if got < 250 || got > 350 {
			t.Errorf("%s: %d of 1000, want 250 to 350", what, got)
		}
	}

	heal := packetFault(t, env, nemesis.Reorder{}, "reorder", nemesis.ReorderParams{Probability: 0.3, Gap: plans.Duration{Duration: 20 * time.Millisecond}})
	seq := u.send(1000)
	heal()
	if len(seq) != 1000 {
		t.Errorf("reorder: %d of 1000 came", len(seq))
	}
	within("reorder: came after a later one", late(seq))
	clean("after the reorder")

	heal = packetFault(t, env, nemesis.Duplicate{}, "duplicate", nemesis.ShareParams{Probability: 0.3})
	seq = u.send(1000)
	heal()
	within("duplicate: came twice", len(seq)-1000)
	clean("after the duplicate")

	before := testenv.UDPChecksumErrors(t, u.netns)
	heal = packetFault(t, env, nemesis.Corrupt{}, "corrupt", nemesis.ShareParams{Probability: 0.3})
	seq = u.send(1000)
	heal()
	lost, bad := 1000-len(seq), testenv.UDPChecksumErrors(t, u.netns)-before
	within("corrupt: lost", lost)
	if bad > lost || bad < lost*3/4 {
		t.Errorf("corrupt: %d lost, %d checksum errors; want three quarters of the lost to all of them", lost, bad)
	}
	clean("after the corrupt")
}

// TestBandwidthCapsWhatANodeSends: a Redis node asked for a value of 2 MB
// sends it in 2 s (1.8 to 2.6) under a cap of 8 Mbit/s, in 4 s (3.6 to
// 5) under a second cap of 4 Mbit/s with the first still in force, in 2 s
// again once the second heals, and at once after both heal.
func TestBandwidthCapsWhatANodeSends(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, redis.Kind{}, 1, ""), "bandwidthredis")
	env := nodeEnv{run, nodes[0]}
	c := goredis.NewClient(&goredis.Options{Addr: net.JoinHostPort(nodes[0].Container.IP, strconv.Itoa(redis.Port)), ReadTimeout: 30 * time.Second})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "big", strings.Repeat("x", 2_000_000), 0).Err(); err != nil {
		t.Fatal(err)
	}
	fetch := func(when string, lo, hi time.Duration) {
		t.Helper()
		start := time.Now()
		if err := c.Get(ctx, "big").Err(); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		t.Logf("%s: 2 MB in %v", when, took)
		if took < lo || took > hi {
			t.Errorf("%s: 2 MB in %v, want %v to %v", when, took, lo, hi)
		}
	}
	fetch("before", 0, 500*time.Millisecond)
	w := nemesis.NewWorld(env, nil)
	start := func(rate string) (func(), []string) {
		f := nemesis.Entry[nemesis.BandwidthParams]{Kind: "bandwidth", Schedule: plans.Schedule{Target: "nodes", Count: 1}, Params: nemesis.BandwidthParams{Rate: rate}}
		in, err := nemesis.Bandwidth{}.Start(ctx, w, f, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := (nemesis.Bandwidth{}).Stop(ctx, w, in); err != nil {
				t.Fatal(err)
			}
		}, in.Targets
	}
	heal8, targets := start("8mbit")
	t.Logf("bandwidth: %q", targets)
	fetch("8 Mbit/s", 1800*time.Millisecond, 2600*time.Millisecond)
	heal4, _ := start("4mbit")
	fetch("8 and 4 Mbit/s", 3600*time.Millisecond, 5*time.Second)
	heal4()
	fetch("8 Mbit/s again", 1800*time.Millisecond, 2600*time.Millisecond)
	heal8()
	fetch("after the heals", 0, 500*time.Millisecond)
}
