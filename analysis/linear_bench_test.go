package analysis

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/history/porcupinelog"
)

// BenchmarkEtcdLogsChaos is chaos's whole path on the 102 etcd logs with a
// verdict: parse each into history entries, then check it with the
// cas-register checker. Compare with BenchmarkEtcdLogsPorcupine.
func BenchmarkEtcdLogsChaos(b *testing.B) {
	cases := etcdVerdicts(b)
	checker, _ := Checkers.Lookup("cas-register")
	b.ResetTimer()
	for range b.N {
		for _, c := range cases {
			ops, err := porcupinelog.ReadEtcd(filepath.Join(refDir, c.file))
			if err != nil {
				b.Fatal(err)
			}
			if r := checker.Check(context.Background(), Input{History: ops}); r.Verdict != wantVerdict(c.want) {
				b.Fatalf("%s: %s, expected %s", c.file, r.Verdict, wantVerdict(c.want))
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cases)), "ns/log")
}

// BenchmarkEtcdLogsPorcupine is porcupine alone on the same files: its own
// test parser and etcd model (porcupine_test.go, MIT licence, Anish
// Athalye), checked with CheckEvents as its tests do.
func BenchmarkEtcdLogsPorcupine(b *testing.B) {
	cases := etcdVerdicts(b)
	b.ResetTimer()
	for range b.N {
		for _, c := range cases {
			events, err := parseJepsenLog(filepath.Join(refDir, c.file))
			if err != nil {
				b.Fatal(err)
			}
			if ok := porcupine.CheckEvents(etcdModel, events); ok != (c.want == "true") {
				b.Fatalf("%s: %t, expected %s", c.file, ok, c.want)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cases)), "ns/log")
}

func etcdVerdicts(b *testing.B) []refCase {
	var out []refCase
	for _, c := range refCases(b, "jepsen/") {
		if c.want != "" {
			out = append(out, c)
		}
	}
	return out
}

// BenchmarkRegister1M checks a generated linearizable history of 1,000,000
// register operations (2,000,000 entries) on 1,000 keys from 10 clients with
// the cas-register checker. It reports the peak live heap, sampled during
// the check, the heap the history alone takes, and the memory the runtime
// got from the OS.
func BenchmarkRegister1M(b *testing.B) {
	ops := genRegisterRun(1_000_000, 1000, 10)
	checker, _ := Checkers.Lookup("cas-register")
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base) // the history itself, before the check
	peak, stop := sampleHeap()
	b.ResetTimer()
	var r Result
	for range b.N {
		r = checker.Check(context.Background(), Input{History: ops})
	}
	b.StopTimer()
	if r.Verdict != Valid {
		b.Fatalf("verdict %s, expected valid; notes %q, findings %d", r.Verdict, r.Notes, r.FindingsTotal)
	}
	stop()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(base[0].Value.Uint64())/(1<<20), "history-MiB")
	b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
	b.Logf("%d entries: %v", len(ops), r.Stats)
}

// sampleHeap records the largest live heap (heap objects) seen every 10ms
// until stop is called.
func sampleHeap() (*uint64, func()) {
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return &peak, func() { close(done); wg.Wait() }
}

// genRegisterRun simulates n operations of clients on a linearizable store
// (seeded, so always the same history): each takes effect at a random point
// between its invocation and completion. As in the register workload, the
// clients contend on 3 keys at a time, moving on every 3,000 operations, so
// every one of the keys gets a burst of ~n/keys operations. Cas is a fail
// when its compare does not match; 0.1% of writes and cases time out (info,
// taking effect or not at random) and the client is replaced by a new
// process, as Jepsen does; 0.1% of reads fail.
func genRegisterRun(n, keys, clients int) []history.Op {
	rng := rand.New(rand.NewPCG(1, 1))
	store := map[string]int{} // key -> value; absent if missing
	ops := make([]history.Op, 0, 2*n)
	q := &eventQueue{}
	type pending struct {
		f                   string
		v                   history.RegisterValue
		typ                 history.Type
		applyTime, doneTime time.Duration
	}
	inFlight := make([]pending, clients)
	procs := make([]int, clients)
	for c := range clients {
		procs[c] = c
		heap.Push(q, event{t: time.Duration(rng.IntN(1000)) * time.Microsecond, client: c})
	}
	started := 0
	emit := func(t time.Duration, c int, typ history.Type, f string, v history.RegisterValue) {
		ops = append(ops, history.Op{Index: len(ops), Time: t, Type: typ, Process: procs[c], F: f, Value: history.MustValue(v)})
	}
	num := func(v int) json.RawMessage { return json.RawMessage(strconv.Itoa(v)) }
	for q.Len() > 0 {
		e := heap.Pop(q).(event)
		c := e.client
		p := &inFlight[c]
		switch e.phase {
		case 0: // invoke
			if started == n {
				continue
			}
			burst := started / 3000
			key := "r" + strconv.Itoa((burst*3+rng.IntN(3))%keys)
			started++
			*p = pending{typ: history.Ok}
			switch r := rng.IntN(4); {
			case r < 2:
				p.f, p.v = history.FRead, history.RegisterValue{Key: key}
			case r == 2:
				p.f, p.v = history.FWrite, history.RegisterValue{Key: key, Value: num(rng.IntN(5))}
			default:
				p.f, p.v = history.FCas, history.RegisterValue{Key: key, From: num(rng.IntN(5)), To: num(rng.IntN(5))}
			}
			emit(e.t, c, history.Invoke, p.f, p.v)
			lat := time.Duration(500+rng.IntN(10_000)) * time.Microsecond
			p.applyTime = e.t + time.Duration(rng.Int64N(int64(lat)))
			p.doneTime = e.t + lat
			heap.Push(q, event{t: p.applyTime, client: c, phase: 1})
		case 1: // take effect
			cur, exists := store[p.v.Key]
			timedOut := p.f != history.FRead && rng.IntN(1000) == 0
			apply := !timedOut || rng.IntN(2) == 0
			switch p.f {
			case history.FRead:
				p.v.Value = json.RawMessage("null")
				if exists {
					p.v.Value = num(cur)
				}
				if rng.IntN(1000) == 0 {
					p.typ = history.Fail
				}
			case history.FWrite:
				if apply {
					store[p.v.Key], _ = strconv.Atoi(string(p.v.Value))
				}
			case history.FCas:
				from, _ := strconv.Atoi(string(p.v.From))
				switch {
				case !exists || cur != from:
					p.typ = history.Fail
				case apply:
					store[p.v.Key], _ = strconv.Atoi(string(p.v.To))
				}
			}
			if timedOut {
				p.typ = history.Info
			}
			heap.Push(q, event{t: p.doneTime, client: c, phase: 2})
		case 2: // complete
			emit(e.t, c, p.typ, p.f, p.v)
			if p.typ == history.Info {
				procs[c] += clients // the process is dead; a new one takes its place
			}
			heap.Push(q, event{t: e.t + time.Duration(rng.IntN(200))*time.Microsecond, client: c})
		}
	}
	return ops
}

type event struct {
	t      time.Duration
	client int
	phase  int // 0 invoke, 1 take effect, 2 complete
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].client < q[j].client
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// TestGenRegisterRun checks the generator on a small run: the history is
// well-formed and linearizable, as it is built to be.
func TestGenRegisterRun(t *testing.T) {
	ops := genRegisterRun(20_000, 50, 10)
	if len(ops) != 40_000 {
		t.Fatalf("%d entries, expected 40000", len(ops))
	}
	r := runChecker(t, "cas-register", Input{History: ops})
	if r.Verdict != Valid || r.Stats["open"] == 0 || r.Stats["dropped_fail"] == 0 {
		t.Fatalf("verdict %s, stats %v: expected valid, with info and fail ops", r.Verdict, r.Stats)
	}
}

// Porcupine's etcd model and parser, from its porcupine_test.go.

type etcdInput struct {
	op   uint8 // 0 => read, 1 => write, 2 => cas
	arg1 int   // used for write, or for CAS from argument
	arg2 int   // used for CAS to argument
}

type etcdOutput struct {
	ok      bool // used for CAS
	exists  bool // used for read
	value   int  // used for read
	unknown bool // used when operation times out
}

var etcdModel = porcupine.Model{
	Init: func() any { return -1000000 }, // -1000000 corresponds with nil
	Step: func(state any, input any, output any) (bool, any) {
		st := state.(int)
		inp := input.(etcdInput)
		out := output.(etcdOutput)
		if inp.op == 0 {
			ok := (!out.exists && st == -1000000) || (out.exists && st == out.value) || out.unknown
			return ok, state
		} else if inp.op == 1 {
			return true, inp.arg1
		}
		ok := (inp.arg1 == st && out.ok) || (inp.arg1 != st && !out.ok) || out.unknown
		result := st
		if inp.arg1 == st {
			result = inp.arg2
		}
		return ok, result
	},
}

var (
	invokeRead  = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:invoke\s+:read\s+nil$`)
	invokeWrite = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:invoke\s+:write\s+(\d+)$`)
	invokeCas   = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:invoke\s+:cas\s+\[(\d+)\s+(\d+)\]$`)
	returnRead  = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:ok\s+:read\s+(nil|\d+)$`)
	returnWrite = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:ok\s+:write\s+(\d+)$`)
	returnCas   = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(ok|fail)\s+:cas\s+\[(\d+)\s+(\d+)\]$`)
	timeoutRead = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:fail\s+:read\s+:timed-out$`)
)

func parseJepsenLog(filename string) ([]porcupine.Event, error) {
	file, err := os.Open(filename)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var events []porcupine.Event
	id := 0
	procIDMap := map[int]int{}
	ret := func(proc int, out etcdOutput) {
		matchID := procIDMap[proc]
		delete(procIDMap, proc)
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: out, Id: matchID})
	}
	call := func(proc int, in etcdInput) {
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.CallEvent, Value: in, Id: id})
		procIDMap[proc] = id
		id++
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case invokeRead.MatchString(line):
			args := invokeRead.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			call(proc, etcdInput{op: 0})
		case invokeWrite.MatchString(line):
			args := invokeWrite.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			value, _ := strconv.Atoi(args[2])
			call(proc, etcdInput{op: 1, arg1: value})
		case invokeCas.MatchString(line):
			args := invokeCas.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			from, _ := strconv.Atoi(args[2])
			to, _ := strconv.Atoi(args[3])
			call(proc, etcdInput{op: 2, arg1: from, arg2: to})
		case returnRead.MatchString(line):
			args := returnRead.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			exists, value := false, 0
			if args[2] != "nil" {
				exists = true
				value, _ = strconv.Atoi(args[2])
			}
			ret(proc, etcdOutput{exists: exists, value: value})
		case returnWrite.MatchString(line):
			args := returnWrite.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			ret(proc, etcdOutput{})
		case returnCas.MatchString(line):
			args := returnCas.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			ret(proc, etcdOutput{ok: args[2] == "ok"})
		case timeoutRead.MatchString(line):
			args := timeoutRead.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			ret(proc, etcdOutput{unknown: true})
		}
	}
	for proc, matchID := range procIDMap {
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: etcdOutput{unknown: true}, Id: matchID})
	}
	return events, sc.Err()
}
