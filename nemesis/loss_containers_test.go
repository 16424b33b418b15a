package nemesis_test

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets/redis"
)

// TestLossDropsItsShare: a loss of 30% on a Redis node makes 25% to 35% of
// 1,000 TCP connections from the harness fail within 200 ms (a dropped
// SYN is sent again only after a second), and its heal lets every one
// through again.
func TestLossDropsItsShare(t *testing.T) {
	run, nodes := testenv.Cluster(t, testenv.Bind(t, redis.Kind{}, 1, ""), "lossredis")
	env := nodeEnv{run, nodes[0]}
	addr := net.JoinHostPort(nodes[0].Container.IP, strconv.Itoa(redis.Port))
	ctx := context.Background()
	// failures dials n connections, 20 at a time, and counts those that
	// did not connect in time.
	failures := func(n int) int {
		var failed atomic.Int64
		var wg sync.WaitGroup
		next := make(chan struct{})
		for range 20 {
			wg.Go(func() {
				for range next {
					c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
					if err != nil {
						failed.Add(1)
						continue
					}
					c.Close()
				}
			})
		}
		for range n {
			next <- struct{}{}
		}
		close(next)
		wg.Wait()
		return int(failed.Load())
	}
	if n := failures(200); n != 0 {
		t.Fatalf("%d of 200 connections failed before the fault", n)
	}
	w := nemesis.NewWorld(env, nil)
	f := nemesis.Entry[nemesis.ShareParams]{Kind: "loss", Schedule: plans.Schedule{Target: "nodes", Count: 1}, Params: nemesis.ShareParams{Probability: 0.3}}
	in, err := nemesis.Loss{}.Start(ctx, w, f, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	n := failures(1000)
	t.Logf("%q: %d of 1000 connections failed", in.Targets, n)
	if n < 250 || n > 350 {
		t.Errorf("%d of 1000 connections failed under a loss of 30%%; want 250 to 350", n)
	}
	if err := (nemesis.Loss{}).Stop(ctx, w, in); err != nil {
		t.Fatal(err)
	}
	if n := failures(200); n != 0 {
		t.Errorf("%d of 200 connections failed after the heal", n)
	}
}
