//go:build linux && amd64

package vdsoclock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// ptrace requests the syscall package lacks.
const (
	ptraceSeize     = 0x4206
	ptraceInterrupt = 0x4207
	eventStop       = 128 // PTRACE_EVENT_STOP
)

// errGone is a thread that ended while the harness held it.
var errGone = errors.New("thread ended")

// stopTimeout bounds the wait for one thread to stop.
const stopTimeout = 5 * time.Second

// stopped is a process whose every thread the harness holds stopped under
// ptrace. Every call on it must come from the OS thread that stopped it:
// ptrace answers only the thread that attached.
type stopped struct {
	pid int
	// threads maps each thread to the signal to deliver when it is let go:
	// one that arrived as it was being stopped, which must not be lost.
	threads map[int]syscall.Signal
}

// withStopped stops every thread of pid (PTRACE_SEIZE and
// PTRACE_INTERRUPT, which send no SIGSTOP that could linger), runs f, and
// lets the threads go. Threads created meanwhile are caught too: Go and
// the JVM start threads at any time.
func withStopped(pid int, f func(*stopped) error) error {
	errc := make(chan error, 1)
	go func() {
		// A thread that attached must also detach. It is not unlocked: if
		// something fails half way, the thread ends with the goroutine, and
		// the kernel then detaches whatever it still traced.
		runtime.LockOSThread()
		s := &stopped{pid: pid, threads: map[int]syscall.Signal{}}
		err := s.stopAll()
		if err == nil {
			err = f(s)
		}
		errc <- errors.Join(err, s.release())
	}()
	return <-errc
}

func (s *stopped) stopAll() error {
	for {
		tids, err := threads(s.pid)
		if err != nil {
			return err
		}
		caught := 0
		for _, tid := range tids {
			if _, ok := s.threads[tid]; ok {
				continue
			}
			if err := s.stop(tid); errors.Is(err, syscall.ESRCH) {
				continue // the thread ended
			} else if err != nil {
				return err
			}
			caught++
		}
		if caught == 0 {
			return nil
		}
	}
}

// stop seizes one thread and waits until it is stopped.
func (s *stopped) stop(tid int) error {
	if err := ptrace(ptraceSeize, tid, 0, 0); err != nil {
		return err
	}
	s.threads[tid] = 0
	if err := ptrace(ptraceInterrupt, tid, 0, 0); err != nil {
		return err
	}
	ws, err := wait(tid)
	if errors.Is(err, errGone) {
		delete(s.threads, tid)
		return syscall.ESRCH // the thread ended as it was being stopped
	} else if err != nil {
		return err
	}
	if !isEventStop(ws) {
		s.threads[tid] = ws.StopSignal() // a signal-delivery stop: deliver it on release
	}
	return nil
}

// isEventStop tells the stops that deliver nothing (the interrupt's, and a
// group-stop of a process already stopped: PTRACE_EVENT_STOP) from a
// signal-delivery stop, whose signal must be delivered on release, a
// SIGSTOP included: a pause sent while the process is held would
// otherwise be lost, and the process run on while the history says it is
// paused.
func isEventStop(ws syscall.WaitStatus) bool {
	return int(ws>>16)&0xff == eventStop
}

// release lets every thread go, delivering the signals that stopping them
// held back.
func (s *stopped) release() error {
	var errs []error
	for tid, sig := range s.threads {
		if err := ptrace(syscall.PTRACE_DETACH, tid, 0, uintptr(sig)); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("detaching thread %d: %w", tid, err))
		}
	}
	return errors.Join(errs...)
}

// step runs one instruction of a stopped thread. The thread may first
// report another stop (the interrupt that stopped it, a group-stop, or a
// signal that arrived), with the instruction not run yet: a signal is kept
// for release, and the step tried again.
func (s *stopped) step(tid int) error {
	var ws syscall.WaitStatus
	for range 100 {
		if err := syscall.PtraceSingleStep(tid); err != nil {
			return err
		}
		var err error
		ws, err = wait(tid)
		if err != nil {
			return err
		}
		switch sig := ws.StopSignal(); {
		case isEventStop(ws):
			// the interrupt's stop, or a group-stop: nothing to deliver
		case sig == syscall.SIGTRAP:
			return nil
		default:
			s.threads[tid] = sig
		}
	}
	return fmt.Errorf("thread %d would not single-step (its last stop: signal %v, event %d)", tid, ws.StopSignal(), int(ws>>16)&0xff)
}

// stepOutOf single-steps every thread whose next instruction lies in one
// of the ranges [a, a+jumpLen) until none does: a thread stopped half way
// through the bytes being rewritten would resume in the middle of the new
// ones.
func (s *stopped) stepOutOf(addrs []uint64) error {
	for tid := range s.threads {
		for range 1000 {
			var regs syscall.PtraceRegs
			if err := syscall.PtraceGetRegs(tid, &regs); err != nil {
				return err
			}
			inside := false
			for _, a := range addrs {
				inside = inside || regs.Rip >= a && regs.Rip < a+jumpLen
			}
			if !inside {
				break
			}
			if err := s.step(tid); err != nil {
				return err
			}
		}
	}
	return nil
}

// syscall makes the main thread run one system call, at the address of a
// syscall instruction in its vDSO, and restores its registers after. If
// the thread was stopped inside a system call, orig_rax = -1 keeps the
// kernel from restarting that one instead; with the registers restored,
// it restarts it as it would have.
func (s *stopped) syscall(at uint64, nr uint64, args ...uint64) (uint64, error) {
	var saved syscall.PtraceRegs
	if err := syscall.PtraceGetRegs(s.pid, &saved); err != nil {
		return 0, err
	}
	regs := saved
	regs.Rax, regs.Orig_rax, regs.Rip = nr, ^uint64(0), at
	for i, r := range []*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9} {
		if i < len(args) {
			*r = args[i]
		}
	}
	if err := syscall.PtraceSetRegs(s.pid, &regs); err != nil {
		return 0, err
	}
	err := s.step(s.pid)
	if err == nil {
		err = syscall.PtraceGetRegs(s.pid, &regs)
	}
	return regs.Rax, errors.Join(err, syscall.PtraceSetRegs(s.pid, &saved))
}

func ptrace(req, tid int, addr, data uintptr) error {
	_, _, e := syscall.Syscall6(syscall.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// wait waits, for at most stopTimeout, until tid reports a stop.
func wait(tid int) (syscall.WaitStatus, error) {
	deadline := time.Now().Add(stopTimeout)
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(tid, &ws, syscall.WALL|syscall.WNOHANG, nil)
		switch {
		case err != nil:
			return ws, err
		case got == tid && ws.Stopped():
			return ws, nil
		case got == tid:
			return ws, fmt.Errorf("thread %d: %w (%v)", tid, errGone, ws)
		case time.Now().After(deadline):
			return ws, fmt.Errorf("thread %d did not stop within %s", tid, stopTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// threads lists the thread ids of pid.
func threads(pid int) ([]int, error) {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range es {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
