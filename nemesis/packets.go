package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/nfqueue"
)

// QueueEnv is an Env that can take the packets reaching a node into the
// harness (package nfqueue), for the faults that act on packets one by
// one: delay, reorder, duplicate, corrupt.
type QueueEnv interface {
	// Queue binds queue num in node p's network namespace as it is now.
	Queue(ctx context.Context, p Process, num uint16) (PacketQueue, error)
}

// PacketQueue is a bound queue, as nfqueue.Queue.
type PacketQueue interface {
	Read() ([]nfqueue.Packet, error)
	Pass(id, mark uint32, payload []byte) error
	// Send puts a packet of the harness's own into the namespace (a
	// copy, for duplicate), with a mark.
	Send(payload []byte, mark uint32) error
	Close() error
}

// fate is what becomes of one packet: held for hold, its bytes replaced by
// payload (if not nil), and copies more of it sent.
type fate struct {
	hold    time.Duration
	payload []byte
	copies  int
}

// packetFault is a fault that decides each packet's fate. Each kind
// (delay.go, reorder.go, ...) is one of these; the queueing is theirs in
// common (queuedFault).
type packetFault interface {
	// fate decides packet p's; rng is the fault's own.
	fate(p nfqueue.Packet, rng *rand.Rand) fate
	// describe says in a few words what the fault does to a victim.
	describe() string
}

// queuedFault is one packet fault in force: a rule on each victim that
// queues what reaches it (from other nodes and clients, not from itself)
// to the harness, which gives each packet back as the fault decides.
//
// Faults compose: each has its own chain, queue and mark bit. A packet
// given back runs through the node's rules again from the top with the
// fault's bit set, so the fault's own rule lets it by and every other
// fault's rule (a partition's drop, another packet fault's queue) still
// sees it; an accept would skip the rules after the queue's.
type queuedFault struct {
	chain chainState
	bit   uint32 // the fault's mark bit; its queue is numbered after it
	kind  packetFault

	mu     sync.Mutex
	rng    *rand.Rand
	queues map[string]*servedQueue // by node name
	healed bool
}

// servedQueue is one victim's queue and the packets it holds back.
type servedQueue struct {
	q    PacketQueue
	pid  int // the node's process when the queue was bound
	mu   sync.Mutex
	held map[uint32]*heldPacket
	done chan struct{}
}

type heldPacket struct {
	timer *time.Timer
	pass  func()
}

// startQueued installs kind on the victims of f.
func startQueued(ctx context.Context, w *World, victims []Process, kind packetFault, rng *rand.Rand) (Injected, error) {
	if len(victims) == 0 {
		return Injected{}, nil
	}
	if _, ok := w.Env.(QueueEnv); !ok {
		return Injected{}, fmt.Errorf("this run cannot queue packets to the harness")
	}
	bit, err := w.takeMark()
	if err != nil {
		return Injected{}, err
	}
	qf := &queuedFault{bit: bit, kind: kind, rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), queues: map[string]*servedQueue{}}
	hit := map[string]bool{}
	var targets []string
	for _, v := range victims {
		hit[v.Name] = true
		targets = append(targets, v.Name+" "+kind.describe())
	}
	mark := fmt.Sprintf("%#x/%#x", bit, bit)
	num := fmt.Sprint(qf.num())
	qf.chain = chainState{chain: fmt.Sprintf("chaos-queue-%d", w.newID()), nodes: victims,
		target: []string{"NFQUEUE", "--queue-num", num, "--queue-bypass"},
		match: func(_ *World, n Process) []string {
			if !hit[n.Name] {
				return nil
			}
			return []string{"!", "-i", "lo", "-m", "mark", "!", "--mark", mark}
		}}
	in := Injected{Targets: targets, State: qf}
	return in, qf.install(context.WithoutCancel(ctx), w, false)
}

// num is the fault's queue number: one per mark bit, so that the faults
// in force on a node never share one.
func (qf *queuedFault) num() uint16 { return uint16(1000 + bits.TrailingZeros32(qf.bit)) }

// install binds a queue on every victim whose process has none (all of
// them at the start; a restarted one, in its new namespace, later), then
// puts the rules in: a rule without its queue would drop what it queues.
func (qf *queuedFault) install(ctx context.Context, w *World, again bool) error {
	qenv := w.Env.(QueueEnv)
	penv, _ := w.Env.(ProcessEnv)
	var errs []error
	for _, n := range qf.chain.nodes {
		pid := 0
		if penv != nil {
			var err error
			if pid, err = penv.HostPID(ctx, n); err != nil {
				continue // down: its restart reinstalls it
			}
		}
		qf.mu.Lock()
		old, healed := qf.queues[n.Name], qf.healed
		qf.mu.Unlock()
		if healed || (old != nil && old.pid == pid) {
			continue
		}
		if old != nil {
			old.close()
		}
		q, err := qenv.Queue(ctx, n, qf.num())
		if err != nil {
			errs = append(errs, fmt.Errorf("queue for %s: %w", n.Name, err))
			continue
		}
		sq := &servedQueue{q: q, pid: pid, held: map[uint32]*heldPacket{}, done: make(chan struct{})}
		qf.mu.Lock()
		qf.queues[n.Name] = sq
		qf.mu.Unlock()
		go qf.serve(sq)
	}
	return errors.Join(append(errs, qf.chain.install(ctx, w, again))...)
}

// serve gives back each packet of sq as the fault decides, until the
// queue closes.
func (qf *queuedFault) serve(sq *servedQueue) {
	defer close(sq.done)
	for {
		ps, err := sq.q.Read()
		if err != nil {
			return
		}
		for _, p := range ps {
			qf.mu.Lock()
			f := qf.kind.fate(p, qf.rng)
			qf.mu.Unlock()
			qf.release(sq, p, f)
		}
	}
}

// release gives packet p back with fate f: at once, or after its hold.
// A verdict that fails (the queue closed by a heal) leaves the packet to
// the kernel, which drops it with the queue.
func (qf *queuedFault) release(sq *servedQueue, p nfqueue.Packet, f fate) {
	pass := func() {
		_ = sq.q.Pass(p.ID, p.Mark|qf.bit, f.payload)
		for range f.copies {
			_ = sq.q.Send(p.Payload, p.Mark|qf.bit)
		}
	}
	if f.hold <= 0 {
		pass()
		return
	}
	sq.mu.Lock()
	defer sq.mu.Unlock()
	h := &heldPacket{pass: pass}
	h.timer = time.AfterFunc(f.hold, func() {
		sq.mu.Lock()
		_, mine := sq.held[p.ID]
		delete(sq.held, p.ID)
		sq.mu.Unlock()
		if mine {
			pass()
		}
	})
	sq.held[p.ID] = h
}

// close gives back at once what sq holds, and unbinds its queue.
func (sq *servedQueue) close() {
	sq.mu.Lock()
	held := sq.held
	sq.held = map[uint32]*heldPacket{}
	sq.mu.Unlock()
	for _, h := range held {
		// Out of the map, the packet is this heal's to give back even if
		// its timer fired meanwhile: the timer's pass gives back only what
		// it finds in the map.
		h.timer.Stop()
		h.pass()
	}
	sq.q.Close()
	<-sq.done
}

// heal takes the rules off first, so that nothing more is queued, then
// gives back what is held and unbinds the queues. It may run twice.
func (qf *queuedFault) heal(ctx context.Context, w *World) error {
	qf.mu.Lock()
	first := !qf.healed
	qf.healed = true
	queues := qf.queues
	qf.queues = map[string]*servedQueue{}
	qf.mu.Unlock()
	err := qf.chain.remove(ctx, w)
	for _, sq := range queues {
		sq.close()
	}
	if first {
		w.freeMark(qf.bit)
	}
	return err
}

// queuedNemesis is the part of a packet fault's nemesis that is the same
// for every kind.
type queuedNemesis struct{}

// Reinstall binds a queue in a restarted victim's new namespace and puts
// its rule back.
func (queuedNemesis) Reinstall(ctx context.Context, w *World, in Injected) error {
	return in.State.(*queuedFault).install(ctx, w, true)
}

// Stop heals the fault.
func (queuedNemesis) Stop(ctx context.Context, w *World, in Injected) error {
	return in.State.(*queuedFault).heal(ctx, w)
}

// takeMark hands out a packet mark bit that no packet fault in force has.
func (w *World) takeMark() (uint32, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	free := ^w.marks
	if free == 0 {
		return 0, fmt.Errorf("32 packet faults are in force already")
	}
	bit := free & -free
	w.marks |= bit
	return bit, nil
}

func (w *World) freeMark(bit uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.marks &^= bit
}
