// Package simhistory simulates the histories of long runs, for the
// benchmarks and the memory measurements of the analysis: a register
// workload on a linearizable store (or one serving stale reads), and a
// lock workload whose holders are sometimes paused past their lease.
package simhistory

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// Register simulates n operations of clients on a linearizable store
// (seeded, so always the same history), giving each entry to emit in
// order: each takes effect at a random point between its invocation and
// completion. As in the register workload, the
// clients contend on 3 keys at a time, moving on every 3,000 operations, so
// every one of the keys gets a burst of ~n/keys operations. Cas is a fail
// when its compare does not match; 0.1% of writes and cases time out (info,
// taking effect or not at random) and the client is replaced by a new
// process, as Jepsen does; 0.1% of reads fail. With keys >= n/1000 no key
// comes back after its burst, as the workload's rotating keys do not.
// With staleEvery > 0, every staleEvery-th read returns the value before
// the key's last write instead (where there was one), which no
// linearizable store does.
func Register(n, keys, clients, staleEvery int, emit func(history.Op)) {
	rng := rand.New(rand.NewPCG(1, 1))
	store := map[string]int{}  // key -> value; absent if missing
	before := map[string]int{} // key -> value before its last write
	entries, reads := 0, 0
	q := &eventQueue{}
	type pending struct {
		f                   string
		v                   registerop.Value
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
	record := func(t time.Duration, c int, typ history.Type, f string, v registerop.Value) {
		emit(history.Op{Index: entries, Time: t, Type: typ, Process: procs[c], F: f, Value: history.MustValue(v)})
		entries++
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
				p.f, p.v = registerop.FRead, registerop.Value{Key: key}
			case r == 2:
				p.f, p.v = registerop.FWrite, registerop.Value{Key: key, Value: num(rng.IntN(5))}
			default:
				p.f, p.v = registerop.FCas, registerop.Value{Key: key, From: num(rng.IntN(5)), To: num(rng.IntN(5))}
			}
			record(e.t, c, history.Invoke, p.f, p.v)
			lat := time.Duration(500+rng.IntN(10_000)) * time.Microsecond
			p.applyTime = e.t + time.Duration(rng.Int64N(int64(lat)))
			p.doneTime = e.t + lat
			heap.Push(q, event{t: p.applyTime, client: c, phase: 1})
		case 1: // take effect
			cur, exists := store[p.v.Key]
			timedOut := p.f != registerop.FRead && rng.IntN(1000) == 0
			apply := !timedOut || rng.IntN(2) == 0
			switch p.f {
			case registerop.FRead:
				p.v.Value = json.RawMessage("null")
				if exists {
					p.v.Value = num(cur)
				}
				if old, ok := before[p.v.Key]; ok && staleEvery > 0 {
					if reads++; reads%staleEvery == 0 {
						p.v.Value = num(old)
					}
				}
				if rng.IntN(1000) == 0 {
					p.typ = history.Fail
				}
			case registerop.FWrite:
				if apply {
					before[p.v.Key] = cur
					store[p.v.Key], _ = strconv.Atoi(string(p.v.Value))
				}
			case registerop.FCas:
				from, _ := strconv.Atoi(string(p.v.From))
				switch {
				case !exists || cur != from:
					p.typ = history.Fail
				case apply:
					before[p.v.Key] = cur
					store[p.v.Key], _ = strconv.Atoi(string(p.v.To))
				}
			}
			if timedOut {
				p.typ = history.Info
			}
			heap.Push(q, event{t: p.doneTime, client: c, phase: 2})
		case 2: // complete
			record(e.t, c, p.typ, p.f, p.v)
			if p.typ == history.Info {
				procs[c] += clients // the process is dead; a new one takes its place
			}
			heap.Push(q, event{t: e.t + time.Duration(rng.IntN(200))*time.Microsecond, client: c})
		}
	}
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

// Lock makes a deterministic lock run of exactly n history entries and
// its resource log, giving each to emit and resource in order: 10 clients taking turns, some acquires failing under
// contention, and every pauseEvery-th cycle a holder paused past its lease
// while another client takes the lock and writes, after which the paused
// one writes too (accepted: the resource is unfenced). It returns how many
// such pauses the run holds, each one overlap and one stale write.
func Lock(n int, emit func(history.Op), resource func(history.ResourceEntry)) int {
	const (
		clients    = 10
		pauseEvery = 5000
		lease      = 10 * time.Second
	)
	rng := rand.New(rand.NewPCG(1, 2))
	sessions := make([]int, clients)
	var t time.Duration
	entries, lines := 0, 0
	// Files are only roughly time-ordered across processes: a few
	// neighbours of different processes come swapped (each process's
	// order is kept), as if each entry were swapped with the one before
	// it with probability 1/20, one after the other.
	var held *history.Op
	add := func(proc int, typ history.Type, f string, v any) {
		if entries == n { // the cut leaves an unfinished cycle, as a stopped run does
			return
		}
		t += time.Duration(100+rng.IntN(900)) * time.Microsecond
		op := history.Op{Time: t, Type: typ, Process: proc, F: f, Value: history.MustValue(v)}
		entries++
		switch {
		case held == nil:
			held = &op
			return
		case op.Process != held.Process && rng.IntN(20) == 0:
			op.Index = entries - 2
			emit(op)
			held.Index = entries - 1
		default:
			emit(*held)
			op.Index = entries - 1
			held = &op
		}
	}
	acquire := func(c int) int {
		add(c, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
		sessions[c]++
		add(c, history.Ok, lockop.FAcquire, lockop.Value{Lock: "l", Session: sessions[c]})
		return sessions[c]
	}
	write := func(c, s int) {
		v := lockop.WriteValue{Key: "k", Value: fmt.Sprintf("c%d-%d", c, s), Session: s}
		add(c, history.Invoke, lockop.FWrite, v)
		if entries < n {
			lines++
			resource(history.ResourceEntry{Time: t, Client: c, Key: "k", Value: v.Value, Session: s, Accepted: true, Line: lines})
		}
		add(c, history.Ok, lockop.FWrite, v)
	}
	release := func(c, s int, typ history.Type) {
		add(c, history.Invoke, lockop.FRelease, lockop.Value{Lock: "l", Session: s})
		add(c, typ, lockop.FRelease, lockop.Value{Lock: "l", Session: s})
	}
	pauses := 0
	for cycle := 1; entries < n; cycle++ {
		c := rng.IntN(clients)
		other := (c + 1 + rng.IntN(clients-1)) % clients
		s := acquire(c)
		if cycle%pauseEvery == 0 {
			pauses++
			add(history.Nemesis, history.Info, "pause-start", map[string]int{"process": c})
			t += lease
			s2 := acquire(other)
			write(other, s2)
			release(other, s2, history.Ok)
			add(history.Nemesis, history.Info, "pause-end", map[string]int{"process": c})
			write(c, s)
			release(c, s, history.Fail)
			continue
		}
		if rng.IntN(5) == 0 { // contention: another client is turned away
			add(other, history.Invoke, lockop.FAcquire, lockop.Value{Lock: "l"})
			add(other, history.Fail, lockop.FAcquire, lockop.Value{Lock: "l"})
		}
		write(c, s)
		release(c, s, history.Ok)
	}
	if held != nil {
		emit(*held)
	}
	return pauses
}
