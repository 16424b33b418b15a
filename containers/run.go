// Package containers owns a run's Docker resources: one network and the
// containers on it, all labelled with the run's id so that they can be found
// and removed even after the harness itself was killed.
package containers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/sys/unix"
)

// Labels on everything a run creates.
const (
	LabelRun  = "chaos.run"  // the run id
	LabelRole = "chaos.role" // node, client or resource
)

// NewClient connects to the Docker Engine named by the environment
// (DOCKER_HOST, or the local socket), agreeing on an API version with it.
func NewClient() (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return cli, nil
}

// Container is one started container.
type Container struct {
	Name string // short name inside the run, also its host name: n1, c0, resource
	ID   string
	IP   string // address on the run's network
	Role string
}

// Spec says what to start.
type Spec struct {
	Name  string
	Role  string
	Image string
	Cmd   []string
	Env   []string
	// Binds are host:container[:ro] bind mounts.
	Binds []string
	// DataDir is the directory where the server keeps what it must not
	// lose. In a run with disks (SetDisks) the node's disk is mounted
	// there; otherwise it is in the container's own file system, which
	// survives a restart after a kill as a disk survives a crash.
	DataDir string
}

// Disks gives nodes their data directories on the host (package disks).
type Disks interface {
	// Attach returns the host directory to mount at node name's data
	// directory.
	Attach(name string) (string, error)
}

// createTimeout bounds a container create that ignores cancellation.
const createTimeout = 60 * time.Second

// Run is one run's network and containers.
type Run struct {
	cli     *client.Client
	id      string
	network string

	// starting counts the Start calls under way: Close waits for them, so
	// that a container the engine creates as the run is interrupted is
	// known, and removed, before Close lists what to remove. Added to
	// under mu, and never once closed.
	starting sync.WaitGroup

	mu         sync.Mutex
	closed     bool
	containers []Container
	disks      Disks
	// pidfds holds a handle on each running container's main process, by
	// container ID, for signals from the host.
	pidfds map[string]pidfd
}

// NewRun creates the run's network. The network is internal: containers
// reach each other and the host, never the outside world.
func NewRun(ctx context.Context, cli *client.Client, runID string) (*Run, error) {
	name := "chaos-" + runID
	_, err := cli.NetworkCreate(ctx, name, network.CreateOptions{
		Driver:   "bridge",
		Internal: true,
		Labels:   map[string]string{LabelRun: runID, LabelHarness: harness},
	})
	if err != nil {
		return nil, fmt.Errorf("create network %s: %w", name, err)
	}
	return &Run{cli: cli, id: runID, network: name, pidfds: map[string]pidfd{}}, nil
}

// SetDisks has the containers started from now on mount their data
// directories from disks.
func (r *Run) SetDisks(d Disks) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disks = d
}

// ID is the run's id.
func (r *Run) ID() string { return r.id }

// Start creates and starts a container on the run's network. Its main
// command is PID 1, so a signal sent to the container reaches it directly.
func (r *Run) Start(ctx context.Context, s Spec) (Container, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return Container{}, fmt.Errorf("start container %s: the run is closed", s.Name)
	}
	r.starting.Add(1)
	disks := r.disks
	r.mu.Unlock()
	defer r.starting.Done()
	binds := s.Binds
	if s.DataDir != "" && disks != nil {
		dir, err := disks.Attach(s.Name)
		if err != nil {
			return Container{}, fmt.Errorf("start container %s: %w", s.Name, err)
		}
		binds = append(slices.Clip(binds), dir+":"+s.DataDir)
	}
	full := fmt.Sprintf("chaos-%s-%s", r.id, s.Name)
	cfg := &container.Config{
		Image:    s.Image,
		Cmd:      s.Cmd,
		Env:      s.Env,
		Hostname: s.Name,
		Labels:   map[string]string{LabelRun: r.id, LabelRole: s.Role, LabelHarness: harness},
	}
	host := &container.HostConfig{Binds: binds, Init: new(bool)}
	net := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		r.network: {Aliases: []string{s.Name}},
	}}
	// The create is not cancelled with ctx: a request the engine has
	// received may create the container after the call gave up, too late
	// for Close to see it. Waiting for the answer keeps every container
	// the engine made in the run's list.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	created, err := r.cli.ContainerCreate(cctx, cfg, host, net, nil, full)
	cancel()
	if err != nil {
		return Container{}, fmt.Errorf("create container %s: %w", s.Name, err)
	}
	c := Container{Name: s.Name, ID: created.ID, Role: s.Role}
	// Remember it before starting, so that cleanup removes it whatever happens next.
	r.mu.Lock()
	r.containers = append(r.containers, c)
	r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return c, fmt.Errorf("start container %s: %w", s.Name, err)
	}
	if err := r.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return c, fmt.Errorf("start container %s: %w", s.Name, err)
	}
	info, err := r.cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		return c, fmt.Errorf("inspect container %s: %w", s.Name, err)
	}
	if ep := info.NetworkSettings.Networks[r.network]; ep != nil {
		c.IP = ep.IPAddress
	}
	if c.IP == "" {
		// A process that died at once leaves its container no address;
		// its last lines say why.
		if died := r.DiedWith(ctx, c); died != nil {
			return c, fmt.Errorf("start container %s: %w", s.Name, died)
		}
		return c, fmt.Errorf("container %s has no address on %s", s.Name, r.network)
	}
	r.track(c, info)
	return c, nil
}

// Running says whether the container's main process runs (stopped by
// SIGSTOP counts as running). An error counts as running: unknown.
func (r *Run) Running(ctx context.Context, c Container) bool {
	info, err := r.cli.ContainerInspect(ctx, c.ID)
	return err != nil || (info.State != nil && info.State.Running)
}

// DiedWith says, once the container's main process has exited, how: its
// exit status and the last lines of its output (why a process that died
// at start died). Nil while it runs, or when the engine cannot say.
func (r *Run) DiedWith(ctx context.Context, c Container) error {
	info, err := r.cli.ContainerInspect(ctx, c.ID)
	if err != nil || info.State == nil || info.State.Running || info.State.Status != "exited" {
		return nil
	}
	return fmt.Errorf("%s exited with status %d; its last lines:\n  %s", c.Name, info.State.ExitCode, r.lastLines(ctx, c))
}

// lastLines are the last lines the container wrote, indented.
func (r *Run) lastLines(ctx context.Context, c Container) string {
	var out bytes.Buffer
	if rc, err := r.cli.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "10"}); err == nil {
		stdcopy.StdCopy(&out, &out, rc)
		rc.Close()
	}
	last := strings.TrimSpace(out.String())
	if last == "" {
		return "(no output)"
	}
	return strings.ReplaceAll(last, "\n", "\n  ")
}

// Wait waits until the container has exited, or ctx ends. A non-zero exit
// status is an error that points at the container's log.
func (r *Run) Wait(ctx context.Context, c Container) error {
	done, errs := r.cli.ContainerWait(ctx, c.ID, container.WaitConditionNotRunning)
	select {
	case res := <-done:
		if res.StatusCode != 0 {
			return fmt.Errorf("%s exited with status %d (logs/%s.log); its last lines:\n  %s", c.Name, res.StatusCode, c.Name, r.lastLines(context.WithoutCancel(ctx), c))
		}
		return nil
	case err := <-errs:
		return fmt.Errorf("wait for %s: %w", c.Name, err)
	}
}

// Containers lists the run's containers in the order they were started.
func (r *Run) Containers() []Container {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Container(nil), r.containers...)
}

// SaveLogs writes each container's output to dir/<name>.log.
func (r *Run) SaveLogs(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, c := range r.Containers() {
		errs = append(errs, r.saveLog(ctx, c, filepath.Join(dir, c.Name+".log")))
	}
	return errors.Join(errs...)
}

func (r *Run) saveLog(ctx context.Context, c Container, path string) error {
	rc, err := r.cli.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return fmt.Errorf("logs of %s: %w", c.Name, err)
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := stdcopy.StdCopy(f, f, rc); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("logs of %s: %w", c.Name, err)
	}
	return nil
}

// Close removes the run's containers and network. Removal kills the
// processes, including any a pause left stopped.
func (r *Run) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	started := make(chan struct{})
	go func() {
		r.starting.Wait()
		close(started)
	}()
	select {
	case <-started:
	case <-ctx.Done(): // remove what is known; chaos clean removes the rest
	}
	_, err := Clean(ctx, r.cli, r.id)
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, p := range r.pidfds {
		unix.Close(p.fd)
		delete(r.pidfds, id)
	}
	return err
}

// Leftovers counts the containers of runs whose harness is gone: a harness
// killed with SIGKILL cannot remove its own. Runs of a harness still
// running (in another shell) are not leftovers.
func Leftovers(ctx context.Context, cli *client.Client) (int, error) {
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelRun))})
	n := 0
	for _, c := range cs {
		if HarnessGone(c.Labels[LabelHarness]) {
			n++
		}
	}
	return n, err
}

// Clean removes every container and network labelled with runID, or, when
// runID is empty, those of every run whose harness is gone. It returns how
// many it removed.
func Clean(ctx context.Context, cli *client.Client, runID string) (int, error) {
	label := LabelRun
	if runID != "" {
		label += "=" + runID
	}
	left := func(labels map[string]string) bool { return runID != "" || HarnessGone(labels[LabelHarness]) }
	f := filters.NewArgs(filters.Arg("label", label))
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("list containers: %w", err)
	}
	var errs []error
	n := 0
	for _, c := range cs {
		if !left(c.Labels) {
			continue
		}
		err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID[:12], err))
			continue
		}
		n++
	}
	nets, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return n, errors.Join(append(errs, fmt.Errorf("list networks: %w", err))...)
	}
	for _, nw := range nets {
		if !left(nw.Labels) {
			continue
		}
		if err := removeNetwork(ctx, cli, nw.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// removeNetwork retries for up to 10 s: the engine may still be detaching
// the endpoints of containers it has just removed, which takes seconds on
// a loaded machine (a NATS run beside three others once outlasted 2 s).
// Every few tries it disconnects, by force, the endpoints the network
// still lists: a run killed while the engine was starting a container can
// leave an endpoint whose container is gone, and the engine refuses to
// remove a network with endpoints.
func removeNetwork(ctx context.Context, cli *client.Client, id string) error {
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for try := 0; ; try++ {
		err = cli.NetworkRemove(ctx, id)
		if err == nil || client.IsErrNotFound(err) {
			return nil
		}
		if !time.Now().Before(deadline) {
			break
		}
		if try%5 == 4 {
			if nw, ierr := cli.NetworkInspect(ctx, id, network.InspectOptions{}); ierr == nil {
				for endpoint := range nw.Containers {
					cli.NetworkDisconnect(ctx, id, endpoint, true)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(min(200*(try+1), 1000)) * time.Millisecond):
		}
	}
	if nw, ierr := cli.NetworkInspect(ctx, id, network.InspectOptions{}); ierr == nil && len(nw.Containers) == 0 {
		return StaleNetworkError{Name: nw.Name, Err: err}
	}
	return fmt.Errorf("remove network %s: %w", id, err)
}

// StaleNetworkError is a network the engine will not remove although no
// container is attached to it: an endpoint left behind in the engine's
// own store (a Docker bug, seen under heavy load), which only a restart
// of the daemon clears. Nothing of chaos runs on it any more.
type StaleNetworkError struct {
	Name string
	Err  error
}

func (e StaleNetworkError) Error() string {
	return fmt.Sprintf("network %s: the engine keeps it though no container is attached (%v); restarting the Docker daemon clears it", e.Name, e.Err)
}
