package lazyfs

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a loopback node whose regular files' contents and sizes go
// through the cache. It overrides every loopback operation that reads,
// writes or sizes contents on the backing file (Open, Create, Tmpfile,
// Setattr, CopyFileRange), or answers a file's attributes (Lookup, Link,
// Getattr, Statx: the kernel takes the file's size from any of them), and
// Unlink and Rename, to tell the cache when a file loses its last name.
// Everything else (names, directories, modes, owners, times, xattrs)
// passes through.
type node struct {
	*fs.LoopbackNode
	cache *Cache
	gate  *gated
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeStatxer        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
)

// WrapChild makes every node the loopback creates a node of the cache.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), cache: n.cache, gate: n.gate}
}

// id is the file's identity in the cache. The loopback's inode number is
// the backing inode number when the backing directory is one file system.
func (n *node) id() FileID { return FileID(n.StableAttr().Ino) }

// path is the node's path relative to the layer's root, and of name in
// it when name is given.
func (n *node) path(name string) string {
	return filepath.Join(n.Path(n.Root()), name)
}

// pathInBacking is the node's path in the backing directory.
func (n *node) pathInBacking() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// backingFlags are the flags to open a backing file with for a caller's
// flags. Always read-write, since reads overlay the cache on the backing
// file and an fsync through any handle writes to it. Never O_TRUNC,
// O_APPEND or O_SYNC, whose effects the cache keeps (the kernel sends a
// truncate and append offsets separately, and an fsync after each O_SYNC
// write), nor O_DIRECT, which would require aligned writes.
func backingFlags(flags uint32) uint32 {
	return flags&^(unix.O_ACCMODE|unix.O_TRUNC|unix.O_APPEND|unix.O_SYNC|unix.O_DSYNC|unix.O_DIRECT) | unix.O_RDWR
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	handle, fuseFlags, errno := n.LoopbackNode.Open(ctx, backingFlags(flags))
	if errno != 0 {
		return nil, 0, errno
	}
	f, errno := newFile(handle, n)
	if errno != 0 {
		return nil, 0, errno
	}
	return f, fuseFlags, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.gate.before(ctx, func() Op { return Op{Name: "create", Path: n.path(name)} }); errno != 0 {
		return nil, nil, 0, errno
	}
	child, handle, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, backingFlags(flags), mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	f, errno := newFile(handle, child.Operations().(*node))
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return child, f, fuseFlags, 0
}

// Tmpfile refuses O_TMPFILE: such a file could never get a name through
// the loopback (LINK carries no descriptor), and callers fall back to a
// named temporary file, which the cache covers.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	child, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == 0 {
		n.showCachedSize(FileID(child.StableAttr().Ino), &out.Size, &out.Blocks)
	}
	return child, errno
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	child, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		n.showCachedSize(FileID(child.StableAttr().Ino), &out.Size, &out.Blocks)
	}
	return child, errno
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := n.LoopbackNode.Getattr(ctx, f, out); errno != 0 {
		return errno
	}
	n.showCachedSize(n.id(), &out.Size, &out.Blocks)
	return 0
}

func (n *node) Statx(ctx context.Context, f fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if errno := n.LoopbackNode.Statx(ctx, f, flags, mask, out); errno != 0 {
		return errno
	}
	n.showCachedSize(n.id(), &out.Size, &out.Blocks)
	return 0
}

// size is the file's size as the layer shows it (0 when it cannot tell).
func (n *node) size(backing Sizer) int64 {
	if s, ok := n.cache.Size(n.id()); ok {
		return s
	}
	s, _ := backing.Size()
	return s
}

// showCachedSize puts file id's cached size, if it has one, and the
// 512-byte blocks it would take, in the attributes the backing file gave.
func (n *node) showCachedSize(id FileID, size, blocks *uint64) {
	if s, ok := n.cache.Size(id); ok {
		*size, *blocks = uint64(s), uint64(s+511)/512
	}
}

// Setattr caches a size change and passes the other changes through. The
// kernel sets the file's size from the answer, so it must be the cached
// size.
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	handle, _ := f.(*file)
	if size, ok := in.GetSize(); ok {
		var backing Sizer = backingPath(n.pathInBacking())
		if handle != nil {
			backing = handle.fd
		}
		if errno := n.gate.before(ctx, func() Op {
			return Op{Name: "truncate", Path: n.path(""), Off: int64(size), Grow: max(0, int64(size)-n.size(backing))}
		}); errno != 0 {
			return errno
		}
		if err := n.cache.Truncate(n.id(), backing, int64(size)); err != nil {
			return errnoOf(err)
		}
		rest := *in
		rest.Valid &^= fuse.FATTR_SIZE
		in = &rest
	}
	// The loopback's own handle, so that it changes attributes through the
	// descriptor, which works for a file without a name too.
	var loop fs.FileHandle
	if handle != nil {
		loop = handle.loop
	}
	if errno := n.LoopbackNode.Setattr(ctx, loop, in, out); errno != 0 {
		return errno
	}
	n.showCachedSize(n.id(), &out.Size, &out.Blocks)
	return 0
}

// CopyFileRange answers ENOSYS, so that the kernel copies by reads and
// writes through the cache instead of between the backing files.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, len uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if errno := n.gate.before(ctx, func() Op { return Op{Name: "unlink", Path: n.path(name)} }); errno != 0 {
		return errno
	}
	victim, last := lastLink(filepath.Join(n.pathInBacking(), name))
	if errno := n.LoopbackNode.Unlink(ctx, name); errno != 0 {
		return errno
	}
	if last {
		n.cache.Unlink(victim)
	}
	return 0
}

// Rename tells the cache when the rename removed the last name of the file
// it replaced. (The kernel never sends a rename of a file onto one of its
// own names.)
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	parent, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if errno := n.gate.before(ctx, func() Op { return Op{Name: "rename", Path: n.path(name), To: parent.path(newName)} }); errno != 0 {
		return errno
	}
	var victim FileID
	var last bool
	if flags&fs.RENAME_EXCHANGE == 0 {
		victim, last = lastLink(filepath.Join(parent.pathInBacking(), newName))
	}
	if errno := n.LoopbackNode.Rename(ctx, name, parent, newName, flags); errno != 0 {
		return errno
	}
	if last {
		n.cache.Unlink(victim)
	}
	return 0
}

// lastLink returns the file at path and whether path is its last name.
func lastLink(path string) (FileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, false
	}
	return FileID(st.Ino), st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1
}
