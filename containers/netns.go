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
	info, err := r.cli.ContainerInspect(ctx, c.ID)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", c.Name, err)
	}
	if info.State == nil || !info.State.Running || info.State.Pid == 0 {
		return fmt.Errorf("%s: %w", c.Name, ErrNotRunning)
	}
	args := append([]string{"-t", strconv.Itoa(info.State.Pid), "-n", "--"}, argv...)
	out, err := exec.CommandContext(ctx, "nsenter", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v in the network namespace of %s: %w: %s", argv, c.Name, err, bytes.TrimSpace(out))
	}
	return nil
}
