// Package workloads holds what clients do to a cluster. Every client is its
// own OS process (the chaos binary run as an agent in its own container),
// so that a pause is a real SIGSTOP of the process that holds a lock.
package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/registry"
)

// Config is what one client process is told at start, through the
// environment variable ConfigEnv.
type Config struct {
	Process  int            `json:"process"`
	Seed     int64          `json:"seed"`
	Nodes    []string       `json:"nodes"`    // server addresses, host:port
	Resource string         `json:"resource"` // protected resource, host:port
	Workload plans.Workload `json:"workload"`
	// History is the run's history file as the client sees it.
	History string `json:"history"`
	// ClockStart is the run's start on CLOCK_MONOTONIC, shared by all
	// processes of the run since they share the host kernel.
	ClockStart time.Duration `json:"clock_start"`
}

// Node is the node the client process is bound to. Only that node, as in
// Jepsen: a client that failed over would hide a fault on its node.
func (c Config) Node() string { return c.Nodes[c.Process%len(c.Nodes)] }

// ConfigEnv is the environment variable that carries a client's Config.
const ConfigEnv = "CHAOS_CLIENT"

// Workload is a kind of client traffic.
type Workload interface {
	// Run is the body of one client process: it drives the cluster until
	// ctx ends, appending every operation to h. An operation under way when
	// ctx ends is finished, not abandoned.
	Run(ctx context.Context, cfg Config, h *history.Appender) error
	// Checkers names the analyzers that judge this workload's histories.
	Checkers() []string
	// Target is the kind of cluster the workload needs.
	Target() string
}

// PlanChecker is a workload that checks its own fields of a plan (lease,
// read mode, ...) and fills their defaults, before anything starts.
type PlanChecker interface {
	CheckPlan(p *plans.Plan) error
}

// Workloads is the registry of workloads, by the name plans use.
var Workloads = registry.New[Workload]("workload")

// ErrNotApplied marks an error after which an operation certainly did not
// take effect (the service said so, or the request never left). Any other
// error leaves its outcome unknown.
var ErrNotApplied = errors.New("not applied")

// Outcome is how an operation that ended with err is recorded: ok, fail
// if it certainly did not take effect, info (unknown) otherwise.
func Outcome(err error) history.Type {
	switch {
	case err == nil:
		return history.Ok
	case errors.Is(err, ErrNotApplied):
		return history.Fail
	}
	return history.Info
}
