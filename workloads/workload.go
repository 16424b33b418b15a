// Package workloads holds what clients do to a cluster. Every client is its
// own OS process (the chaos binary run as an agent in its own container),
// so that a pause is a real SIGSTOP of the process that holds a lock.
package workloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

// Config is what one client process is told at start, through the
// environment variable ConfigEnv.
type Config struct {
	Process int      `json:"process"`
	Seed    int64    `json:"seed"`
	Nodes   []string `json:"nodes"` // server addresses, host:port
	// Service is the name of the service clients ask the servers at
	// Nodes for, for a target whose clients find the servers through
	// others (targets.Discovered: Redis Sentinel's primary); "" otherwise.
	Service  string `json:"service,omitempty"`
	Resource string `json:"resource"` // protected resource, host:port
	// Workload is the workload's kind, Clients how many client processes
	// run it, and Fields its own fields as the run bound them.
	Workload string          `json:"workload"`
	Clients  int             `json:"clients"`
	Fields   json.RawMessage `json:"fields,omitempty"`
	// History is the run's history file as the client sees it.
	History string `json:"history"`
	// ClockStart is the run's start on CLOCK_MONOTONIC, shared by all
	// processes of the run since they share the host kernel.
	ClockStart time.Duration `json:"clock_start"`
}

// Client is what one client process of a workload with own fields P runs
// with: its Config, and those fields, typed.
type Client[P any] struct {
	Config
	Params P
}

// Node is the node the client process is bound to. Only that node, as in
// Jepsen: a client that failed over would hide a fault on its node.
func (c Config) Node() string { return c.Nodes[c.Process%len(c.Nodes)] }

// appender appends to the run's history as process.
func (c Config) appender(process int) (*history.Appender, error) {
	return history.OpenAppender(c.History, history.Clock{Start: c.ClockStart}, process)
}

// RunClient is the body of a client process, in its container or in a
// test: it runs the workload cfg names until ctx ends, appending to the
// run's history as process cfg.Process.
func RunClient(ctx context.Context, cfg Config) error {
	w, ok := Workloads.Lookup(cfg.Workload)
	if !ok {
		return fmt.Errorf("unknown workload %q", cfg.Workload)
	}
	h, err := cfg.appender(cfg.Process)
	if err != nil {
		return err
	}
	return errors.Join(w.run(ctx, cfg, h), h.Close())
}

// Workers runs n workers of the client process cfg describes, each with
// one operation in flight and a history process of its own: worker 0 is
// the client's own process and appends to h; worker k is process
// cfg.Process + k × clients, so that no two workers of a run share a
// number, and process p belongs to client p mod clients.
func Workers(ctx context.Context, cfg Config, h *history.Appender, n int, work func(ctx context.Context, process int, h *history.Appender) error) error {
	hs := []*history.Appender{h}
	for k := 1; k < n; k++ {
		hk, err := cfg.appender(cfg.Process + k*cfg.Clients)
		if err != nil {
			for _, o := range hs[1:] {
				o.Close()
			}
			return err
		}
		hs = append(hs, hk)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k, hk := range hs {
		wg.Go(func() {
			errs[k] = work(ctx, cfg.Process+k*cfg.Clients, hk)
			if k > 0 {
				errs[k] = errors.Join(errs[k], hk.Close())
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ConfigEnv is the environment variable that carries a client's Config.
const ConfigEnv = "CHAOS_CLIENT"

// Kind is a kind of client traffic, with fields of its own in a plan of
// type P (struct{} for a kind without any).
type Kind[P any] interface {
	// Target is the kind of cluster the workload runs against.
	Target() string
	// Check checks the workload's own fields p against the plan's
	// cluster, and fills their defaults, before anything starts. A
	// *plans.FieldError names the field at fault.
	Check(p *P, s Setting) error
	// Needs is what else a run of the workload with p needs.
	Needs(p P) Needs
	// Checkers are the checkers that judge this workload's histories.
	Checkers() []analysis.Checker
	// Libraries are the Go modules of the client libraries its clients
	// drive the cluster with, whose versions a run records.
	Libraries() []string
	// Run is the body of one client process: it drives the cluster until
	// ctx ends, appending every operation to h. An operation under way when
	// ctx ends is finished, not abandoned.
	Run(ctx context.Context, c Client[P], h *history.Appender) error
}

// Setting is what a plan's workload is checked against: the cluster it
// runs on.
type Setting struct {
	// Workload is the workload's kind, and Clients how many client
	// processes run it.
	Workload string
	Clients  int
	// Target is the plan's cluster as its kind bound it; TargetKind is
	// that kind's name, and Nodes its size.
	Target     targets.Target
	TargetKind string
	Nodes      int
}

// Since refuses a cluster older than release v, the first with feature,
// which the workload needs: a cluster of a kind whose releases are
// ordered (targets.Released) and that runs an older one.
func (s Setting) Since(v, feature string) error {
	r, ok := s.Target.(targets.Released)
	if !ok || r.Since(v) {
		return nil
	}
	return plans.PlanFieldf("target.version", "%s: %s needs %s, which %s has from %s on", r.Release(), s.Workload, feature, s.TargetKind, v)
}

// Needs is what a workload asks of a run beside its cluster and clients.
type Needs struct {
	// Resource is the mode of the protected resource the clients write
	// to, fenced or unfenced; "" for none.
	Resource string
	// Holders says that clients hold something by their own account (a
	// lock, the leadership), which the fault role "holder" picks among.
	Holders bool
	// Finish bounds how long a client takes, once told to stop, to end:
	// the operation in flight, and a final phase (final reads) if any.
	Finish time.Duration
}

// Backend is what a workload's backend names: the kind of cluster it
// runs against and the client libraries it drives it with. A workload
// with backends embeds it for its Target and Libraries.
type Backend struct {
	TargetKind string
	Modules    []string
	// CheckTarget, if set, refuses a cluster the backend cannot run the
	// workload on in readMode: a server version without a feature that
	// the mode needs (Setting.Since). The register and transaction
	// workloads apply it in their Check (through TargetFits); others do
	// not yet.
	CheckTarget func(s Setting, readMode string) error
}

// TargetFits runs CheckTarget, if the backend has one.
func (b Backend) TargetFits(s Setting, readMode string) error {
	if b.CheckTarget == nil {
		return nil
	}
	return b.CheckTarget(s, readMode)
}

// Target is the cluster kind the backend needs.
func (b Backend) Target() string { return b.TargetKind }

// Libraries are the backend's client libraries.
func (b Backend) Libraries() []string { return b.Modules }

// Changer is a workload kind that names the kinds of operation (f) by
// which it changes the system's state, so that a run that attempted none
// of them is not judged as if it tested something.
type Changer interface {
	Changes() []string
}
