package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/nfqueue"
	"github.com/chaos-testing/chaos/targets"
)

// faultEnv is what the nemesis may act on in a run: its nodes and clients.
type faultEnv struct {
	run    *containers.Run
	target targets.Target
	live   *live
	disks  *disks.Set // nil unless the plan has a disk fault

	mu      sync.Mutex
	nodes   []targets.Node
	clients []nemesis.Process // index = history process number
	// killed are the nodes killed and not restarted since, by container
	// ID: their addresses may already belong to another node restarted
	// meanwhile.
	killed map[string]bool
}

func (e *faultEnv) Candidates(ctx context.Context, role string) []nemesis.Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ps []nemesis.Process
	switch role {
	case "nodes":
		for _, n := range e.nodes {
			ps = append(ps, node(n))
		}
	case "clients":
		ps = append(ps, e.clients...)
	case "holder":
		for _, p := range e.live.holders() {
			if len(e.clients) > 0 { // process p is a worker of client p mod clients
				ps = append(ps, e.clients[p%len(e.clients)])
			}
		}
	case "leader":
		if l, ok := e.target.(targets.Leaderer); ok {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if n, err := l.Leader(ctx, e.nodes); err == nil {
				ps = append(ps, node(n))
			}
		}
	}
	return ps
}

// servers lists the data servers (nodes of kind ""), where they are now.
func (e *faultEnv) servers() []targets.Node { return e.dataServers(false) }

// dataServers lists the data servers; up leaves out those killed and not
// restarted since, whose addresses are stale.
func (e *faultEnv) dataServers(up bool) []targets.Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ns []targets.Node
	for _, n := range e.nodes {
		if n.Kind == "" && !(up && e.killed[n.Container.ID]) {
			ns = append(ns, n)
		}
	}
	return ns
}

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

// Act runs a maintenance action of the target on node p.
func (e *faultEnv) Act(ctx context.Context, p nemesis.Process, action string) (string, error) {
	a, ok := e.target.(targets.Administered)
	if !ok {
		return "", fmt.Errorf("the target has no maintenance actions")
	}
	for _, n := range e.servers() {
		if n.Container.ID == p.Container.ID {
			return a.Act(ctx, n, action)
		}
	}
	return "", fmt.Errorf("%s is not a data server", p.Name)
}

// RemoveMember takes node p out of its cluster (targets.Membered).
func (e *faultEnv) RemoveMember(ctx context.Context, p nemesis.Process) (string, error) {
	m, n, err := e.membered(p)
	if err != nil {
		return "", err
	}
	return m.RemoveMember(ctx, e.dataServers(true), n)
}

// AddMember readies node p to come back to its cluster as a new member.
func (e *faultEnv) AddMember(ctx context.Context, p nemesis.Process) (string, error) {
	m, n, err := e.membered(p)
	if err != nil {
		return "", err
	}
	return m.AddMember(ctx, e.run, e.dataServers(true), n)
}

// Joined waits until node p, restarted after AddMember, has joined. A node
// that exits before it has joined (containers.ErrNotRunning) is started
// again, until ctx ends: an etcd member that asked a peer which had not
// yet applied its MemberAdd learns a membership without itself and stops.
func (e *faultEnv) Joined(ctx context.Context, p nemesis.Process) error {
	for {
		m, n, err := e.membered(p)
		if err != nil {
			return err
		}
		err = m.Joined(ctx, e.run, e.dataServers(true), n)
		if !errors.Is(err, containers.ErrNotRunning) || ctx.Err() != nil {
			return err
		}
		if err := e.Restart(ctx, p); err != nil {
			return err
		}
	}
}

// membered is the target as a targets.Membered, and p as its node.
func (e *faultEnv) membered(p nemesis.Process) (targets.Membered, targets.Node, error) {
	m, ok := e.target.(targets.Membered)
	if !ok {
		return nil, targets.Node{}, fmt.Errorf("the target cannot change its members")
	}
	for _, n := range e.servers() {
		if n.Container.ID == p.Container.ID {
			return m, n, nil
		}
	}
	return nil, targets.Node{}, fmt.Errorf("%s is not a data server", p.Name)
}

// HostPID is the host's process id of the process's main program.
func (e *faultEnv) HostPID(ctx context.Context, p nemesis.Process) (int, error) {
	return e.run.HostPID(ctx, p.Container)
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

// DataFiles lists the node's files of a class, through its disk.
func (e *faultEnv) DataFiles(p nemesis.Process, class string) (string, []string, error) {
	d, ok := e.target.(targets.Disked)
	if e.disks == nil || !e.disks.Has(p.Name) || !ok {
		return "", nil, nemesis.ErrNoDisk
	}
	dir := e.disks.Dir(p.Name)
	var files []string
	for _, pattern := range d.FileClasses()[class] {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return "", nil, fmt.Errorf("files of class %s: %w", class, err)
		}
		for _, path := range m {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
	}
	return dir, files, nil
}

func process(c containers.Container) nemesis.Process {
	return nemesis.Process{Name: c.Name, Container: c}
}

func node(n targets.Node) nemesis.Process {
	return nemesis.Process{Name: n.Container.Name, Container: n.Container, Kind: n.Kind}
}
