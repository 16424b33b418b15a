package lazyfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// recordingGate records what it is asked and fails the operations named
// in fail with EIO.
type recordingGate struct {
	mu   sync.Mutex
	ops  []Op
	fail string
}

func (g *recordingGate) Before(_ context.Context, op Op) syscall.Errno {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ops = append(g.ops, op)
	if op.Name == g.fail {
		return syscall.EIO
	}
	return 0
}

func (g *recordingGate) seen(name string) []Op {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(g.ops), func(op Op) bool { return op.Name != name })
}

// The gate is asked before each kind of operation, with the file's path
// relative to the layer and the bytes it adds; an errno fails the
// operation, which then changes nothing; without a gate all runs.
func TestGate(t *testing.T) {
	fsys, _, mnt := mountForTest(t)
	g := &recordingGate{fail: "fdatasync"}
	fsys.SetGate(g)
	if err := os.Mkdir(filepath.Join(mnt, "wal"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mnt, "wal", "0.wal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("HE"), 0); err != nil { // within the file: adds nothing
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(f.Fd())); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fdatasync: got %v, expected EIO from the gate", err)
	}
	if err := os.Rename(filepath.Join(mnt, "wal", "0.wal"), filepath.Join(mnt, "wal", "1.wal")); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(mnt, "wal", "1.wal"), 64); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(mnt, "wal", "1.wal")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []Op{
		{Name: "create", Path: "wal/0.wal"},
		{Name: "write", Path: "wal/0.wal", Off: 0, Len: 5, Grow: 5},
		{Name: "write", Path: "wal/0.wal", Off: 0, Len: 2},
		{Name: "fsync", Path: "wal/0.wal"},
		{Name: "fdatasync", Path: "wal/0.wal"},
		{Name: "rename", Path: "wal/0.wal", To: "wal/1.wal"},
		{Name: "truncate", Path: "wal/1.wal", Off: 64, Grow: 59},
		{Name: "unlink", Path: "wal/1.wal"},
	} {
		if !slices.Contains(g.seen(want.Name), want) {
			t.Errorf("the gate was not asked about %+v; it saw %+v", want, g.seen(want.Name))
		}
	}
	// Failed by the gate, a write changes nothing.
	g.mu.Lock()
	g.fail = "write"
	g.mu.Unlock()
	if err := os.WriteFile(filepath.Join(mnt, "x"), []byte("lost"), 0o644); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write: got %v, expected EIO", err)
	}
	fsys.SetGate(nil)
	if data, err := os.ReadFile(filepath.Join(mnt, "x")); err != nil || len(data) != 0 {
		t.Fatalf("after a failed write: %q, %v", data, err)
	}
}
