package lazyfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// FS is a mounted lazy layer over a backing directory.
type FS struct {
	backing    string
	mountpoint string
	cache      *Cache
	gate       *gated
	root       *node
	server     *fuse.Server
}

// Mount mounts a lazy layer over the directory backing at mountpoint, open
// to every user (allow_other, with the kernel checking permissions). As
// root it mounts directly; otherwise through fusermount, which needs
// user_allow_other in /etc/fuse.conf.
func Mount(backing, mountpoint string) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: backing directory: %w", err)
	}
	if st, err := os.Stat(backing); err != nil {
		return nil, fmt.Errorf("lazyfs: backing directory: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("lazyfs: backing %s is not a directory", backing)
	}
	loop, err := fusefs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: backing directory %s: %w", backing, err)
	}
	cache, gate := NewCache(), &gated{}
	root := &node{LoopbackNode: loop.(*fusefs.LoopbackNode), cache: cache, gate: gate}
	// Entries and attributes may be cached by the kernel for a second, as
	// go-fuse's default; Drop invalidates those it changes.
	timeout := time.Second
	server, err := fusefs.Mount(mountpoint, root, &fusefs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther:  true,
			Options:     []string{"default_permissions"},
			DirectMount: true,
			FsName:      backing,
			Name:        "lazyfs",
		},
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("lazyfs: mount %s at %s: %w", backing, mountpoint, err)
	}
	return &FS{backing: backing, mountpoint: mountpoint, cache: cache, gate: gate, root: root, server: server}, nil
}

// Drop discards every change not fsynced, as a power loss would, and
// returns what it discarded, by path. The error, if any, is about finding
// the paths or invalidating the kernel's caches; the changes are discarded
// regardless.
func (f *FS) Drop() (Dropped, error) {
	files := f.cache.Drop()
	paths, err := f.paths(files)
	errs := []error{err}
	for i := range files {
		files[i].Path = paths[files[i].Inode]
		if files[i].Path != "" {
			errs = append(errs, f.invalidate(files[i].Path))
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return Dropped{Files: files}, errors.Join(errs...)
}

// paths finds a path, relative to the backing directory, of each of the
// files. The cache knows files by inode number only: walking the backing
// directory once per Drop is cheaper than keeping every file's name up to
// date through renames.
func (f *FS) paths(files []DroppedFile) (map[uint64]string, error) {
	paths := make(map[uint64]string, len(files))
	missing := make(map[uint64]bool, len(files))
	for _, d := range files {
		missing[d.Inode] = true
	}
	if len(missing) == 0 {
		return paths, nil
	}
	err := filepath.WalkDir(f.backing, func(path string, entry fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !entry.Type().IsRegular() {
			return err
		}
		info, err := entry.Info()
		if err != nil {
			return nil // gone since the directory was read
		}
		ino := info.Sys().(*syscall.Stat_t).Ino
		if missing[ino] {
			delete(missing, ino)
			paths[ino], _ = filepath.Rel(f.backing, path)
			if len(missing) == 0 {
				return filepath.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return paths, fmt.Errorf("lazyfs: names of dropped files in %s: %w", f.backing, err)
	}
	return paths, nil
}

// invalidate makes the kernel forget the cached pages and attributes of
// the file at path, relative to the mount, so that reads through handles
// already open see what survived. A file the kernel has not looked up has
// nothing cached.
func (f *FS) invalidate(path string) error {
	inode := f.root.EmbeddedInode()
	for _, name := range strings.Split(path, string(filepath.Separator)) {
		if inode = inode.GetChild(name); inode == nil {
			return nil
		}
	}
	if errno := inode.NotifyContent(0, 0); errno != 0 && errno != syscall.ENOENT {
		return fmt.Errorf("lazyfs: invalidate the kernel's cache of %s: %w", path, errno)
	}
	return nil
}

// Sync writes every cached change to the backing directory and syncs it,
// as a clean shutdown writes back the page cache: what the processes
// wrote is then on disk, to be checked after the run.
func (f *FS) Sync() error {
	ids := f.cache.Pending()
	files := make([]DroppedFile, len(ids))
	for i, id := range ids {
		files[i].Inode = uint64(id)
	}
	paths, err := f.paths(files)
	errs := []error{err}
	for _, id := range ids {
		if p, ok := paths[uint64(id)]; ok {
			errs = append(errs, f.syncPath(id, filepath.Join(f.backing, p)))
		}
	}
	return errors.Join(errs...)
}

// syncPath syncs file id's cached changes to the backing file at path.
func (f *FS) syncPath(id FileID, path string) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("lazyfs: sync %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := f.cache.Sync(id, backingFD(fd)); err != nil {
		return fmt.Errorf("lazyfs: sync %s: %w", path, err)
	}
	return nil
}

// Unmount unmounts the layer. It fails while the mount is busy. Un-synced
// changes are not written back: they are lost as by Drop.
func (f *FS) Unmount() error {
	if err := f.server.Unmount(); err != nil {
		return fmt.Errorf("lazyfs: unmount %s: %w", f.mountpoint, err)
	}
	return nil
}
