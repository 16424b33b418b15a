// Package nemesis injects faults into a run: each kind of fault is a plug-in
// that starts and heals it, and Schedule drives them on the plan's
// timetable, writing every fault's start and end into the same history as
// the clients' operations.
package nemesis

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/plans"
)

// Process is something a fault can hit: a server node or a client process.
type Process struct {
	Name      string // n1, c0
	Container containers.Container
	// Kind is a node's kind of server, as cluster.Node has it ("" for the
	// servers that hold the data, "sentinel", ...).
	Kind string
}

// NodeProcess is node n as a process a fault can hit.
func NodeProcess(n cluster.Node) Process {
	return Process{Name: n.Name(), Container: n.Container, Kind: n.Kind}
}

// Env is what a nemesis acts on: the run's processes, as the harness
// reaches them.
type Env interface {
	// Candidates lists the processes that fill a role at this moment:
	// nodes (every server, of every kind), clients or holder (a client
	// that holds the lock by its own account); the World finds the
	// leader (Leaderer), and pickVictims makes all every node.
	Candidates(ctx context.Context, role string) []Process
	// Nodes are the cluster's nodes, where they are now; up leaves out
	// those killed and not restarted since, whose addresses are stale.
	Nodes(up bool) []cluster.Node
	// Signal sends sig ("STOP", "CONT", "KILL") to a process.
	Signal(ctx context.Context, p Process, sig string) error
	// Restart starts a killed node again, with its data kept.
	Restart(ctx context.Context, p Process) error
	// NetExec runs a host program (iptables) in a node's network
	// namespace, with the harness's privileges: the node has none.
	NetExec(ctx context.Context, p Process, argv ...string) error
	// Address is the node's current address on the run's network.
	Address(p Process) string
}

// ProcessEnv is an Env that can name the host's process id of a process,
// for faults that act on the process itself (its clock).
type ProcessEnv interface {
	HostPID(ctx context.Context, p Process) (int, error)
}

// CPUEnv is an Env that can limit the CPU time of a process's container
// (its cgroup's CFS quota), for the cpu faults.
type CPUEnv interface {
	CPULimit(ctx context.Context, p Process) (containers.CPULimit, error)
	SetCPULimit(ctx context.Context, p Process, l containers.CPULimit) error
}

// RunEnv is an Env whose processes are containers of a run, which a
// target that changes its members writes into and runs programs in.
type RunEnv interface {
	Run() *containers.Run
}

// DiskEnv is an Env whose nodes keep their data on disks the harness
// holds (package disks), for the disk faults.
type DiskEnv interface {
	// Stopped waits until node p's process is gone (killed), so that
	// nothing it does reaches its disk any more.
	Stopped(ctx context.Context, p Process) error
	// DropUnsynced discards what node p wrote and never synced, as a
	// power loss would; ErrNoDisk for a node without a disk (a Redis
	// sentinel).
	DropUnsynced(p Process) (lazyfs.Dropped, error)
	// DataDir is node p's data directory on the host, as the node sees
	// it: a file changed there is changed for the node. ErrNoDisk for a
	// node without a disk.
	DataDir(p Process) (string, error)
	// Rules are the faults in force on node p's disk (slow, hung,
	// failing, full, a crash point). ErrNoDisk for a node without a disk.
	Rules(p Process) (*disks.Rules, error)
}

// LogEnv is an Env that can follow what a process writes to its log, for
// the crash points that fire at a line of it.
type LogEnv interface {
	// FollowLog streams what p writes from now on, until ctx ends or
	// the reader is closed.
	FollowLog(ctx context.Context, p Process) (io.ReadCloser, error)
}

// ErrNoDisk is a DiskEnv's answer about a node without a disk.
var ErrNoDisk = errors.New("no disk")

// Injected is one fault in force: what the history records, and what its
// nemesis needs to heal it.
type Injected struct {
	// Targets describes what was hit ("n1", or "n1 -x- n2,n3" for a cut).
	Targets []string
	State   any
}

// Entry is one fault of a plan as its kind sees it: the kind's name, the
// fields every fault has, checked and with their defaults, and the kind's
// own, P.
type Entry[P any] struct {
	Kind string
	plans.Schedule
	Params P
}

// Setting is what a plan's fault is checked against: the cluster and the
// workload of the plan.
type Setting struct {
	// Target is the plan's cluster as its kind bound it (a
	// targets.Target). A fault that needs something of it (a capability:
	// Administered, Membered, Disked, ...) asks by type assertion (need).
	Target any
	// TargetKind is its kind's name, Nodes its size, and Clients the
	// workload's.
	TargetKind     string
	Nodes, Clients int
}

// Kind is one kind of fault, with fields of its own in a plan of type P
// (struct{} for a kind without any).
type Kind[P any] interface {
	// Check checks a plan's fault of this kind before anything starts:
	// its role (checkRole), its own fields (filling their defaults), and
	// what it needs of the target (need). The fields every fault has are
	// checked already, with their defaults (a count left out is 1). A
	// *plans.FieldError names the field at fault.
	Check(e *Entry[P], s Setting) error
	// Start injects one fault as e asks, drawing victims with rng. ctx
	// ends when it is too late to start; the act itself is not cut short.
	// No targets means there was nobody to hit this time. On error the
	// returned Injected says what may need healing. (pickVictims draws
	// them; holdAll and releaseAll hold them in the World's ledger, as
	// pause and kill do.)
	Start(ctx context.Context, w *World, e Entry[P], rng *rand.Rand) (Injected, error)
	// Stop heals a fault that Start left targets or state for (it is not
	// called for one that hit nobody): it undoes what this fault did, and
	// leaves what other faults in force hold (see World). It must be
	// safe to repeat: it also runs on abort.
	Stop(ctx context.Context, w *World, in Injected) error
}

// Traits say what a kind of fault does beyond its victims' processes, for
// the run to provide for: a kind with any states them (Traited).
type Traits struct {
	// RestartsNodes: its heal restarts nodes, which come back without the
	// faults in force on them (Reinstaller), so the schedule puts those
	// back.
	RestartsNodes bool
	// Disks: it acts on nodes' disks, so a run with it gives its nodes
	// disks (package disks), and its target must keep its data in a
	// directory of its own (Disked).
	Disks bool
}

// Traited is a kind of fault with traits.
type Traited interface{ Traits() Traits }

// Reinstaller is a kind of fault whose fault lives in a node's process or
// network namespace, which a node restarted by another fault comes back
// without: Reinstall puts the fault back as it was.
type Reinstaller interface {
	Reinstall(ctx context.Context, w *World, in Injected) error
}

// Pinner is a kind of fault whose faults a replay can inject again on the
// same victims: Pin turns one fault of entry e, as the history recorded
// whom it hit (its targets), into an entry that hits those victims by
// name, whoever leads or holds by then. ErrNobodyHit for a fault that
// hit nobody.
type Pinner[P any] interface {
	Pin(e Entry[P], targets []string) (Entry[P], error)
}

// ErrNobodyHit is Pin's answer for a recorded fault that hit nobody.
var ErrNobodyHit = errors.New("the fault hit nobody")

// Explorable is a kind of fault that can draw a fault of its own for a
// cluster of some nodes: its victims' role and count and its fields, all
// valid (its Check accepts them), for the combined kind.
type Explorable[P any] interface {
	Explore(rng *rand.Rand, nodes int) Entry[P]
}

// Finisher is a kind of fault that has something to check once the run's
// faults are healed (the cluster's members, after members were changed):
// it records what it finds in the history, and an error leaves the run
// unfinished.
type Finisher interface {
	Finish(ctx context.Context, w *World, h *history.Appender) error
}
