package disks

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// newSet makes a run's disks with mount points under a temporary Root.
func newSet(t *testing.T) (*Set, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE: %v", err)
	}
	old := Root
	Root = t.TempDir()
	t.Cleanup(func() { Root = old })
	backing := t.TempDir()
	s, err := New(backing, "run1")
	if err != nil {
		t.Fatal(err)
	}
	return s, backing
}

func mounted(t *testing.T) int {
	t.Helper()
	ms, err := mountsUnder(Root)
	n := len(ms)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A node's disk is a lazy layer over its folder of the run: a drop loses
// what was not synced, Close writes back the rest and unmounts, and no
// mount point is left.
func TestSet(t *testing.T) {
	s, backing := newSet(t)
	dir, err := s.Attach("n1")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Attach("n1"); err != nil || again != dir {
		t.Errorf("a second Attach gave %q (%v), want %q", again, err, dir)
	}
	if !s.Has("n1") || s.Has("n2") || s.Dir("n1") != dir {
		t.Errorf("Has(n1) %v, Has(n2) %v, Dir(n1) %q", s.Has("n1"), s.Has("n2"), s.Dir("n1"))
	}
	if mounted(t) != 1 {
		t.Fatalf("%d mounts under Root, want 1", mounted(t))
	}
	if err := os.WriteFile(filepath.Join(dir, "lost"), []byte("lost"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := s.Drop("n1")
	if err != nil || len(d.Files) != 1 || d.Files[0].Path != "lost" {
		t.Errorf("drop: %+v (%v), want the file lost", d, err)
	}
	if _, err := s.Drop("n2"); err == nil {
		t.Error("a drop of a node without a disk did not fail")
	}
	if err := os.WriteFile(filepath.Join(dir, "kept"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"lost": "", "kept": "kept"} {
		if got, err := os.ReadFile(filepath.Join(backing, "n1", name)); err != nil || string(got) != want {
			t.Errorf("after Close, %s holds %q (%v), want %q", name, got, err, want)
		}
	}
	if n := mounted(t); n != 0 {
		t.Errorf("%d mounts left", n)
	}
	if entries, _ := os.ReadDir(Root); len(entries) != 0 {
		t.Errorf("left under Root: %v", entries)
	}
	if _, err := s.Attach("n2"); err == nil {
		t.Error("Attach after Close did not fail")
	}
}

// Clean unmounts the disks of a run whose harness is gone, and leaves
// those of a run in progress.
func TestClean(t *testing.T) {
	s, _ := newSet(t)
	if _, err := s.Attach("n1"); err != nil {
		t.Fatal(err)
	}
	other, err := New(t.TempDir(), "run2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Attach("n1"); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// run1's harness is gone: pid 1 never started at that time.
	if err := os.WriteFile(filepath.Join(Root, "run1", harnessFile), []byte("1:0"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Clean()
	if err != nil || n != 1 {
		t.Fatalf("Clean unmounted %d (%v), want 1", n, err)
	}
	if _, err := os.Stat(filepath.Join(Root, "run1")); !os.IsNotExist(err) {
		t.Errorf("run1's mount points are still there (%v)", err)
	}
	if mounted(t) != 1 || !other.Has("n1") {
		t.Errorf("%d mounts left, want run2's", mounted(t))
	}
	s.Close() // its layer is detached already; the server ends
}

// The mount table gives each mount's file system type, which the local
// Kubernetes node reads to let go of the host's FUSE mounts.
func TestMountsTypes(t *testing.T) {
	ms, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ms, func(m Mount) bool { return m.Path == "/proc" && m.Type == "proc" }) {
		t.Fatalf("no /proc of type proc in %+v", ms)
	}
}
