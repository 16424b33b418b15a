// Package nemesis injects faults into a run: each kind of fault is a plug-in
// that starts and heals it on chosen processes, and Schedule drives them on
// the plan's timetable, writing every fault's start and end into the same
// history as the clients' operations.
package nemesis

import (
	"context"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/registry"
)

// Process is something a fault can hit: a server node or a client process.
type Process struct {
	Name      string               `json:"name"` // n1, c0
	Role      string               `json:"role"` // node or client
	Container containers.Container `json:"-"`
}

// Env is what a nemesis acts on.
type Env interface {
	// Candidates lists the processes that fill a role (holder, clients,
	// nodes) at this moment.
	Candidates(role string) []Process
	// Signal sends sig ("STOP", "CONT", ...) to a process.
	Signal(ctx context.Context, p Process, sig string) error
}

// Nemesis is one kind of fault.
type Nemesis interface {
	// Start injects the fault on victims.
	Start(ctx context.Context, env Env, victims []Process) error
	// Stop heals it. It must be safe to call on victims already healed:
	// it also runs when a run is aborted.
	Stop(ctx context.Context, env Env, victims []Process) error
}

// Nemeses is the registry of fault kinds, by the name plans use.
var Nemeses = registry.New[Nemesis]("nemesis")
