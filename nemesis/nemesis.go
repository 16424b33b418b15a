// Package nemesis injects faults into a run: each kind of fault is a plug-in
// that starts and heals it, and Schedule drives them on the plan's
// timetable, writing every fault's start and end into the same history as
// the clients' operations.
package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/registry"
)

// Process is something a fault can hit: a server node or a client process.
type Process struct {
	Name      string // n1, c0
	Container containers.Container
	// Kind is a node's kind of server, as targets.Node has it ("" for the
	// servers that hold the data, "sentinel", ...).
	Kind string
}

// Env is what a nemesis acts on.
type Env interface {
	// Candidates lists the processes that fill a role at this moment:
	// nodes, clients, leader (the node that leads now) or holder (a client
	// that holds the lock by its own account).
	// The lookup of a leader asks the cluster, within ctx.
	Candidates(ctx context.Context, role string) []Process
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

// ActionEnv is an Env whose target has maintenance actions
// (targets.Administered), for the faults that run them.
type ActionEnv interface {
	// Act runs action on node p and says in a few words what it did.
	Act(ctx context.Context, p Process, action string) (string, error)
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
	// DataFiles lists node p's files of a class (targets.Disked), as
	// paths relative to dir, its data directory on the host as the node
	// sees it: a file changed there is changed for the node. ErrNoDisk
	// for a node without a disk.
	DataFiles(p Process, class string) (dir string, files []string, err error)
}

// ErrNoDisk is a DiskEnv's answer about a node without a disk.
var ErrNoDisk = errors.New("no disk")

// DiskFault is a nemesis that acts on nodes' disks: a run of a plan with
// one gives its nodes disks, and its target must keep its data in a
// directory of its own (targets.Disked).
type DiskFault interface {
	// FileClass is the class of files fault f changes, which the target
	// must have; "" if it changes none in particular.
	FileClass(f plans.Fault) string
}

// Injected is one fault in force: what the history records, and what its
// nemesis needs to heal it.
type Injected struct {
	// Targets describes what was hit ("n1", or "n1 -x- n2,n3" for a cut).
	Targets []string
	State   any
}

// Nemesis is one kind of fault.
type Nemesis interface {
	// Start injects one fault as f asks, drawing victims with rng. ctx
	// ends when it is too late to start; the act itself is not cut short.
	// No targets means there was nobody to hit this time. On error the
	// returned Injected says what may need healing.
	Start(ctx context.Context, w *World, f plans.Fault, rng *rand.Rand) (Injected, error)
	// Stop heals a fault: it undoes what this fault did, and leaves what
	// other faults in force hold (see World). It must be safe to repeat:
	// it also runs on abort.
	Stop(ctx context.Context, w *World, in Injected) error
}

// Reinstaller is a nemesis whose fault lives in a node's process or
// network namespace, which a node restarted by another fault comes back
// without: Reinstall puts the fault back as it was.
type Reinstaller interface {
	Reinstall(ctx context.Context, w *World, in Injected) error
}

// NodeRestarter is a nemesis whose heal restarts nodes.
type NodeRestarter interface {
	RestartsNodes()
}

// Pinner is a nemesis whose faults a replay can inject again on the same
// victims: Pin turns one fault of plan entry f, as the history recorded
// whom it hit (its targets), into an entry that hits those victims by
// name, whoever leads or holds by then. ErrNobodyHit for a fault that
// hit nobody.
type Pinner interface {
	Pin(f plans.Fault, targets []string) (plans.Fault, error)
}

// ErrNobodyHit is Pin's answer for a recorded fault that hit nobody.
var ErrNobodyHit = errors.New("the fault hit nobody")

// FaultChecker is a nemesis that checks its own fields of a plan's fault,
// before anything starts.
type FaultChecker interface {
	CheckFault(p *plans.Plan, i int) error
}

// Nemeses is the registry of fault kinds, by the name plans use.
var Nemeses = registry.New[Nemesis]("nemesis")
