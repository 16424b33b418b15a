package nemesis

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
)

// netEnv records the commands run in nodes' network namespaces; addresses
// change when a node restarts, as they may on a real network.
type netEnv struct {
	mu       sync.Mutex
	nodes    []Process
	addr     map[string]string
	commands []string
}

func (e *netEnv) Candidates(role string) []Process {
	if role == "nodes" {
		return append([]Process(nil), e.nodes...)
	}
	return nil
}
func (e *netEnv) Signal(context.Context, Process, string) error { return nil }
func (e *netEnv) Restart(_ context.Context, p Process) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addr[p.Name] += "-new"
	return nil
}
func (e *netEnv) NetExec(_ context.Context, p Process, argv ...string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.commands = append(e.commands, p.Name+": "+strings.Join(argv, " "))
	return nil
}
func (e *netEnv) Address(p Process) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addr[p.Name]
}

// A node killed and restarted while a partition is in force comes back
// without its rules and at another address: healing the kill puts the
// partition back, addressed anew.
func TestKillHealReinstallsPartition(t *testing.T) {
	env := &netEnv{addr: map[string]string{}}
	for _, n := range []string{"n1", "n2", "n3"} {
		env.nodes = append(env.nodes, Process{Name: n, Container: containers.Container{Name: n}})
		env.addr[n] = "ip-" + n
	}
	h, err := history.OpenAppender(filepath.Join(t.TempDir(), "h.jsonl"), history.NewClock(), history.Nemesis)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s, err := NewSchedule(env, h, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	if err := s.start(ctx, 0, Partition{}, plans.Fault{Kind: "partition", Shape: "isolate-one"}, rng); err != nil {
		t.Fatal(err)
	}
	if err := s.start(ctx, 1, Kill{}, plans.Fault{Kind: "kill", Target: "nodes", Count: 1}, rng); err != nil {
		t.Fatal(err)
	}
	env.commands = nil
	if err := s.stop(ctx, 1); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(env.commands, "\n")
	if strings.Count(all, "-F INPUT") != 3 || !strings.Contains(all, "-new") || !strings.Contains(all, "DROP") {
		t.Fatalf("after the killed node's restart, commands were:\n%s\nwant every node flushed and the rules put back with the new address", all)
	}
	if got := s.Active(); len(got) != 1 || !strings.HasPrefix(got[0], "partition") {
		t.Errorf("active faults %v, want the partition alone", got)
	}
}
