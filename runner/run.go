// Package runner carries out one plan: it starts the cluster, the protected
// resource and the client processes in a run's containers, drives the
// nemesis for the time limit, tears everything down (on success, error or
// interrupt alike), and analyzes the history.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/resource"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
)

// Options of one run.
type Options struct {
	Plan *plans.Plan
	// Results is the folder that holds all runs (results/).
	Results string
	// Binary is the chaos executable that client and resource containers
	// run; it must be built for Linux without cgo.
	Binary string
	// Out receives progress and the status line.
	Out      io.Writer
	Terminal bool
}

// Paths inside client and resource containers.
const (
	mountDir   = "/chaos"
	mountChaos = "/usr/local/bin/chaos"
)

// errInterrupted marks a run stopped by Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")

// Run carries out the plan and returns the analysis and the run's folder.
// The folder exists (with whatever history was written) even on error.
func Run(ctx context.Context, o Options) (analysis.Report, string, error) {
	p := o.Plan
	if err := Validate(p); err != nil {
		return analysis.Report{}, "", err
	}
	dir, runID, err := newRunDir(o.Results, p)
	if err != nil {
		return analysis.Report{}, "", err
	}
	fmt.Fprintf(o.Out, "run %s: plan %s, seed %d, results in %s\n", runID, p.Name, p.Seed, dir)
	err = execute(ctx, o, dir, runID)
	if err != nil && ctx.Err() != nil && !errors.Is(err, errInterrupted) {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	rep, aerr := Analyze(context.Background(), dir, o.Out)
	ierr := WriteIndex(filepath.Dir(filepath.Dir(dir)))
	if err == nil {
		err = errors.Join(aerr, ierr)
	}
	return rep, dir, err
}

func execute(ctx context.Context, o Options, dir, runID string) (err error) {
	p := o.Plan
	cli, err := containers.NewClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	target, _ := targets.Targets.Lookup(p.Target.Kind)
	image := p.Target.Image
	if image != "" {
		err = images.Pull(ctx, cli, image, o.Out)
	} else {
		image, err = target.Image(ctx, cli, p.Target.Version, o.Out)
	}
	if err != nil {
		return err
	}
	binary, err := filepath.Abs(o.Binary)
	if err != nil {
		return err
	}

	if n, err := containers.Leftovers(ctx, cli); err == nil && n > 0 {
		fmt.Fprintf(o.Out, "warning: %d containers of runs whose harness is gone (killed?) still exist; `chaos clean` removes them\n", n)
	}
	run, err := containers.NewRun(ctx, cli, runID)
	if err != nil {
		// The engine may have made the network before the call failed.
		_, cerr := containers.Clean(context.Background(), cli, runID)
		return errors.Join(err, cerr)
	}
	var sched *nemesis.Schedule
	defer func() {
		// Each step of the teardown gets a context of its own: ctx may be
		// what was cancelled, and a slow step must not starve the removal.
		step := func(f func(context.Context) error) error {
			tctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			return f(tctx)
		}
		if sched != nil {
			err = errors.Join(err, step(sched.Heal))
		}
		err = errors.Join(err, step(func(ctx context.Context) error { return run.SaveLogs(ctx, filepath.Join(dir, "logs")) }))
		if cerr := step(run.Close); cerr != nil {
			err = errors.Join(err, fmt.Errorf("removing the run's containers (chaos clean removes what is left): %w", cerr))
		} else {
			fmt.Fprintln(o.Out, "containers and network removed")
		}
	}()

	start := time.Now()
	nodes, err := target.Start(ctx, run, targets.Spec{Nodes: p.Target.Nodes, Version: p.Target.Version, Image: image})
	if err != nil {
		return err
	}
	ready := time.Since(start)
	fmt.Fprintf(o.Out, "%d %s nodes ready in %.1fs\n", len(nodes), p.Target.Kind, ready.Seconds())
	if err := updateRunInfo(dir, func(i *RunInfo) { i.Ready = ready }); err != nil {
		return err
	}

	clock := history.NewClock()
	histPath := filepath.Join(dir, "history.jsonl")
	h, err := history.OpenAppender(histPath, clock, history.Nemesis)
	if err != nil {
		return err
	}
	defer h.Close()

	binds := []string{dir + ":" + mountDir, binary + ":" + mountChaos + ":ro"}
	res, err := startResource(ctx, run, image, binds, p.Workload.Resource == "fenced", clock)
	if err != nil {
		return err
	}
	env := &faultEnv{run: run, target: target, live: newLive(), nodes: nodes}
	if env.clients, err = startClients(ctx, run, image, binds, p, nodes, res, clock); err != nil {
		return err
	}

	followCtx, stopFollow := context.WithCancel(context.Background())
	defer stopFollow()
	go history.Follow(followCtx, histPath, env.live.observe)
	stopObserver, err := observe(env, histPath, clock)
	if err != nil {
		return err
	}
	// The observer sees the clients' last operations, final reads included.
	defer stopObserver()

	sched, err = nemesis.NewSchedule(env, h, p.Nemesis, p.Seed)
	if err != nil {
		return err
	}
	// The time limit counts from here, when every client runs.
	started := time.Now()
	limitCtx, cancel := context.WithTimeout(ctx, p.TimeLimit.Duration)
	defer cancel()
	stopStatus := showStatus(o, env, sched, started)
	err = sched.Run(limitCtx)
	stopStatus()
	if ctx.Err() != nil {
		return errors.Join(err, fmt.Errorf("%w: %w", errInterrupted, ctx.Err()))
	}
	// Even after a fault failed, the clients finish their operations: an
	// operation cut short would be one more of unknown outcome.
	return errors.Join(err, stopClients(ctx, run, env.clients, p.Workload))
}

// startClients starts one client process per client of the plan, each in
// its own container running this same binary, bound to the run's history.
func startClients(ctx context.Context, run *containers.Run, image string, binds []string, p *plans.Plan,
	nodes []targets.Node, resourceAddr string, clock history.Clock) ([]nemesis.Process, error) {
	var addrs []string
	for _, n := range nodes {
		if n.Addr != "" {
			addrs = append(addrs, n.Addr)
		}
	}
	var clients []nemesis.Process
	for i := 0; i < p.Workload.Clients; i++ {
		cfg := workloads.Config{Process: i, Seed: p.Seed, Nodes: addrs, Resource: resourceAddr, Workload: p.Workload,
			History: mountDir + "/history.jsonl", ClockStart: clock.Start}
		c, err := run.Start(ctx, containers.Spec{Name: "c" + strconv.Itoa(i), Role: "client", Image: image,
			Cmd: []string{mountChaos, "client"}, Env: []string{workloads.ConfigEnv + "=" + encode(cfg)}, Binds: binds})
		if err != nil {
			return clients, err
		}
		clients = append(clients, process(c))
	}
	return clients, nil
}

// showStatus refreshes the status line every second until the returned
// function is called, which ends the line.
func showStatus(o Options, env *faultEnv, sched *nemesis.Schedule, started time.Time) (stop func()) {
	status := progress.NewLine(o.Out, o.Terminal, 10*time.Second)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				status.Show(env.live.status(time.Since(started), o.Plan.TimeLimit.Duration, sched.Active()))
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		status.Done()
	}
}

// stopClients asks each client to finish its current operation and exit,
// then waits for them: an operation cut short would end the history with
// an unknown outcome for no reason.
func stopClients(ctx context.Context, run *containers.Run, clients []nemesis.Process, w plans.Workload) error {
	var errs []error
	for _, c := range clients {
		errs = append(errs, run.Signal(ctx, c.Container, "TERM"))
	}
	wctx, cancel := context.WithTimeout(ctx, w.HoldMax.Duration+30*time.Second)
	defer cancel()
	for _, c := range clients {
		errs = append(errs, run.Wait(wctx, c.Container))
	}
	return errors.Join(errs...)
}

func startResource(ctx context.Context, run *containers.Run, image string, binds []string, fenced bool, clock history.Clock) (string, error) {
	cfg := resource.Config{Fenced: fenced, Log: mountDir + "/resource.jsonl", ClockStart: clock.Start}
	c, err := run.Start(ctx, containers.Spec{Name: "resource", Role: "resource", Image: image,
		Cmd: []string{mountChaos, "resource"}, Env: []string{resource.ConfigEnv + "=" + encode(cfg)}, Binds: binds})
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort(c.IP, strconv.Itoa(resource.Port))
	return addr, targets.WaitReady(ctx, "resource", 10*time.Second, func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err
	})
}

func encode(v any) string { return string(history.MustValue(v)) }

// newRunDir makes results/<plan>/<time>/, copies the plan there and points
// results/latest at it.
func newRunDir(results string, p *plans.Plan) (dir, runID string, err error) {
	now := time.Now()
	results, err = filepath.Abs(results)
	if err != nil {
		return "", "", err
	}
	dir = filepath.Join(results, p.Name, now.Format("20060102T150405.000"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("results folder: %w", err)
	}
	runID = fmt.Sprintf("%s-%04x", now.Format("150405"), now.Nanosecond()&0xffff)
	if err := writeRunInfo(dir, runID, p, now); err != nil {
		return "", "", err
	}
	latest := filepath.Join(results, "latest")
	os.Remove(latest)
	rel, _ := filepath.Rel(results, dir)
	if err := os.Symlink(rel, latest); err != nil {
		return "", "", fmt.Errorf("results/latest: %w", err)
	}
	return dir, runID, nil
}
