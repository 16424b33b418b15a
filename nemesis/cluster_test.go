package nemesis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/nfqueue"
)

// fakeCluster is a fake Env that keeps the state of its processes
// (running, stopped or down) and of each node's iptables, as the kernel
// and Docker would: a signal to a process that is down fails as it does
// for real, a restart of a process that runs is an illegal act, and a
// restarted node comes back with an empty network namespace and a new
// address. Every illegal act is recorded, for the tests to assert there
// was none. What faults ask of the target itself, its fakeTarget answers,
// on the same state.
type fakeCluster struct {
	mu      sync.Mutex
	roles   map[string][]string // role → process names
	state   map[string]string   // name → running, stopped, down
	addr    map[string]string
	netns   map[string]*netns
	acts    []string // "STOP c0", "RESTART n1", in order
	illegal []string
	// hook, if set, runs once, before the first command of its op on its
	// node.
	hook *hook
	// restarts count each node's restarts: its process id.
	restarts map[string]int
	// removed are the nodes the target took out of its members and has
	// not added back.
	removed map[string]bool
	// dirs are the nodes' data directories, by name (useDisks).
	dirs map[string]string
	drop lazyfs.Dropped
	// rules are the faults in force on the disks, which the tests ask
	// themselves (Rules.Before), by node.
	rules map[string]*disks.Rules
	// logs are the nodes' logs that crash points follow, by node.
	logs map[string]*io.PipeWriter
	// cpu are the containers' CPU limits, by name (CPUEnv); none if
	// absent. A container keeps its limit through a restart, as Docker's.
	cpu map[string]containers.CPULimit
}

type hook struct {
	node, op string
	f        func()
}

// before has f run before the next command op ("-N") on node.
func (c *fakeCluster) before(node, op string, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = &hook{node, op, f}
}

// netns is one node's filter table: its chains and INPUT's jumps; and the
// packet queues bound in it.
type netns struct {
	chains map[string][]string // chain → sources dropped
	input  []string            // chains INPUT jumps to
	queues map[uint16]*fakeQueue
}

// fakeQueue is a bound packet queue that never queues anything.
type fakeQueue struct {
	once   sync.Once
	closed chan struct{}
}

func (q *fakeQueue) Read() ([]nfqueue.Packet, error) {
	<-q.closed
	return nil, os.ErrClosed
}
func (q *fakeQueue) Pass(uint32, uint32, []byte) error { return nil }
func (q *fakeQueue) Send([]byte, uint32) error         { return nil }
func (q *fakeQueue) Close() error {
	q.once.Do(func() { close(q.closed) })
	return nil
}

// Queue binds a queue in the node's namespace as it is now: one number
// bound twice in one namespace is an illegal act, as the kernel refuses it.
func (c *fakeCluster) Queue(_ context.Context, p Process, num uint16) (PacketQueue, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] == "down" {
		return nil, containers.ErrNotRunning
	}
	t := c.netns[p.Name]
	if q := t.queues[num]; q != nil && !q.isClosed() {
		c.illegal = append(c.illegal, fmt.Sprintf("queue %d bound twice on %s", num, p.Name))
	}
	q := &fakeQueue{closed: make(chan struct{})}
	t.queues[num] = q
	return q, nil
}

func (q *fakeQueue) isClosed() bool {
	select {
	case <-q.closed:
		return true
	default:
		return false
	}
}

// openQueues counts the queues bound and open in the nodes' namespaces as
// they are now.
func (c *fakeCluster) openQueues() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.netns {
		for _, q := range t.queues {
			if !q.isClosed() {
				n++
			}
		}
	}
	return n
}

func newNetns() *netns { return &netns{chains: map[string][]string{}, queues: map[uint16]*fakeQueue{}} }

func newFakeCluster(nodes, clients int) *fakeCluster {
	c := &fakeCluster{roles: map[string][]string{}, state: map[string]string{}, addr: map[string]string{}, netns: map[string]*netns{},
		restarts: map[string]int{}, removed: map[string]bool{}, cpu: map[string]containers.CPULimit{}}
	for i := 1; i <= nodes; i++ {
		n := fmt.Sprintf("n%d", i)
		c.roles["nodes"] = append(c.roles["nodes"], n)
		c.state[n], c.addr[n], c.netns[n] = "running", "ip-"+n, newNetns()
	}
	for i := range clients {
		n := fmt.Sprintf("c%d", i)
		c.roles["clients"] = append(c.roles["clients"], n)
		c.state[n] = "running"
	}
	return c
}

// Candidates lists the processes of a role; the World asks the target
// for the leader (fakeTarget.Leader), not the env.
func (c *fakeCluster) Candidates(_ context.Context, role string) []Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []Process
	for _, n := range c.roles[role] {
		// The container's ID is its name, as in Nodes: World.server
		// matches a process to its node by ID.
		ps = append(ps, Process{Name: n, Container: containers.Container{ID: n, Name: n}})
	}
	return ps
}

// Nodes are the nodes, in the order of their role; up leaves out those
// down.
func (c *fakeCluster) Nodes(up bool) []cluster.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ns []cluster.Node
	for _, n := range c.roles["nodes"] {
		if !(up && c.state[n] == "down") {
			ns = append(ns, cluster.Node{Container: containers.Container{ID: n, Name: n, IP: c.addr[n]}})
		}
	}
	return ns
}

func (c *fakeCluster) Signal(_ context.Context, p Process, sig string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, sig+" "+p.Name)
	if c.state[p.Name] == "down" {
		if sig == "KILL" {
			return fmt.Errorf("SIGKILL to %s: %w", p.Name, containers.ErrNotRunning)
		}
		return nil // as faultEnv: nothing to stop or resume
	}
	switch sig {
	case "STOP":
		c.state[p.Name] = "stopped"
	case "CONT":
		c.state[p.Name] = "running"
	case "KILL":
		c.state[p.Name] = "down"
	}
	return nil
}

func (c *fakeCluster) Restart(_ context.Context, p Process) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, "RESTART "+p.Name)
	if c.state[p.Name] != "down" {
		c.illegal = append(c.illegal, "restart of "+p.Name+", which is "+c.state[p.Name])
		return nil
	}
	c.state[p.Name] = "running"
	c.restarts[p.Name]++
	c.addr[p.Name] += "'"
	c.netns[p.Name] = newNetns()
	return nil
}

func (c *fakeCluster) Address(p Process) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addr[p.Name]
}

// exitStatus is the error of a command that exited with a status.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e exitStatus) ExitCode() int { return int(e) }

// NetExec runs iptables as the real one would, in the node's table; a node
// that is down has none, and there is nothing to do (as faultEnv).
func (c *fakeCluster) NetExec(_ context.Context, p Process, argv ...string) error {
	c.mu.Lock()
	h := c.hook
	if h != nil && h.node == p.Name && len(argv) > 2 && argv[2] == h.op {
		c.hook = nil
	} else {
		h = nil
	}
	c.mu.Unlock()
	if h != nil {
		h.f()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] == "down" {
		return nil
	}
	if len(argv) < 4 || argv[0] != "iptables" || argv[1] != "-w" {
		c.illegal = append(c.illegal, fmt.Sprintf("%s: %q", p.Name, argv))
		return exitStatus(2)
	}
	t := c.netns[p.Name]
	op, chain := argv[2], argv[3]
	_, exists := t.chains[chain]
	switch {
	case op == "-N" && !exists:
		t.chains[chain] = []string{}
	case op == "-A" && exists && len(argv) == 8 && argv[4] == "-s":
		t.chains[chain] = append(t.chains[chain], strings.Split(argv[5], ",")...)
	case op == "-A" && exists && slices.Equal(argv[4:11], []string{"!", "-i", "lo", "-m", "statistic", "--mode", "random"}) && len(argv) == 15:
		// A loss: its share of every packet, written "random P".
		t.chains[chain] = append(t.chains[chain], "random "+argv[12])
	case op == "-A" && exists && slices.Equal(argv[4:9], []string{"!", "-i", "lo", "-m", "mark"}) && len(argv) == 17 && argv[13] == "NFQUEUE":
		// A packet fault: every packet but its own marked ones to its
		// queue, written "queue N".
		t.chains[chain] = append(t.chains[chain], "queue "+argv[15])
	case op == "-F" && exists:
		t.chains[chain] = []string{}
	case op == "-X" && exists && !slices.Contains(t.input, chain):
		delete(t.chains, chain)
	case op == "-I" && chain == "INPUT" && len(argv) == 6:
		if _, ok := t.chains[argv[5]]; !ok {
			return exitStatus(2)
		}
		t.input = append([]string{argv[5]}, t.input...)
	case op == "-D" && chain == "INPUT" && len(argv) == 6:
		i := slices.Index(t.input, argv[5])
		if i < 0 {
			return exitStatus(1)
		}
		t.input = slices.Delete(t.input, i, i+1)
	default:
		return exitStatus(1)
	}
	return nil
}

// HostPID makes the fake cluster a ProcessEnv: a process's id changes
// when it restarts. The ids are negative, no host process's: clock faults
// on the fake cluster would fail, and the tests make none.
func (c *fakeCluster) HostPID(_ context.Context, p Process) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] == "down" {
		return 0, containers.ErrNotRunning
	}
	return -1 - c.restarts[p.Name], nil
}

// CPULimit makes the fake cluster a CPUEnv.
func (c *fakeCluster) CPULimit(_ context.Context, p Process) (containers.CPULimit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cpu[p.Name], nil
}

// SetCPULimit records the limit as "CPU n1 5000/100000" (quota/period)
// or "CPU n1 2500000000n" (NanoCPUs); a container down takes it too.
func (c *fakeCluster) SetCPULimit(_ context.Context, p Process, l containers.CPULimit) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	how := fmt.Sprintf("%d/%d", l.Quota, l.Period)
	if l.NanoCPUs > 0 {
		how = fmt.Sprintf("%dn", l.NanoCPUs)
	}
	c.acts = append(c.acts, "CPU "+p.Name+" "+how)
	c.cpu[p.Name] = l
	return nil
}

// drops is what node n drops now: the union of its chains' sources.
func (c *fakeCluster) drops(n string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ch := range c.netns[n].input {
		out = append(out, c.netns[n].chains[ch]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// chains counts the chains on every node.
func (c *fakeCluster) chains() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.netns {
		n += len(t.chains)
	}
	return n
}

func (c *fakeCluster) stateOf(n string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state[n]
}

// actsSince are the acts from the i-th on.
func (c *fakeCluster) actsSince(i int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.acts[i:])
}

func (c *fakeCluster) illegalActs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.illegal)
}

// useDisks gives the fake cluster's nodes a data directory each (plain
// directories: the layer itself is lazyfs's to test) and a canned drop,
// as DiskEnv. A drop, or the data directory asked for, of a node that
// runs is illegal.
func (c *fakeCluster) useDisks(dirs map[string]string, drop lazyfs.Dropped) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dirs, c.drop, c.rules = dirs, drop, map[string]*disks.Rules{}
}

func (c *fakeCluster) Stopped(_ context.Context, p Process) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] != "down" {
		return fmt.Errorf("%s is %s", p.Name, c.state[p.Name])
	}
	return nil
}

func (c *fakeCluster) DropUnsynced(p Process) (lazyfs.Dropped, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, "DROP "+p.Name)
	if c.state[p.Name] != "down" {
		c.illegal = append(c.illegal, "drop of "+p.Name+", which is "+c.state[p.Name])
	}
	if c.dirs[p.Name] == "" {
		return lazyfs.Dropped{}, ErrNoDisk
	}
	return c.drop, nil
}

// FollowLog is what the test writes as the node's log (logTo).
func (c *fakeCluster) FollowLog(_ context.Context, p Process) (io.ReadCloser, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, w := io.Pipe()
	if c.logs == nil {
		c.logs = map[string]*io.PipeWriter{}
	}
	c.logs[p.Name] = w
	return r, nil
}

// logTo writes line to node's log once a crash point follows it.
func (c *fakeCluster) logTo(node, line string) {
	for {
		c.mu.Lock()
		w := c.logs[node]
		c.mu.Unlock()
		if w != nil {
			fmt.Fprintln(w, line)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Rules are the faults in force on the node's disk.
func (c *fakeCluster) Rules(p Process) (*disks.Rules, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs[p.Name] == "" {
		return nil, ErrNoDisk
	}
	if c.rules[p.Name] == nil {
		c.rules[p.Name] = &disks.Rules{}
	}
	return c.rules[p.Name], nil
}

// DataDir is the node's data directory, which a fault may ask for only
// once the node is down.
func (c *fakeCluster) DataDir(p Process) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] != "down" {
		c.illegal = append(c.illegal, "files of "+p.Name+", which is "+c.state[p.Name])
	}
	if c.dirs[p.Name] == "" {
		return "", ErrNoDisk
	}
	return c.dirs[p.Name], nil
}

// target is the fake cluster as a plan's target.
func (c *fakeCluster) target() fakeTarget { return fakeTarget{c} }

// setting is what a plan's faults on the fake cluster are bound against:
// its target, nodes and clients.
func (c *fakeCluster) setting() Setting {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Setting{Target: c.target(), TargetKind: "fake", Nodes: len(c.roles["nodes"]), Clients: len(c.roles["clients"])}
}

// fakeTarget is what the faults ask of the fake cluster's target itself
// (World.Target), acting on the fake's state and recording its acts with
// the env's: its leader is the node of role leader, it has maintenance
// actions, members it can change and a data directory on each node.
type fakeTarget struct{ c *fakeCluster }

// Leader is the node the role leader names, among nodes; none if it
// names none.
func (f fakeTarget) Leader(_ context.Context, nodes []cluster.Node) (cluster.Node, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	for _, n := range nodes {
		if slices.Contains(f.c.roles["leader"], n.Name()) {
			return n, nil
		}
	}
	return cluster.Node{}, errors.New("no leader")
}

func (fakeTarget) Actions() []string { return []string{"compact", "defrag"} }

// Act runs a maintenance action: a paused node does not answer.
func (f fakeTarget) Act(_ context.Context, n cluster.Node, action string) (string, error) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, strings.ToUpper(action)+" "+n.Name())
	if c.state[n.Name()] != "running" {
		return "", fmt.Errorf("%s is %s", n.Name(), c.state[n.Name()])
	}
	return "did " + action, nil
}

func (fakeTarget) ChangesMembers() error { return nil }

// RemoveMember removes a member only while it is down, and AddMember
// adds it back only when removed and down.
func (f fakeTarget) RemoveMember(_ context.Context, _ []cluster.Node, n cluster.Node) (string, error) {
	return f.c.member(n.Name(), "REMOVE", "down")
}

func (f fakeTarget) AddMember(_ context.Context, _ *containers.Run, _ []cluster.Node, n cluster.Node) (string, error) {
	return f.c.member(n.Name(), "ADD", "down")
}

// Joined is asked of a member once it runs again.
func (f fakeTarget) Joined(_ context.Context, _ *containers.Run, _ []cluster.Node, n cluster.Node) error {
	_, err := f.c.member(n.Name(), "JOINED", "running")
	return err
}

// Members are the nodes not removed, by name, sorted.
func (f fakeTarget) Members(context.Context, []cluster.Node) ([]string, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	var ms []string
	for _, n := range f.c.roles["nodes"] {
		if !f.c.removed[n] {
			ms = append(ms, n)
		}
	}
	slices.Sort(ms)
	return ms, nil
}

// FileClasses has one class, log: the directory's *.log files.
func (fakeTarget) FileClasses() map[string][]string { return map[string][]string{"log": {"*.log"}} }

func (c *fakeCluster) member(name, act, state string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, act+" "+name)
	if c.state[name] != state {
		c.illegal = append(c.illegal, fmt.Sprintf("%s of %s, which is %s", act, name, c.state[name]))
	}
	switch act {
	case "REMOVE":
		c.removed[name] = true
	case "ADD":
		delete(c.removed, name)
	}
	return strings.ToLower(act) + "d", nil
}
