package register_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/ops/registerop"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets/etcd"
	"github.com/chaos-testing/chaos/workloads"
	"github.com/chaos-testing/chaos/workloads/register"
	"github.com/chaos-testing/chaos/workloads/traffic"
)

// BenchmarkRecordingPath measures what recording costs: operations per
// second of the etcd register workload's clients (workloads.Record writing
// every invocation and completion to a history file) against a bare loop
// of the same operations through the same client library, with the same
// 10 clients, on one 3-member cluster, in turns of 5 s. Run it with
//
//	go test -run '^$' -bench RecordingPath -benchtime 1x ./workloads/register
func BenchmarkRecordingPath(b *testing.B) {
	_, nodes := testenv.Cluster(b, testenv.Bind(b, etcd.Kind{}, 3, ""), "benchrec")
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, net.JoinHostPort(n.Container.IP, strconv.Itoa(etcd.ClientPort)))
	}
	const clients, turn = 10, 5 * time.Second
	params := &register.Params{ReadMode: "linearizable", Values: 5, Keys: 3, KeyPeriod: plans.Duration{Duration: 5 * time.Second},
		Spec: traffic.Spec{Mix: map[string]int{registerop.FRead: 2, registerop.FWrite: 1, registerop.FCas: 1}, Pace: traffic.Pace{Concurrency: 1}}}
	fields, err := json.Marshal(params)
	if err != nil {
		b.Fatal(err)
	}
	config := func(i int) workloads.Config {
		return workloads.Config{Process: i, Seed: 1, Nodes: addrs, Workload: "etcd-register", Clients: clients, Fields: fields, ClockStart: history.NewClock().Start}
	}
	var bare, recorded float64
	for range b.N {
		for round := range 3 {
			bare += bareLoop(b, params.ReadMode, config, clients, turn)
			path := filepath.Join(b.TempDir(), "history.jsonl")
			recorded += throughChaos(b, config, clients, turn, path)
			b.Logf("round %d: bare %.0f ops/s, recorded %.0f ops/s so far", round, bare/float64(round+1), recorded/float64(round+1))
		}
	}
	b.ReportMetric(bare/float64(3*b.N), "bare-ops/s")
	b.ReportMetric(recorded/float64(3*b.N), "recorded-ops/s")
	b.ReportMetric(recorded/bare, "ratio")
}

// bareLoop runs the register's operations (half reads, writes, cases on
// the same keys) with no history for d, and returns operations per second.
func bareLoop(b *testing.B, readMode string, config func(int) workloads.Config, clients int, d time.Duration) float64 {
	var n atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		s, err := register.Dial(ctx, config(i).Workload, config(i).Nodes, config(i).Process, readMode)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			clock := history.NewClock()
			for ctx.Err() == nil {
				key := traffic.Key(clock.Now(), rng, 5*time.Second, 3)
				octx, ocancel := context.WithTimeout(context.Background(), 2*time.Second)
				switch r := rng.IntN(4); {
				case r < 2:
					s.Read(octx, key)
				case r == 2:
					s.Write(octx, key, rng.Int64N(5))
				default:
					s.Cas(octx, key, rng.Int64N(5), rng.Int64N(5))
				}
				ocancel()
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// throughChaos runs the workload's own clients, each with its appender to
// one history file as in a run, for d, and returns completed operations
// per second from the history.
func throughChaos(b *testing.B, config func(int) workloads.Config, clients int, d time.Duration, path string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	clock := history.NewClock()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		cfg := config(i)
		cfg.History, cfg.ClockStart = path, clock.Start
		wg.Go(func() {
			if err := workloads.RunClient(ctx, cfg); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	took := time.Since(start).Seconds()
	ops, _, err := history.Read(path)
	if err != nil {
		b.Fatal(err)
	}
	done := 0
	for _, op := range ops {
		if op.Type != history.Invoke {
			done++
		}
	}
	return float64(done) / took
}
