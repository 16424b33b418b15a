//go:build linux && amd64

package vdsoclock

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/chaos-testing/chaos/history"
)

const helperEnv = "VDSOCLOCK_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		helper()
		return
	}
	os.Exit(m.Run())
}

// helper answers each line on stdin with its clocks, read the way programs
// read them (through the vDSO), beside the truth (system calls): wall
// clock by time.Now and by gettimeofday, and monotonic time by
// time.Since, in nanoseconds.
func helper() {
	if os.Getenv(helperEnv) == "busy" {
		// Threads forever in the vDSO's clock functions, as patches land.
		for range 8 {
			go func() {
				for {
					time.Now()
					var tv syscall.Timeval
					syscall.Gettimeofday(&tv)
				}
			}()
		}
	}
	start, startTrue := time.Now(), history.Monotonic()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var tv syscall.Timeval
		syscall.Gettimeofday(&tv)
		var wall syscall.Timespec
		syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 0, uintptr(ptr(&wall)), 0)
		fmt.Printf("%d %d %d %d\n", time.Now().UnixNano()-wall.Nano(), tv.Nano()-wall.Nano(),
			int64(time.Since(start)), int64(history.Monotonic()-startTrue))
	}
}

// skews are how far a helper's clocks are from the truth.
type skews struct{ now, gettimeofday, monotonic time.Duration }

type helperProc struct {
	cmd *exec.Cmd
	in  io.Writer
	out *bufio.Scanner
}

func startHelper(t *testing.T, mode string) *helperProc {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("ptrace of another process needs root here")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return &helperProc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

func (h *helperProc) skews(t *testing.T) skews {
	t.Helper()
	fmt.Fprintln(h.in)
	if !h.out.Scan() {
		t.Fatalf("helper gone: %v", h.out.Err())
	}
	var now, tod, mono, monoTrue int64
	if _, err := fmt.Sscan(h.out.Text(), &now, &tod, &mono, &monoTrue); err != nil {
		t.Fatalf("helper said %q: %v", h.out.Text(), err)
	}
	return skews{time.Duration(now), time.Duration(tod), time.Duration(mono - monoTrue)}
}

// near is how close a shifted clock must be to the offset asked: the
// fault must land within 100 ms, and reading the two clocks takes
// microseconds.
func near(got, want time.Duration) bool {
	return got-want < 100*time.Millisecond && want-got < 100*time.Millisecond
}

func TestShiftRealtimeThenMonotonicThenRemove(t *testing.T) {
	h := startHelper(t, "idle")
	pid := h.cmd.Process.Pid
	base := h.skews(t)
	if !near(base.now, 0) || !near(base.monotonic, 0) {
		t.Fatalf("helper's clocks skewed before any patch: %+v", base)
	}
	p, err := Install(pid, "test")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Patched(pid); !ok || err != nil {
		t.Fatalf("Patched after Install: %v, %v", ok, err)
	}
	if s := h.skews(t); !near(s.now, 0) {
		t.Errorf("installed with no offset, the clock moved: %+v", s)
	}

	if err := p.Set(Realtime.By(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	s := h.skews(t)
	t.Logf("+20s realtime: %+v", s)
	if !near(s.now, 20*time.Second) || !near(s.gettimeofday, 20*time.Second) || !near(s.monotonic, 0) {
		t.Errorf("after +20s on the wall clock: %+v", s)
	}

	if err := p.Set((Realtime | Monotonic).By(-7 * time.Second)); err != nil {
		t.Fatal(err)
	}
	s = h.skews(t)
	t.Logf("-7s realtime and monotonic: %+v", s)
	if !near(s.now, -7*time.Second) || !near(s.gettimeofday, -7*time.Second) || !near(s.monotonic, -7*time.Second) {
		t.Errorf("after -7s on both clocks: %+v", s)
	}

	// Each clock has an offset of its own: shares of two faults add up.
	if err := p.Set(Realtime.By(30 * time.Second).Plus((Realtime | Monotonic).By(-4 * time.Second))); err != nil {
		t.Fatal(err)
	}
	s = h.skews(t)
	t.Logf("+30s realtime, -4s realtime and monotonic: %+v", s)
	if !near(s.now, 26*time.Second) || !near(s.gettimeofday, 26*time.Second) || !near(s.monotonic, -4*time.Second) {
		t.Errorf("after +30s on the wall clock and -4s on both: %+v", s)
	}

	if err := Remove(pid); err != nil {
		t.Fatal(err)
	}
	if ok, err := Patched(pid); ok || err != nil {
		t.Fatalf("Patched after Remove: %v, %v", ok, err)
	}
	if s := h.skews(t); !near(s.now, 0) || !near(s.monotonic, 0) {
		t.Errorf("after Remove: %+v", s)
	}
	// The process runs on, and can be patched again.
	if _, err := Install(pid, "test"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(pid); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveUnpatchedOrGone(t *testing.T) {
	h := startHelper(t, "idle")
	h.skews(t) // it runs
	if err := Remove(h.cmd.Process.Pid); err != nil {
		t.Errorf("unpatched process: %v", err)
	}
	h.cmd.Process.Kill()
	h.cmd.Wait()
	if err := Remove(h.cmd.Process.Pid); err != nil {
		t.Errorf("process gone: %v", err)
	}
}

func ptr(ts *syscall.Timespec) unsafe.Pointer { return unsafe.Pointer(ts) }

// TestBusyProcess patches, shifts and restores, again and again, a
// process whose threads read the clock without pause: none may crash or
// read a torn clock.
func TestBusyProcess(t *testing.T) {
	h := startHelper(t, "busy")
	pid := h.cmd.Process.Pid
	h.skews(t)
	for i := range 20 {
		p, err := Install(pid, "test")
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		// The wall clock only: a Go program's timers set before its
		// monotonic clock goes back (as it does when the offset is
		// removed) fire that much later, which would only slow the test.
		offset := time.Duration(i-10) * time.Second
		if err := p.Set(Realtime.By(offset)); err != nil {
			t.Fatal(err)
		}
		if s := h.skews(t); !near(s.now, offset) || !near(s.monotonic, 0) {
			t.Fatalf("round %d: offset %s, skews %+v", i, offset, s)
		}
		if err := Remove(pid); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if s := h.skews(t); !near(s.now, 0) {
			t.Fatalf("round %d: after Remove, skews %+v", i, s)
		}
	}
}

func TestScanFindsPatched(t *testing.T) {
	h := startHelper(t, "idle")
	pid := h.cmd.Process.Pid
	h.skews(t)
	p, err := Install(pid, "4242:123456")
	if err != nil {
		t.Fatal(err)
	}
	if !p.InForce() {
		t.Error("the patch just installed is not in force")
	}
	found, err := Scan()
	i := slices.IndexFunc(found, func(f Patch) bool { return f.Pid == pid })
	if err != nil || i < 0 || found[i].Owner != "4242:123456" {
		t.Fatalf("Scan: %+v, %v; want %d among them, owned by 4242:123456", found, err, pid)
	}
	if err := Remove(pid); err != nil {
		t.Fatal(err)
	}
	if p.InForce() {
		t.Error("the patch removed is still in force")
	}
	if found, _ := Scan(); slices.ContainsFunc(found, func(f Patch) bool { return f.Pid == pid }) {
		t.Fatalf("Scan after Remove: %+v", found)
	}
	if _, err := Install(pid, strings.Repeat("x", 48)); err == nil {
		t.Error("an owner longer than the page's room was accepted")
	}
}

// TestStopDuringPatchIsKept sends SIGSTOP (a pause) to a busy process
// while it is being patched or restored, round after round: the process
// must end up stopped every time, never running on with its pause lost.
func TestStopDuringPatchIsKept(t *testing.T) {
	h := startHelper(t, "busy")
	pid := h.cmd.Process.Pid
	h.skews(t)
	for i := range 30 {
		done := make(chan error, 1)
		go func() {
			_, err := Install(pid, "test")
			done <- err
		}()
		time.Sleep(time.Duration(i%5) * time.Millisecond)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("round %d: Install: %v", i, err)
		}
		if !stopsWithin(pid, time.Second) {
			t.Fatalf("round %d: SIGSTOP sent during Install, yet the process runs", i)
		}
		if err := Remove(pid); err != nil {
			t.Fatalf("round %d: Remove: %v", i, err)
		}
		if !stopsWithin(pid, time.Second) {
			t.Fatalf("round %d: a stopped process runs after Remove", i)
		}
		syscall.Kill(pid, syscall.SIGCONT)
	}
}

// stopsWithin reports whether pid is stopped (state T) within d.
func stopsWithin(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// A process paused (SIGSTOP) when a clock fault patches it stays paused,
// and reads the shifted clock once resumed; restoring it paused keeps it
// paused too.
func TestPatchPausedProcess(t *testing.T) {
	h := startHelper(t, "idle")
	pid := h.cmd.Process.Pid
	h.skews(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if !stopsWithin(pid, time.Second) {
		t.Fatal("SIGSTOP did not stop the helper")
	}
	p, err := Install(pid, "test")
	if err == nil {
		err = p.Set(Realtime.By(9 * time.Second))
	}
	if err != nil {
		t.Fatal(err)
	}
	if !stopsWithin(pid, 100*time.Millisecond) {
		t.Error("patching a paused process resumed it")
	}
	syscall.Kill(pid, syscall.SIGCONT)
	if s := h.skews(t); !near(s.now, 9*time.Second) {
		t.Errorf("resumed after the patch, its clock is %+v, want +9s", s)
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	if !stopsWithin(pid, time.Second) {
		t.Fatal("SIGSTOP did not stop the helper")
	}
	if err := Remove(pid); err != nil {
		t.Fatal(err)
	}
	if !stopsWithin(pid, 100*time.Millisecond) {
		t.Error("restoring a paused process resumed it")
	}
	syscall.Kill(pid, syscall.SIGCONT)
	if s := h.skews(t); !near(s.now, 0) {
		t.Errorf("resumed after the restore, its clock is %+v", s)
	}
}

// A process that runs another program (execve) as it is patched or
// restored, as a container's shell does when it execs its server: each
// try either lands or says ErrChanged, never writes into the new program
// at the old one's addresses, and the new program can be patched.
func TestPatchAcrossExec(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("ptrace of another process needs root here")
	}
	for round := range 20 {
		cmd := exec.Command("sh", "-c", "read x; exec sleep 60")
		in, _ := cmd.StdinPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		shell, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		go func() {
			time.Sleep(time.Duration(round%4) * time.Millisecond)
			in.Close() // the shell execs sleep
		}()
		for {
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			p, err := Install(pid, "test")
			if err != nil && !errors.Is(err, ErrChanged) {
				t.Fatalf("round %d: Install: %v", round, err)
			}
			if err == nil {
				if err := p.Set(Realtime.By(time.Second)); err != nil && !p.InForce() {
					err = nil // the program changed since: the page went with it
				} else if err != nil {
					t.Fatalf("round %d: Set: %v", round, err)
				}
				if err := Remove(pid); err != nil {
					t.Fatalf("round %d: Remove: %v", round, err)
				}
				if exe != shell && exe != "" {
					break // the new program was patched
				}
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
}
