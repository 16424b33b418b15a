package containers

import (
	"context"
	"errors"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"golang.org/x/sys/unix"
)

// track opens a pidfd on the container's main process as it starts, so
// that Signal can reach it from the host. Through the Engine a signal
// takes a round trip of milliseconds to tens of milliseconds on a busy
// machine, long enough for a lock holder to release before its pause; a
// pidfd (unlike a pid) can never reach another process that reused the
// number. Without one (an old kernel) Signal goes through the Engine.
func (r *Run) track(c Container, info container.InspectResponse) {
	if info.State == nil || info.State.Pid == 0 {
		return
	}
	fd, err := unix.PidfdOpen(info.State.Pid, 0)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.pidfds[c.ID]; ok {
		unix.Close(old) // the process before a restart
		delete(r.pidfds, c.ID)
	}
	if err == nil {
		r.pidfds[c.ID] = fd
	}
}

// Signal sends sig (e.g. "STOP", "CONT", "TERM", "KILL") to the
// container's PID 1. A process that has exited gives ErrNotRunning.
func (r *Run) Signal(ctx context.Context, c Container, sig string) error {
	num := unix.SignalNum("SIG" + sig)
	r.mu.Lock()
	if fd, ok := r.pidfds[c.ID]; ok && num != 0 {
		// Under the lock, so that Close or a restart cannot close the
		// descriptor (and its number be reused) in between.
		err := unix.PidfdSendSignal(fd, num, nil, 0)
		r.mu.Unlock()
		if errors.Is(err, unix.ESRCH) {
			err = ErrNotRunning
		}
		if err != nil {
			return fmt.Errorf("SIG%s to %s: %w", sig, c.Name, err)
		}
		return nil
	}
	r.mu.Unlock()
	if err := r.cli.ContainerKill(ctx, c.ID, sig); err != nil {
		return fmt.Errorf("SIG%s to %s: %w", sig, c.Name, err)
	}
	return nil
}
