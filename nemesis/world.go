package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
)

// World is what the faults of one run act on: the run's processes (Env),
// and a ledger of what each fault in force holds on each of them, so that
// faults of any kinds and schedules compose, as Jepsen's combined nemesis
// mixes them:
//
//   - A process is paused while any pause holds it: a pause of a process
//     already paused is recorded as such ("c1 (already paused)") and sends
//     nothing, and a heal resumes the process only when it releases the
//     last pause holding it.
//   - A node is down while any kill holds it: a kill of a node already down
//     is recorded as such ("n3 (already down)") and sends nothing, and a
//     heal restarts the node only when it releases the last kill holding
//     it. A kill ends the pauses of its victim (their heals then send
//     nothing): the restart comes back running. A pause of a node that is
//     down is recorded as "(down)" and does nothing.
//   - Partitions each have an iptables chain of their own: what is cut is
//     the union of the partitions in force, and a heal removes its own
//     chain alone.
//   - A node sends at the lowest rate of the bandwidth faults in force
//     on it; the cap goes with the last of them.
//   - A process may use the fewest CPUs of the cpu faults in force on
//     it; the limit it had before the first is put back with the last.
//   - Clock offsets on one process add up, clock by clock, on the one
//     patch the process has, which goes when the last share does.
//   - The roles leader and holder are resolved among processes that are
//     not down (a paused leader may still lead; a killed one does not).
type World struct {
	Env
	// Target is the plan's cluster (a targets.Target), which faults ask
	// for what they need of it (Leaderer, Administered, ...).
	Target any

	mu     sync.Mutex
	lastID int
	procs  map[string]*holds // by process name
	clocks clockBook
	// marks are the packet mark bits the packet faults in force hold.
	marks uint32
	// restarts counts the nodes restarted, each counted once it is up.
	restarts atomic.Int64
}

// NewWorld is a world of env and target with no fault in force.
func NewWorld(env Env, target any) *World {
	return &World{Env: env, Target: target, procs: map[string]*holds{}, clocks: clockBook{procs: map[int]*sharedPatch{}}}
}

// Leaderer is a target that can tell which node leads right now, for
// faults that target the leader.
type Leaderer interface {
	Leader(ctx context.Context, nodes []cluster.Node) (cluster.Node, error)
}

// leaderLimit bounds the question of who leads: a paused node must not
// hold up a fault for long.
const leaderLimit = 2 * time.Second

// Candidates lists the processes that fill a role at this moment: the
// Env's, and the leader, which the target names (none if it cannot).
func (w *World) Candidates(ctx context.Context, role string) []Process {
	if role != "leader" {
		return w.Env.Candidates(ctx, role)
	}
	l, ok := w.Target.(Leaderer)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, leaderLimit)
	defer cancel()
	n, err := l.Leader(ctx, w.Nodes(false))
	if err != nil {
		return nil
	}
	return []Process{NodeProcess(n)}
}

// servers are the data servers (nodes of kind ""), where they are now;
// up leaves out those killed and not restarted since.
func (w *World) servers(up bool) []cluster.Node {
	return slices.DeleteFunc(w.Nodes(up), func(n cluster.Node) bool { return n.Kind != "" })
}

// run is the run whose containers the processes are, if the Env has one.
func (w *World) run() *containers.Run {
	if r, ok := w.Env.(RunEnv); ok {
		return r.Run()
	}
	return nil
}

// server is the data server that process p is, where it is now.
func (w *World) server(p Process) (cluster.Node, error) {
	for _, n := range w.servers(false) {
		if n.Container.ID == p.Container.ID {
			return n, nil
		}
	}
	return cluster.Node{}, fmt.Errorf("%s is not a data server", p.Name)
}

// holds is what the faults in force hold on one process. Its mutex is held
// while a fault acts on the process, so that signals and restarts land in
// the order the ledger records them (a pause's SIGSTOP never overtaken by
// the SIGCONT of a pause healing).
type holds struct {
	mu     sync.Mutex
	paused []int // ids of the pauses that hold it stopped
	killed []int // ids of the kills that hold it down
	// rates are the caps on what a node sends, in bits a second, by the
	// id of the bandwidth fault that holds each: the lowest is in force.
	rates map[int]uint64
	// cpus are the CPUs the process may use, by the id of the cpu fault
	// that holds each: the lowest is in force. cpuBefore is its limit
	// before the first, put back when the last heals.
	cpus      map[int]float64
	cpuBefore containers.CPULimit
	// rejoin, if set, is how the node, removed from its cluster, comes
	// back at its next restart (RemoveMember).
	rejoin Rejoin
}

// newID names one injected fault, for the ledger.
func (w *World) newID() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastID++
	return w.lastID
}

// lock returns p's holds, locked; the caller unlocks them.
func (w *World) lock(p Process) *holds {
	w.mu.Lock()
	h := w.procs[p.Name]
	if h == nil {
		h = &holds{}
		w.procs[p.Name] = h
	}
	w.mu.Unlock()
	h.mu.Lock()
	return h
}

// down reports whether a kill holds p down.
func (w *World) down(p Process) bool {
	h := w.lock(p)
	defer h.mu.Unlock()
	return len(h.killed) > 0
}

// Notes on a victim that a fault found in another fault's hands.
const (
	noteAlreadyPaused = " (already paused)"
	noteAlreadyDown   = " (already down)"
	noteDown          = " (down)"
)

// pause stops p for pause id, unless it is down or paused already. held
// says whether the pause holds p (its heal must release it); note is what
// the history adds to p's name.
func (w *World) pause(ctx context.Context, p Process, id int) (held bool, note string, err error) {
	h := w.lock(p)
	defer h.mu.Unlock()
	switch {
	case len(h.killed) > 0:
		return false, noteDown, nil
	case len(h.paused) > 0:
		h.paused = append(h.paused, id)
		return true, noteAlreadyPaused, nil
	}
	// Held even if the signal fails: the heal's SIGCONT is harmless.
	h.paused = append(h.paused, id)
	return true, "", w.Signal(ctx, p, "STOP")
}

// resume releases pause id's hold on p, and resumes p if no other pause
// holds it. A kill since has ended the pause: nothing to do.
func (w *World) resume(ctx context.Context, p Process, id int) error {
	h := w.lock(p)
	defer h.mu.Unlock()
	return release(&h.paused, id, func() error { return w.Signal(ctx, p, "CONT") })
}

// release takes id out of the faults that hold a process, and runs undo
// if id was one of them and the last.
func release(held *[]int, id int, undo func() error) error {
	i := slices.Index(*held, id)
	if i < 0 {
		return nil
	}
	*held = slices.Delete(*held, i, i+1)
	if len(*held) > 0 {
		return nil
	}
	return undo()
}

// kill crashes p for kill id, unless it is down already. A node that went
// down by itself (its process gone though no kill holds it) is recorded as
// already down and not held: restarting it is not this fault's to do.
func (w *World) kill(ctx context.Context, p Process, id int) (held bool, note string, err error) {
	h := w.lock(p)
	defer h.mu.Unlock()
	if len(h.killed) > 0 {
		h.killed = append(h.killed, id)
		return true, noteAlreadyDown, nil
	}
	err = w.Signal(ctx, p, "KILL")
	if errors.Is(err, containers.ErrNotRunning) {
		return false, noteAlreadyDown, nil
	}
	// Held even if the signal failed otherwise: the heal's restart of a
	// node that runs does nothing.
	h.killed = append(h.killed, id)
	h.paused = nil // the restart comes back running
	return true, "", err
}

// Rejoin is how a node removed from its cluster comes back: Add readies
// the cluster before the node starts, Joined waits after, until the node
// serves as a member.
type Rejoin interface {
	Add(ctx context.Context) error
	Joined(ctx context.Context) error
}

// restart releases kill id's hold on p, and restarts p if no other kill
// holds it down. A node removed from its cluster (awaitRejoin) is added
// back first, with the cluster as it is then, and held, against other
// faults, until it has joined.
func (w *World) restart(ctx context.Context, p Process, id int) error {
	h := w.lock(p)
	defer h.mu.Unlock()
	return release(&h.killed, id, func() error {
		if h.rejoin != nil {
			if err := h.rejoin.Add(ctx); err != nil {
				return err // still removed: down it stays, until a later heal adds it
			}
		}
		err := w.Restart(ctx, p)
		w.restarts.Add(1)
		if err == nil && h.rejoin != nil {
			if err = h.rejoin.Joined(ctx); err == nil {
				h.rejoin = nil
			}
		}
		return err
	})
}

// awaitRejoin has the restart that brings p back rejoin it to its cluster.
func (w *World) awaitRejoin(p Process, r Rejoin) {
	h := w.lock(p)
	defer h.mu.Unlock()
	h.rejoin = r
}
