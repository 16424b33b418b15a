// Package runner carries out one plan: it starts the cluster, the protected
// resource and the client processes in a run's containers, drives the
// nemesis for the time limit, tears everything down (on success, error or
// interrupt alike), and analyzes the history.
package runner

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/internal/clock"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/resource"
	"github.com/chaos-testing/chaos/runfolder"
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
	// Analysis is the context of the analysis, which outlives the run's
	// own (a first Ctrl-C cancels that) so that what was written is still
	// judged; nil: it ends only with the analysis.
	Analysis context.Context
}

// Paths inside client and resource containers.
const (
	mountDir   = "/chaos"
	mountChaos = "/usr/local/bin/chaos"
)

// errInterrupted marks a run stopped by Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")

// Run binds the plan, carries it out, and returns the analysis and the
// run's folder. The folder exists (with whatever history was written)
// even on error; a plan that does not bind has none.
func Run(ctx context.Context, o Options) (analysis.Report, string, error) {
	p, err := bind.Bind(o.Plan)
	if err != nil {
		return analysis.Report{}, "", err
	}
	if err := checkStatic(o.Binary); err != nil {
		return analysis.Report{}, "", err
	}
	dir, runID, err := newRunDir(o.Results, p)
	if err != nil {
		return analysis.Report{}, "", err
	}
	fmt.Fprintf(o.Out, "run %s: plan %s, seed %d, results in %s\n", runID, p.Name, p.Seed, dir)
	err = execute(ctx, o, p, dir, runID)
	if err != nil && ctx.Err() != nil && !errors.Is(err, errInterrupted) {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	// Before the analysis, which reads it: every artifact of a run that
	// did not finish cleanly says so.
	if rerr := recordEnd(dir, err); rerr != nil {
		err = errors.Join(err, rerr)
	}
	actx := o.Analysis
	if actx == nil {
		actx = context.WithoutCancel(ctx)
	}
	rep, aerr := Analyze(actx, dir, o.Out)
	ierr := WriteIndex(filepath.Dir(filepath.Dir(dir)))
	if err == nil {
		err = errors.Join(aerr, ierr)
	}
	return rep, dir, err
}

func execute(ctx context.Context, o Options, p *bind.Plan, dir, runID string) (err error) {
	cli, err := containers.NewClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	target := p.Target.Target
	image := p.Target.Pull
	if image != "" {
		err = images.Pull(ctx, cli, image, o.Out)
	} else {
		image, err = target.Image(ctx, cli, o.Out)
	}
	if err != nil {
		return err
	}
	binary, err := filepath.Abs(o.Binary)
	if err != nil {
		return err
	}
	w, folder := p.Workload, runfolder.Folder(dir)
	vs, err := Versions(binary, w.Libraries())
	if err != nil {
		return err
	}
	if err := folder.UpdateInfo(func(i *runfolder.Info) { i.Versions, i.Image = vs, image }); err != nil {
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
	var disk *disks.Set
	if p.Disks() {
		if disk, err = disks.New(folder.Path(runfolder.DisksDir), runID); err != nil {
			return errors.Join(err, run.Close(context.WithoutCancel(ctx)))
		}
		run.SetDisks(disk)
	}
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
		err = errors.Join(err, step(func(ctx context.Context) error {
			return run.SaveLogs(ctx, folder.Path(runfolder.LogsDir))
		}))
		if cerr := step(run.Close); cerr != nil {
			err = errors.Join(err, fmt.Errorf("removing the run's containers (chaos clean removes what is left): %w", cerr))
		} else {
			fmt.Fprintln(o.Out, "containers and network removed")
		}
		// After the containers, which used them.
		if disk != nil {
			if derr := disk.Close(); derr != nil {
				err = errors.Join(err, fmt.Errorf("unmounting the nodes' disks (chaos clean unmounts what is left): %w", derr))
			} else {
				fmt.Fprintf(o.Out, "disks unmounted; what the nodes wrote is in %s\n", folder.Path(runfolder.DisksDir))
			}
		}
	}()

	start := time.Now()
	nodes, err := target.Start(ctx, run, image)
	if err != nil {
		return err
	}
	ready := time.Since(start)
	fmt.Fprintf(o.Out, "%d %s nodes ready in %.1fs\n", len(nodes), p.Target.Kind, ready.Seconds())
	servers := serverVersions(ctx, target, nodes)
	if err := folder.UpdateInfo(func(i *runfolder.Info) { i.Ready, i.Servers = ready, servers }); err != nil {
		return err
	}

	clock := history.NewClock()
	histPath := folder.Path(runfolder.HistoryFile)
	h, err := history.OpenAppender(histPath, clock, history.Nemesis)
	if err != nil {
		return err
	}
	defer h.Close()

	binds := []string{dir + ":" + mountDir, binary + ":" + mountChaos + ":ro"}
	needs := w.Needs
	var res string
	if needs.Resource != "" {
		if res, err = startResource(ctx, run, image, binds, needs.Resource == "fenced", clock); err != nil {
			return err
		}
	}
	env := &faultEnv{run: run, live: newLive(), nodes: nodes, disks: disk}
	if env.clients, err = startClients(ctx, run, image, binds, p, nodes, res, clock); err != nil {
		return err
	}

	followCtx, stopFollow := context.WithCancel(context.Background())
	defer stopFollow()
	go history.Follow(followCtx, histPath, env.live.observe)
	stopObserver, err := observe(env, target, histPath, clock)
	if err != nil {
		return err
	}
	// The observer sees the clients' last operations, final reads included.
	defer stopObserver()

	// As in Jepsen, the clients set up (connect, make or find what they
	// work on) before the test proper: the faults start once each has
	// invoked its first operation, or after setupLimit, when the status
	// says which had not.
	if left := waitForClients(ctx, env.live, p.Workload.Clients, setupLimit); len(left) > 0 {
		fmt.Fprintf(o.Out, "note: clients %v had not begun %s after they started; the faults start anyway\n", left, setupLimit)
	}
	sched = nemesis.NewSchedule(env, target, h, p.Faults, p.Seed)
	// The time limit counts from here, when every client runs.
	started := time.Now()
	limitCtx, cancel := context.WithTimeout(ctx, p.TimeLimit)
	defer cancel()
	stopStatus := showStatus(o, env, sched, started, p.TimeLimit)
	err = sched.Run(limitCtx)
	if ctx.Err() == nil {
		err = errors.Join(err, sched.Finish(ctx))
	}
	if p.Recovery > 0 && ctx.Err() == nil {
		// Every fault is healed; the clients go on, so that the history
		// shows whether the system came back.
		select {
		case <-ctx.Done():
		case <-time.After(p.Recovery):
		}
	}
	stopStatus()
	if ctx.Err() != nil {
		return errors.Join(err, fmt.Errorf("%w: %w", errInterrupted, ctx.Err()))
	}
	// Even after a fault failed, the clients finish their operations: an
	// operation cut short would be one more of unknown outcome.
	return errors.Join(err, stopClients(ctx, run, env.clients, needs.Finish+30*time.Second+nemesis.LateTimers(p.Faults)))
}

// setupLimit is how long the faults wait for the clients' first
// operations.
const setupLimit = 30 * time.Second

// waitForClients waits until each of n clients has invoked an operation,
// ctx ends, or limit passes, and returns the clients that had not, as
// names (c0, c1, ...).
func waitForClients(ctx context.Context, l *live, n int, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		left := l.waiting(n)
		if len(left) == 0 || ctx.Err() != nil || time.Now().After(deadline) {
			names := make([]string, len(left))
			for i, c := range left {
				names[i] = "c" + strconv.Itoa(c)
			}
			return names
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startClients starts one client process per client of the plan, each in
// its own container running this same binary, bound to the run's history.
func startClients(ctx context.Context, run *containers.Run, image string, binds []string, p *bind.Plan,
	nodes []cluster.Node, resourceAddr string, clock history.Clock) ([]nemesis.Process, error) {
	var addrs []string
	for _, n := range nodes {
		if n.Addr != "" {
			addrs = append(addrs, n.Addr)
		}
	}
	fields, err := p.Workload.Fields()
	if err != nil {
		return nil, err
	}
	service := ""
	if d, ok := p.Target.Target.(targets.Discovered); ok {
		service = d.Service()
	}
	// All at once: one after the other, the last of ten clients began
	// 18 s after the first (40 s on a busy machine), and the history's
	// first seconds held a fraction of the clients.
	clients := make([]nemesis.Process, p.Workload.Clients)
	err = targets.Each(len(clients), func(i int) error {
		cfg := workloads.Config{Process: i, Seed: p.Seed, Nodes: addrs, Service: service, Resource: resourceAddr,
			Workload: p.Workload.Kind, Clients: p.Workload.Clients, Fields: fields,
			History: mountDir + "/" + runfolder.HistoryFile, ClockStart: clock.Start}
		c, err := run.Start(ctx, containers.Spec{Name: "c" + strconv.Itoa(i), Role: "client", Image: image,
			Cmd: []string{mountChaos, "client"}, Env: []string{workloads.ConfigEnv + "=" + encode(cfg)}, Binds: binds})
		clients[i] = process(c)
		return err
	})
	if err != nil {
		return nil, err // the run removes every container it started
	}
	return clients, nil
}

// showStatus refreshes the status line every second until the returned
// function is called, which ends the line.
func showStatus(o Options, env *faultEnv, sched *nemesis.Schedule, started time.Time, limit time.Duration) (stop func()) {
	status := progress.NewLine(o.Out, o.Terminal, 10*time.Second, clock.Real)
	shown := ""
	stopRefresh := progress.Refresh(clock.Real, time.Second, func() {
		faults := sched.Active()
		line := env.live.status(time.Since(started), limit, faults)
		// A log gets a line every 10 s, which a fault every 10 s would
		// meet at the same phase each time: a change of the faults in
		// force gets a line of its own.
		if now := strings.Join(faults, ", "); !o.Terminal && now != shown {
			shown = now
			status.Print(line)
			return
		}
		status.Show(line)
	})
	return func() {
		stopRefresh()
		status.Done()
	}
}

// stopClients asks each client to finish its current operation and exit,
// then waits for them, up to limit: an operation cut short would end the
// history with an unknown outcome for no reason. The limit is what the
// workload needs to finish, a margin, and how late a clock fault may have
// made a client's timers (nemesis.LateTimers).
func stopClients(ctx context.Context, run *containers.Run, clients []nemesis.Process, limit time.Duration) error {
	var errs []error
	for _, c := range clients {
		errs = append(errs, run.Signal(ctx, c.Container, "TERM"))
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for _, c := range clients {
		errs = append(errs, run.Wait(wctx, c.Container))
	}
	return errors.Join(errs...)
}

func startResource(ctx context.Context, run *containers.Run, image string, binds []string, fenced bool, clock history.Clock) (string, error) {
	cfg := resource.Config{Fenced: fenced, Log: mountDir + "/" + runfolder.ResourceFile, ClockStart: clock.Start}
	c, err := run.Start(ctx, containers.Spec{Name: "resource", Role: "resource", Image: image,
		Cmd: []string{mountChaos, "resource"}, Env: []string{resource.ConfigEnv + "=" + encode(cfg)}, Binds: binds})
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort(c.IP, strconv.Itoa(resource.Port))
	err = targets.WaitReady(ctx, "resource", 10*time.Second, func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err
	})
	if err != nil {
		// A process that died at start says why in its last lines.
		if exited := run.DiedWith(context.WithoutCancel(ctx), c); exited != nil {
			err = fmt.Errorf("%w: %w", err, exited)
		}
	}
	return addr, err
}

// checkStatic refuses a chaos executable that needs a dynamic loader:
// client and resource containers run it in node images of any Debian
// suite, whose C library may be older than the host's (a binary built
// with cgo dies there on "GLIBC_2.32 not found").
func checkStatic(binary string) error {
	f, err := elf.Open(binary)
	if err != nil {
		return fmt.Errorf("reading the chaos executable %s: %w", binary, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("the chaos executable %s is dynamically linked (built with cgo), and the containers of older Debian suites cannot run it: build it with CGO_ENABLED=0 go build ./cmd/chaos (./chaos and scripts/setup do)", binary)
		}
	}
	return nil
}

// serverVersions asks every node which version it runs, if the target
// can tell; a node that does not say is recorded with why.
func serverVersions(ctx context.Context, target targets.Target, nodes []cluster.Node) map[string]string {
	vr, ok := target.(targets.Versioner)
	if !ok {
		return nil
	}
	vs := make([]string, len(nodes))
	targets.Each(len(nodes), func(i int) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		v, err := vr.ServerVersion(ctx, nodes[i])
		if err != nil {
			v = "unknown: " + err.Error()
		}
		vs[i] = v
		return nil
	})
	out := map[string]string{}
	for i, n := range nodes {
		out[n.Container.Name] = vs[i]
	}
	return out
}

func encode(v any) string { return string(history.MustValue(v)) }

// newRunDir makes results/<plan>/<time>/, copies the plan there and points
// results/latest at it.
func newRunDir(results string, p *bind.Plan) (dir, runID string, err error) {
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
