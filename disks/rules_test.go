package disks

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/lazyfs"
)

// attached is node n1's disk and rules, and a file open on it.
func attached(t *testing.T) (*Rules, *os.File) {
	t.Helper()
	s, _ := newSet(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	dir, err := s.Attach("n1")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "wal"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return s.Rules("n1"), f
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		m    Match
		op   lazyfs.Op
		want bool
	}{
		{Match{}, lazyfs.Op{Name: "read", Path: "x"}, true},
		{Match{Ops: []string{"fsync"}}, lazyfs.Op{Name: "fdatasync", Path: "x"}, true},
		{Match{Ops: []string{"fdatasync"}}, lazyfs.Op{Name: "fsync", Path: "x"}, false},
		{Match{Paths: []string{"*.wal"}}, lazyfs.Op{Name: "write", Path: "member/wal/0.wal"}, true},
		{Match{Paths: []string{"member/snap/db"}}, lazyfs.Op{Name: "write", Path: "member/snap/db"}, true},
		{Match{Paths: []string{"member/*/db"}}, lazyfs.Op{Name: "write", Path: "member/wal/0.wal"}, false},
	} {
		if got := c.m.Picks(c.op); got != c.want {
			t.Errorf("%+v picks %+v: %t, expected %t", c.m, c.op, got, c.want)
		}
	}
}

// Each effect, on real operations through a node's disk, and its heal.
func TestRules(t *testing.T) {
	rules, f := attached(t)
	write := func() error { _, err := f.WriteAt([]byte("x"), 0); return err }

	remove := rules.Add(Match{Ops: []string{"fsync"}}, NewLatency(func(*rand.Rand) time.Duration { return 50 * time.Millisecond }, 1))
	start := time.Now()
	if err := f.Sync(); err != nil || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("a slow fsync took %s: %v", time.Since(start), err)
	}
	remove()

	remove = rules.Add(Match{}, Stall{})
	done := make(chan error)
	go func() { done <- write() }()
	select {
	case err := <-done:
		t.Fatalf("a write on a hung disk returned: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	remove()
	if err := <-done; err != nil {
		t.Fatalf("the held write, once the disk is healed: %v", err)
	}

	remove = rules.Add(Match{Ops: []string{"write"}}, NewFail(syscall.EIO, 1, 1))
	if err := write(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a failing disk: got %v, expected EIO", err)
	}
	remove()

	remove = rules.Add(Match{}, NewFull(3))
	if _, err := f.WriteAt([]byte("abc"), 1); err != nil { // 2 bytes past the end of "x"
		t.Fatalf("within the room left: %v", err)
	}
	if _, err := f.WriteAt([]byte("de"), 4); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("past the room left: got %v, expected ENOSPC", err)
	}
	if err := write(); err != nil {
		t.Fatalf("an overwrite needs no room: %v", err)
	}
	remove()
	if err := write(); err != nil {
		t.Fatalf("healed: %v", err)
	}
}

// A crash point fires at the Nth operation it counts, holds every other
// operation while it fires, and, the node dead, fails every operation
// until it is removed; with no rule left the layer asks nothing.
func TestTrigger(t *testing.T) {
	rules, f := attached(t)
	var fired atomic.Value
	release := make(chan struct{})
	trig := NewTrigger(Match{Ops: []string{"fsync"}}, 2, 0, 1, func(op lazyfs.Op) bool {
		fired.Store(op)
		<-release
		return true
	})
	remove := rules.Add(Match{}, trig)
	if err := f.Sync(); err != nil {
		t.Fatalf("the first fsync: %v", err)
	}
	synced := make(chan error)
	go func() { synced <- f.Sync() }()
	for fired.Load() == nil {
		time.Sleep(time.Millisecond)
	}
	if op := fired.Load().(lazyfs.Op); op.Name != "fsync" || op.Path != "wal" {
		t.Fatalf("fired at %+v", op)
	}
	wrote := make(chan error)
	go func() { _, err := f.WriteAt([]byte("y"), 0); wrote <- err }()
	select {
	case err := <-wrote:
		t.Fatalf("a write went on while the crash point fired: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for _, ch := range []chan error{synced, wrote} {
		if err := <-ch; !errors.Is(err, syscall.EIO) {
			t.Fatalf("after the crash: got %v, expected EIO", err)
		}
	}
	remove()
	if _, err := f.WriteAt([]byte("z"), 0); err != nil {
		t.Fatalf("removed: %v", err)
	}
}
