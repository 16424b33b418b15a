//go:build linux && amd64

package vdsoclock

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
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
	p, err := Install(pid)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Patched(pid); !ok || err != nil {
		t.Fatalf("Patched after Install: %v, %v", ok, err)
	}
	if s := h.skews(t); !near(s.now, 0) {
		t.Errorf("installed with no offset, the clock moved: %+v", s)
	}

	if err := p.Set(20*time.Second, Realtime); err != nil {
		t.Fatal(err)
	}
	s := h.skews(t)
	t.Logf("+20s realtime: %+v", s)
	if !near(s.now, 20*time.Second) || !near(s.gettimeofday, 20*time.Second) || !near(s.monotonic, 0) {
		t.Errorf("after +20s on the wall clock: %+v", s)
	}

	if err := p.Set(-7*time.Second, Realtime|Monotonic); err != nil {
		t.Fatal(err)
	}
	s = h.skews(t)
	t.Logf("-7s realtime and monotonic: %+v", s)
	if !near(s.now, -7*time.Second) || !near(s.gettimeofday, -7*time.Second) || !near(s.monotonic, -7*time.Second) {
		t.Errorf("after -7s on both clocks: %+v", s)
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
	if _, err := Install(pid); err != nil {
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
		p, err := Install(pid)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		// The wall clock only: a Go program's timers set before its
		// monotonic clock goes back (as it does when the offset is
		// removed) fire that much later, which would only slow the test.
		offset := time.Duration(i-10) * time.Second
		if err := p.Set(offset, Realtime); err != nil {
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
	if _, err := Install(pid); err != nil {
		t.Fatal(err)
	}
	pids, err := Scan()
	if err != nil || !slices.Contains(pids, pid) {
		t.Fatalf("Scan: %v, %v; want %d among them", pids, err, pid)
	}
	if err := Remove(pid); err != nil {
		t.Fatal(err)
	}
	if pids, _ := Scan(); slices.Contains(pids, pid) {
		t.Fatalf("Scan after Remove: %v", pids)
	}
}
