// Package disks gives the nodes of a run with a disk fault their data
// directories on the host: each node's directory is a lazy layer (package
// lazyfs) over a folder of the run's results, mounted outside the results
// and bind-mounted into the node's container, which stays unprivileged.
// A power loss drops what the layer holds un-synced; a corruption writes
// through it. What was written is in the run's folder afterwards.
package disks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/lazyfs"
)

// Root holds the mount points of every run, a folder per run: never inside
// a run's results, so that nothing that walks results meets a mount.
var Root = filepath.Join(os.TempDir(), "chaos-disks")

// harnessFile, in a run's folder under Root, names the harness that mounts
// its layers (containers.Harness): chaos clean unmounts the layers of a
// harness that is gone.
const harnessFile = "harness"

// Set is the disks of one run's nodes.
type Set struct {
	backing string // the run's folder of backing directories, one per node
	mounts  string // the run's folder under Root

	mu     sync.Mutex
	closed bool
	layers map[string]*lazyfs.FS // by node name
	rules  map[string]*Rules     // the faults in force on each layer
}

// New makes the folders of a run's disks: backing directories under
// backing, mount points under Root.
func New(backing, runID string) (*Set, error) {
	mounts := filepath.Join(Root, runID)
	if err := os.MkdirAll(mounts, 0o755); err != nil {
		return nil, fmt.Errorf("disks: %w", err)
	}
	if err := os.WriteFile(filepath.Join(mounts, harnessFile), []byte(containers.Harness()), 0o644); err != nil {
		return nil, fmt.Errorf("disks: %w", err)
	}
	return &Set{backing: backing, mounts: mounts, layers: map[string]*lazyfs.FS{}, rules: map[string]*Rules{}}, nil
}

// Attach mounts node name's disk, on first use, and returns the host
// directory to bind at the node's data directory.
func (s *Set) Attach(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mnt := filepath.Join(s.mounts, name)
	if s.closed {
		return "", fmt.Errorf("disks: attach %s: the run's disks are closed", name)
	}
	if s.layers[name] != nil {
		return mnt, nil
	}
	// 0700, as etcd wants its data directory; the servers run as root.
	back := filepath.Join(s.backing, name)
	if err := os.MkdirAll(back, 0o700); err != nil {
		return "", fmt.Errorf("disks: %w", err)
	}
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return "", fmt.Errorf("disks: %w", err)
	}
	layer, err := lazyfs.Mount(back, mnt)
	if err != nil {
		os.Remove(mnt)
		return "", fmt.Errorf("disks: %s: %w", name, err)
	}
	s.layers[name] = layer
	s.rules[name] = &Rules{layer: layer}
	return mnt, nil
}

// Rules are the faults in force on node name's disk; nil when it has none.
func (s *Set) Rules(name string) *Rules {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rules[name]
}

// Has reports whether node name has a disk.
func (s *Set) Has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.layers[name] != nil
}

// Drop discards what node name wrote and never synced, as a power loss
// would. Its process must be gone.
func (s *Set) Drop(name string) (lazyfs.Dropped, error) {
	s.mu.Lock()
	layer := s.layers[name]
	s.mu.Unlock()
	if layer == nil {
		return lazyfs.Dropped{}, fmt.Errorf("disks: %s has no disk", name)
	}
	return layer.Drop()
}

// Dir is node name's data directory on the host, seen through its layer:
// a fault that changes files there changes what the node reads.
func (s *Set) Dir(name string) string { return filepath.Join(s.mounts, name) }

// Close writes back what the layers hold, as a clean shutdown would, and
// unmounts them; the containers that used them must be gone. A layer still
// busy is detached, and the kernel lets it go with its last user.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	names := make([]string, 0, len(s.layers))
	for name := range s.layers {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []error
	for _, name := range names {
		layer := s.layers[name]
		s.rules[name].Clear() // nothing held may keep the layer busy
		errs = append(errs, layer.Sync())
		if err := layer.Unmount(); err != nil {
			errs = append(errs, detach(filepath.Join(s.mounts, name)))
		}
		delete(s.layers, name)
	}
	errs = append(errs, removeRun(s.mounts))
	return errors.Join(errs...)
}
