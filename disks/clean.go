package disks

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/chaos-testing/chaos/containers"
)

// Abort aborts the layers of every run whose harness is gone, and leaves
// them mounted: from then on they answer "transport endpoint is not
// connected". A killed harness's layers are aborted when it has exited,
// but one killed inside a request to its own layer (a fault changing a
// node's file through it) waits on itself and never exits, and the nodes
// waiting on its layers can then be neither killed nor removed: Abort
// comes before the containers are removed. It aborts through the FUSE
// control file system, not by a forced unmount, which would take a layer
// off its mount point, and a node that Docker was starting for the dead
// harness would then write into the bare directory.
func Abort() error {
	var gone []Mount
	if err := eachGoneRun(func(_ string, ms []Mount) error { gone = append(gone, ms...); return nil }); err != nil || len(gone) == 0 {
		return err
	}
	unmount, err := mountControl()
	if err != nil {
		return err
	}
	defer unmount()
	var errs []error
	for _, m := range gone {
		errs = append(errs, abort(m))
	}
	return errors.Join(errs...)
}

// fuseControl is where the kernel's FUSE control file system lists the
// connections, by device minor number.
const fuseControl = "/sys/fs/fuse/connections"

// mountControl mounts the FUSE control file system unless it is mounted
// (its folder then lies on another device than its parent), and returns
// what unmounts it again if it mounted it: clean leaves no mount behind.
func mountControl() (unmount func(), err error) {
	var dir, parent unix.Stat_t
	if err := unix.Stat(fuseControl, &dir); err != nil {
		return nil, fmt.Errorf("disks: the FUSE control file system: %w", err)
	}
	if err := unix.Stat(filepath.Dir(fuseControl), &parent); err != nil {
		return nil, fmt.Errorf("disks: the FUSE control file system: %w", err)
	}
	if dir.Dev != parent.Dev {
		return func() {}, nil
	}
	if err := unix.Mount("fusectl", fuseControl, "fusectl", 0, ""); err != nil {
		return nil, fmt.Errorf("disks: mount the FUSE control file system: %w", err)
	}
	return func() { _ = unix.Unmount(fuseControl, 0) }, nil
}

// abort aborts m's FUSE connection through the control file system.
func abort(m Mount) error {
	_, minor, ok := strings.Cut(m.Dev, ":")
	if !ok {
		return fmt.Errorf("disks: %s: device %q", m.Path, m.Dev)
	}
	if err := os.WriteFile(filepath.Join(fuseControl, minor, "abort"), []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("disks: abort %s: %w", m.Path, err)
	}
	return nil
}

// Clean unmounts the layers of every run whose harness is gone and
// removes their mount points. The containers that used them must be gone
// first. It returns how many layers it unmounted. Runs in progress are
// left alone.
func Clean() (int, error) {
	n := 0
	err := eachGoneRun(func(dir string, mounts []Mount) error {
		var errs []error
		for _, m := range mounts {
			if err := detach(m.Path); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		return errors.Join(append(errs, removeRun(dir))...)
	})
	return n, err
}

// eachGoneRun calls f with the folder of mount points of each run whose
// harness is gone, and the layers mounted there.
func eachGoneRun(f func(dir string, mounts []Mount) error) error {
	runs, err := os.ReadDir(Root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("disks: %w", err)
	}
	mounts, err := mountsUnder(Root)
	if err != nil {
		return err
	}
	var errs []error
	for _, run := range runs {
		dir := filepath.Join(Root, run.Name())
		owner, _ := os.ReadFile(filepath.Join(dir, harnessFile))
		if !containers.HarnessGone(string(owner)) {
			continue
		}
		var in []Mount
		for _, m := range mounts {
			if filepath.Dir(m.Path) == dir {
				in = append(in, m)
			}
		}
		errs = append(errs, f(dir, in))
	}
	return errors.Join(errs...)
}

// detach unmounts the layer at mnt lazily: at once from the tree, for
// good once nothing uses it. Its server, if alive, then ends.
func detach(mnt string) error {
	if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("disks: unmount %s: %w", mnt, err)
	}
	return nil
}

// removeRun removes a run's folder of mount points, one empty directory
// at a time, never a tree: a directory still mounted is not removed, and
// nothing under it is touched.
func removeRun(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if e.Name() == harnessFile {
			continue
		}
		if err := os.Remove(path); err != nil {
			errs = append(errs, fmt.Errorf("disks: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err // the harness file stays, so that clean tries again
	}
	os.Remove(filepath.Join(dir, harnessFile))
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("disks: %w", err)
	}
	return nil
}

// Mount is one line of this process's mount table: the mount point, its
// device (major:minor) and its file system type.
type Mount struct{ Path, Dev, Type string }

// Mounts reads this process's mount table, which names the mounts without
// asking their file systems (a hung FUSE server does not hold it up).
func Mounts() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("disks: %w", err)
	}
	defer f.Close()
	var out []Mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - type source
		before, after, _ := strings.Cut(sc.Text(), " - ")
		fields, rest := strings.Fields(before), strings.Fields(after)
		if len(fields) < 5 {
			continue
		}
		m := Mount{Path: unescape(fields[4]), Dev: fields[2]}
		if len(rest) > 0 {
			m.Type = rest[0]
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("disks: read the mount table: %w", err)
	}
	return out, nil
}

// mountsUnder lists the mounts under root.
func mountsUnder(root string) ([]Mount, error) {
	all, err := Mounts()
	return slices.DeleteFunc(all, func(m Mount) bool { return !strings.HasPrefix(m.Path, root+string(filepath.Separator)) }), err
}

// unescape undoes the mount table's octal escapes (\040 for a space).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
