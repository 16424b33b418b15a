package lazyfs

import (
	"context"
	"errors"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// file is an open handle of a regular file: reads, writes and fsyncs go
// through the cache. It wraps, rather than embeds, the loopback's handle,
// so that none of the loopback's other operations on the backing
// descriptor (fallocate, copy_file_range, passthrough, lseek, ioctl) can
// reach the backing file behind the cache's back.
type file struct {
	loop  *fs.LoopbackFile // owns the backing descriptor
	fd    backingFD
	id    FileID
	cache *Cache
	node  *node // its name, for the gate
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileStatxer   = (*file)(nil)
)

// newFile wraps the handle the loopback opened for node n's file.
func newFile(handle fs.FileHandle, n *node) (*file, syscall.Errno) {
	loop := handle.(*fs.LoopbackFile)
	// PassthroughFd is the loopback's only accessor of its descriptor; the
	// descriptor stays open until Release.
	fd, ok := loop.PassthroughFd()
	if !ok {
		loop.Release(context.Background())
		return nil, syscall.EBADF
	}
	n.cache.Open(n.id())
	return &file{loop: loop, fd: backingFD(fd), id: n.id(), cache: n.cache, node: n}, 0
}

func (f *file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if errno := f.node.gate.before(ctx, func() Op { return Op{Name: "read", Path: f.node.path(""), Off: off, Len: int64(len(dest))} }); errno != 0 {
		return nil, errno
	}
	n, err := f.cache.Read(f.id, f.fd, dest, off)
	if err != nil {
		return nil, errnoOf(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if errno := f.node.gate.before(ctx, func() Op {
		end := off + int64(len(data))
		return Op{Name: "write", Path: f.node.path(""), Off: off, Len: int64(len(data)), Grow: max(0, end-f.node.size(f.fd))}
	}); errno != 0 {
		return 0, errno
	}
	if err := f.cache.Write(f.id, f.fd, data, off); err != nil {
		return 0, errnoOf(err)
	}
	return uint32(len(data)), 0
}

// Fsync serves fsync and fdatasync alike: both make the data and the size
// durable.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	name := "fsync"
	if flags&fuseFsyncDatasync != 0 {
		name = "fdatasync"
	}
	if errno := f.node.gate.before(ctx, func() Op { return Op{Name: name, Path: f.node.path("")} }); errno != 0 {
		return errno
	}
	return errnoOf(f.cache.Sync(f.id, f.fd))
}

func (f *file) Release(ctx context.Context) syscall.Errno {
	// Tell the cache first: once the descriptor is closed, an unlinked
	// file's inode number may be reused by a new file.
	f.cache.Close(f.id)
	return f.loop.Release(ctx)
}

// Getattr and Statx stat the backing descriptor, which works for a file
// without a name too; the node puts the cached size in.
func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.loop.Getattr(ctx, out)
}

func (f *file) Statx(ctx context.Context, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	return f.loop.Statx(ctx, flags, mask, out)
}

// fuseFsyncDatasync is FUSE_FSYNC_FDATASYNC, the fsync flag of an
// fdatasync.
const fuseFsyncDatasync = 1

// errnoOf is the errno to answer for err: its own if it has one, else EIO.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}
