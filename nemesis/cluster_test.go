package nemesis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/nfqueue"
)

// cluster is a fake Env that keeps the state of its processes (running,
// stopped or down) and of each node's iptables, as the kernel and Docker
// would: a signal to a process that is down fails as it does for real, a
// restart of a process that runs is an illegal act, and a restarted node
// comes back with an empty network namespace and a new address. Every
// illegal act is recorded, for the tests to assert there was none.
type cluster struct {
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
	// dirs are the nodes' data directories, by name (useDisks).
	dirs map[string]string
	drop lazyfs.Dropped
}

type hook struct {
	node, op string
	f        func()
}

// before has f run before the next command op ("-N") on node.
func (c *cluster) before(node, op string, f func()) {
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
func (c *cluster) Queue(_ context.Context, p Process, num uint16) (PacketQueue, error) {
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
func (c *cluster) openQueues() int {
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

func newCluster(nodes, clients int) *cluster {
	c := &cluster{roles: map[string][]string{}, state: map[string]string{}, addr: map[string]string{}, netns: map[string]*netns{},
		restarts: map[string]int{}}
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

func (c *cluster) Candidates(_ context.Context, role string) []Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []Process
	for _, n := range c.roles[role] {
		ps = append(ps, Process{Name: n, Container: containers.Container{Name: n}})
	}
	return ps
}

func (c *cluster) Signal(_ context.Context, p Process, sig string) error {
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

// Act runs a maintenance action: a paused node does not answer.
func (c *cluster) Act(_ context.Context, p Process, action string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, strings.ToUpper(action)+" "+p.Name)
	if c.state[p.Name] != "running" {
		return "", fmt.Errorf("%s is %s", p.Name, c.state[p.Name])
	}
	return "did " + action, nil
}

func (c *cluster) Restart(_ context.Context, p Process) error {
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

func (c *cluster) Address(p Process) string {
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
func (c *cluster) NetExec(_ context.Context, p Process, argv ...string) error {
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

// HostPID makes the cluster a ProcessEnv: a process's id changes when it
// restarts. The ids are negative, no host process's: clock faults on the
// cluster would fail, and the tests make none.
func (c *cluster) HostPID(_ context.Context, p Process) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] == "down" {
		return 0, containers.ErrNotRunning
	}
	return -1 - c.restarts[p.Name], nil
}

// RemoveMember makes the cluster a MemberEnv: a member is removed only
// while it is down, and added back only when removed and down.
func (c *cluster) RemoveMember(_ context.Context, p Process) (string, error) {
	return c.member(p, "REMOVE", "down")
}

func (c *cluster) AddMember(_ context.Context, p Process) (string, error) {
	return c.member(p, "ADD", "down")
}

// Joined is asked of a member once it runs again.
func (c *cluster) Joined(_ context.Context, p Process) error {
	_, err := c.member(p, "JOINED", "running")
	return err
}

func (c *cluster) member(p Process, act, state string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, act+" "+p.Name)
	if c.state[p.Name] != state {
		c.illegal = append(c.illegal, fmt.Sprintf("%s of %s, which is %s", act, p.Name, c.state[p.Name]))
	}
	return strings.ToLower(act) + "d", nil
}

// drops is what node n drops now: the union of its chains' sources.
func (c *cluster) drops(n string) []string {
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
func (c *cluster) chains() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.netns {
		n += len(t.chains)
	}
	return n
}

func (c *cluster) stateOf(n string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state[n]
}

// actsSince are the acts from the i-th on.
func (c *cluster) actsSince(i int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.acts[i:])
}

func (c *cluster) illegalActs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.illegal)
}

// disks gives the fake cluster's nodes a data directory each (plain
// directories: the layer itself is lazyfs's to test) and a canned drop,
// as DiskEnv. A drop or a file listing of a node that runs is illegal.
func (c *cluster) useDisks(dirs map[string]string, drop lazyfs.Dropped) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dirs, c.drop = dirs, drop
}

func (c *cluster) Stopped(_ context.Context, p Process) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] != "down" {
		return fmt.Errorf("%s is %s", p.Name, c.state[p.Name])
	}
	return nil
}

func (c *cluster) DropUnsynced(p Process) (lazyfs.Dropped, error) {
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

// DataFiles has one class, log: the directory's *.log files.
func (c *cluster) DataFiles(p Process, class string) (string, []string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state[p.Name] != "down" {
		c.illegal = append(c.illegal, "files of "+p.Name+", which is "+c.state[p.Name])
	}
	dir := c.dirs[p.Name]
	if dir == "" {
		return "", nil, ErrNoDisk
	}
	m, err := filepath.Glob(filepath.Join(dir, "*."+class))
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return dir, m, err
}
