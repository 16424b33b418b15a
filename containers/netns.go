package containers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
)

// ErrNotRunning is returned for a container whose main process is dead
// (a kill fault): it has no network namespace to act on.
var ErrNotRunning = errors.New("container is not running")

// NetnsExec runs argv, a program of the host, inside the container's
// network namespace (nsenter -t PID -n). The container needs no capability
// for this: the harness, root on the host, brings its own. It is how
// partitions are made: iptables rules in each node's own namespace.
func (r *Run) NetnsExec(ctx context.Context, c Container, argv ...string) error {
	pid, err := r.HostPID(ctx, c)
	if err != nil {
		return err
	}
	args := append([]string{"-t", strconv.Itoa(pid), "-n", "--"}, argv...)
	out, err := exec.CommandContext(ctx, "nsenter", args...).CombinedOutput()
	if err != nil {
		if r.Exited(ctx, c, pid) {
			// A kill took the node meanwhile, and its namespace with it.
			err = ErrNotRunning
		}
		return fmt.Errorf("%v in the network namespace of %s: %w: %s", argv, c.Name, err, bytes.TrimSpace(out))
	}
	return nil
}

// Netns is the path of the container's network namespace, as it is now:
// a restart gives the container a new one.
func (r *Run) Netns(ctx context.Context, c Container) (string, error) {
	pid, err := r.HostPID(ctx, c)
	if err != nil {
		return "", err
	}
	return "/proc/" + strconv.Itoa(pid) + "/ns/net", nil
}

// Exited reports whether the process pid, which was the container's main
// process, is gone: the container is down or runs another process now.
func (r *Run) Exited(ctx context.Context, c Container, pid int) bool {
	now, err := r.HostPID(ctx, c)
	return errors.Is(err, ErrNotRunning) || (err == nil && now != pid)
}

// HostPID is the host's process id of the container's main process, which
// a fault on the process itself (its clock) acts on from the host.
func (r *Run) HostPID(ctx context.Context, c Container) (int, error) {
	info, err := r.cli.ContainerInspect(ctx, c.ID)
	if err != nil {
		return 0, fmt.Errorf("inspect %s: %w", c.Name, err)
	}
	// The Engine learns of a death a moment late: a process that is
	// dying, a zombie or no longer there is gone (a dying one has no
	// namespaces left to enter).
	if info.State == nil || !info.State.Running || info.State.Pid == 0 {
		return 0, fmt.Errorf("%s: %w", c.Name, ErrNotRunning)
	}
	if _, ok := alive(info.State.Pid); !ok {
		return 0, fmt.Errorf("%s: %w", c.Name, ErrNotRunning)
	}
	return info.State.Pid, nil
}
