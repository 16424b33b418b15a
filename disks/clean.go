package disks

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/chaos-testing/chaos/containers"
)

// Clean unmounts the layers of every run whose harness is gone (killed:
// its layers answer "transport endpoint is not connected" from then on)
// and removes their mount points. The containers that used them must be
// gone first. It returns how many layers it unmounted. Runs in progress
// are left alone.
func Clean() (int, error) {
	runs, err := os.ReadDir(Root)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("disks: %w", err)
	}
	mounts, err := mountsUnder(Root)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, run := range runs {
		dir := filepath.Join(Root, run.Name())
		owner, _ := os.ReadFile(filepath.Join(dir, harnessFile))
		if !containers.HarnessGone(string(owner)) {
			continue
		}
		for _, m := range mounts {
			if filepath.Dir(m) == dir {
				if err := detach(m); err != nil {
					errs = append(errs, err)
					continue
				}
				n++
			}
		}
		errs = append(errs, removeRun(dir))
	}
	return n, errors.Join(errs...)
}

// detach aborts the layer at mnt and unmounts it lazily: at once from the
// tree, for good once nothing uses it. The abort (a forced unmount aborts
// a FUSE connection, and fails as busy) frees a harness killed inside one
// of its own requests (a fault changing a node's file through the layer):
// that thread waits for the layer's server, itself, and holds the dying
// harness until then.
func detach(mnt string) error {
	_ = unix.Unmount(mnt, unix.MNT_FORCE)
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

// mountsUnder lists the mount points under root, from this process's
// mount table.
func mountsUnder(root string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("disks: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - type source
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mnt := unescape(fields[4])
		if strings.HasPrefix(mnt, root+string(filepath.Separator)) {
			out = append(out, mnt)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("disks: read the mount table: %w", err)
	}
	return out, nil
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
