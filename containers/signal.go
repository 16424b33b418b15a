package containers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"golang.org/x/sys/unix"
)

// pidfd is a handle on a container's main process.
type pidfd struct{ fd, pid int }

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
		unix.Close(old.fd) // the process before a restart
		delete(r.pidfds, c.ID)
	}
	if err == nil {
		r.pidfds[c.ID] = pidfd{fd: fd, pid: info.State.Pid}
	}
}

// Signal sends sig (e.g. "STOP", "CONT", "TERM", "KILL") to the
// container's PID 1. A process that has exited gives ErrNotRunning. A
// STOP returns once the process is stopped.
func (r *Run) Signal(ctx context.Context, c Container, sig string) error {
	num := unix.SignalNum("SIG" + sig)
	p, sent, err := r.send(c, num)
	if !sent {
		if err := r.cli.ContainerKill(ctx, c.ID, sig); err != nil {
			return fmt.Errorf("SIG%s to %s: %w", sig, c.Name, err)
		}
		return nil
	}
	if err == nil && num == unix.SIGSTOP {
		err = r.awaitStop(c, p)
	}
	if err != nil {
		return fmt.Errorf("SIG%s to %s: %w", sig, c.Name, err)
	}
	return nil
}

// send signals the container's process through its pidfd; sent is false
// when it has none (or the signal has no number here).
func (r *Run) send(c Container, num unix.Signal) (p pidfd, sent bool, err error) {
	// Under the lock, so that Close or a restart cannot close the
	// descriptor (and its number be reused) in between.
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pidfds[c.ID]
	if !ok || num == 0 {
		return p, false, nil
	}
	err = unix.PidfdSendSignal(p.fd, num, nil, 0)
	if errors.Is(err, unix.ESRCH) {
		err = ErrNotRunning
	}
	return p, true, err
}

// awaitStop waits until the process is stopped, sending SIGSTOP again
// every 10 ms: a stop sent in the first milliseconds of a container's life
// can vanish (about 1 in 10 in TestSignalReachesTheProcess: the process
// ran on with no signal pending), and a pause that did not happen must
// not be recorded as one. A process in uninterruptible sleep stops when it
// wakes: after a second, a stop still pending is taken as landed.
func (r *Run) awaitStop(c Container, p pidfd) error {
	for i := 1; ; i++ {
		state, pending, err := procState(p.pid)
		switch {
		case err != nil:
			return ErrNotRunning
		case state == 'T' || state == 't':
			return nil
		case i == 1000:
			if pending&sigBit(unix.SIGSTOP) != 0 {
				return nil
			}
			return fmt.Errorf("process %d still runs (state %c) 1 s after SIGSTOP", p.pid, state)
		case i%10 == 0:
			if now, _, err := r.send(c, unix.SIGSTOP); err != nil || now != p {
				return ErrNotRunning
			}
		}
		time.Sleep(time.Millisecond)
	}
}
