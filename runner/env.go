package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/nfqueue"
)

// faultEnv is what the nemesis may act on in a run: its nodes and
// clients, as the run's containers. What a fault needs of the target
// itself it asks the target for (nemesis.World.Target).
type faultEnv struct {
	run   *containers.Run
	live  *live
	disks *disks.Set // nil unless the plan has a disk fault

	mu      sync.Mutex
	nodes   []cluster.Node
	clients []nemesis.Process // index = history process number
	// killed are the nodes killed and not restarted since, by container
	// ID: their addresses may already belong to another node restarted
	// meanwhile.
	killed map[string]bool
}

func (e *faultEnv) Candidates(_ context.Context, role string) []nemesis.Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ps []nemesis.Process
	switch role {
	case "nodes":
		for _, n := range e.nodes {
			ps = append(ps, nemesis.NodeProcess(n))
		}
	case "clients":
		ps = append(ps, e.clients...)
	case "holder":
		for _, p := range e.live.holders() {
			if len(e.clients) > 0 { // process p is a worker of client p mod clients
				ps = append(ps, e.clients[p%len(e.clients)])
			}
		}
	}
	return ps
}

// Nodes lists the nodes, where they are now; up leaves out those killed
// and not restarted since, whose addresses are stale.
func (e *faultEnv) Nodes(up bool) []cluster.Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ns []cluster.Node
	for _, n := range e.nodes {
		if !(up && e.killed[n.Container.ID]) {
			ns = append(ns, n)
		}
	}
	return ns
}

// servers lists the data servers (nodes of kind ""); up as Nodes.
func (e *faultEnv) servers(up bool) []cluster.Node {
	return slices.DeleteFunc(e.Nodes(up), func(n cluster.Node) bool { return n.Kind != "" })
}

// Run is the run whose containers the nodes are (nemesis.RunEnv).
func (e *faultEnv) Run() *containers.Run { return e.run }

// Signal sends sig to the process. A process that is not running (a kill
// fault took it while a pause was on) has nothing to stop or resume.
func (e *faultEnv) Signal(ctx context.Context, p nemesis.Process, sig string) error {
	err := e.run.Signal(ctx, p.Container, sig)
	if sig == "KILL" {
		e.mu.Lock()
		if e.killed == nil {
			e.killed = map[string]bool{}
		}
		e.killed[p.Container.ID] = true
		e.mu.Unlock()
	}
	if err != nil && (sig == "STOP" || sig == "CONT") && (errors.Is(err, containers.ErrNotRunning) || !e.run.Running(ctx, p.Container)) {
		return nil
	}
	return err
}

// NetExec runs a host program in the node's network namespace. A node
// that is down has no namespace, and so no traffic to cut or rules to
// remove: that is not an error.
func (e *faultEnv) NetExec(ctx context.Context, p nemesis.Process, argv ...string) error {
	err := e.run.NetnsExec(ctx, p.Container, argv...)
	if errors.Is(err, containers.ErrNotRunning) {
		return nil
	}
	return err
}

// HostPID is the host's process id of the process's main program.
func (e *faultEnv) HostPID(ctx context.Context, p nemesis.Process) (int, error) {
	return e.run.HostPID(ctx, p.Container)
}

// CPULimit is the CPU limit of the process's container (nemesis.CPUEnv).
func (e *faultEnv) CPULimit(ctx context.Context, p nemesis.Process) (containers.CPULimit, error) {
	return e.run.CPULimit(ctx, p.Container)
}

// SetCPULimit changes the CPU limit of the process's container, up or
// down (nemesis.CPUEnv).
func (e *faultEnv) SetCPULimit(ctx context.Context, p nemesis.Process, l containers.CPULimit) error {
	return e.run.SetCPULimit(ctx, p.Container, l)
}

// Queue binds packet queue num in the node's network namespace: the
// packet faults' hand on each of its packets.
func (e *faultEnv) Queue(ctx context.Context, p nemesis.Process, num uint16) (nemesis.PacketQueue, error) {
	netns, err := e.run.Netns(ctx, p.Container)
	if err != nil {
		return nil, err
	}
	return nfqueue.Open(netns, num)
}

// Restart starts a node again and notes its address, which may have changed.
func (e *faultEnv) Restart(ctx context.Context, p nemesis.Process) error {
	c, err := e.run.Restart(ctx, p.Container)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.nodes {
		if e.nodes[i].Container.ID == c.ID {
			e.nodes[i].Container = c
		}
	}
	delete(e.killed, c.ID)
	return nil
}

func (e *faultEnv) Address(p nemesis.Process) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.nodes {
		if n.Container.ID == p.Container.ID {
			return n.Container.IP
		}
	}
	return p.Container.IP
}

// Stopped waits until the node's process is gone.
func (e *faultEnv) Stopped(ctx context.Context, p nemesis.Process) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for e.run.Running(ctx, p.Container) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s still runs: %w", p.Name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// DropUnsynced drops what the node wrote and never synced.
func (e *faultEnv) DropUnsynced(p nemesis.Process) (lazyfs.Dropped, error) {
	if e.disks == nil || !e.disks.Has(p.Name) {
		return lazyfs.Dropped{}, nemesis.ErrNoDisk
	}
	return e.disks.Drop(p.Name)
}

// DataDir is the node's data directory on the host, through its disk.
func (e *faultEnv) DataDir(p nemesis.Process) (string, error) {
	if e.disks == nil || !e.disks.Has(p.Name) {
		return "", nemesis.ErrNoDisk
	}
	return e.disks.Dir(p.Name), nil
}

// FollowLog streams what the process writes from now on.
func (e *faultEnv) FollowLog(ctx context.Context, p nemesis.Process) (io.ReadCloser, error) {
	return e.run.FollowLog(ctx, p.Container)
}

// Rules are the faults in force on the node's disk.
func (e *faultEnv) Rules(p nemesis.Process) (*disks.Rules, error) {
	if e.disks == nil || !e.disks.Has(p.Name) {
		return nil, nemesis.ErrNoDisk
	}
	return e.disks.Rules(p.Name), nil
}

func process(c containers.Container) nemesis.Process {
	return nemesis.Process{Name: c.Name, Container: c}
}
