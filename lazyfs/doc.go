// Package lazyfs is a FUSE file system over a backing directory that keeps
// what is written to files in its own memory until the file is fsynced, so
// that Drop can play a power loss: every byte never fsynced is gone, as in
// LazyFS (github.com/dsrhaslab/lazyfs) after "lazyfs::clear-cache".
//
// # Data: cached until fsync
//
// The layer caches, per file, the bytes written (write, pwrite, writev, and
// pages written back from a shared mmap) and the size changes (truncate,
// ftruncate, open with O_TRUNC, writes past the end). Reads, stat and lseek
// through the mount see the cached state; the backing file does not change.
//
// fsync or fdatasync on any handle of a file writes all of the file's cached
// changes to the backing file, fsyncs the backing file and forgets them; from
// then on they survive Drop. fdatasync does exactly what fsync does. Writes
// to a file opened with O_SYNC or O_DSYNC, and msync, are durable too: the
// kernel turns them into an fsync. Closing a file makes nothing durable
// (POSIX does not promise it either), and sync(2) and syncfs(2) do not reach
// a FUSE file system as an fsync of each file, so they make nothing durable
// here.
//
// # Metadata: passed through, never dropped
//
// Creating, linking, renaming and removing files and directories, and
// changing modes, owners, times and extended attributes, go straight to the
// backing directory and are never undone by Drop. That is what LazyFS does
// (it caches contents and sizes only). It is stronger than ext4, where a new
// or renamed name is only sure to survive a crash once its parent directory
// is fsynced, so this layer cannot catch a missing directory fsync. A
// directory fsync is passed to the backing directory and changes nothing in
// what Drop discards. A file created and never fsynced survives Drop with
// its durable contents, empty for a new file: one of the outcomes ext4
// allows too.
//
// Files are identified by inode number, so cached data follows a file that
// is renamed or hard-linked. Renaming makes nothing durable (there is no
// flush-on-replace heuristic like ext4's auto_da_alloc): a file written,
// renamed over another and never fsynced has, after Drop, its durable
// contents (none, if new) under the new name: the layer catches a file
// replaced by rename without an fsync first.
// When a file's last name is removed (unlink, or a rename over it), its
// cached data stays readable through the handles still open and is
// forgotten when the last one is closed; Drop never reports it, since no
// name leads to it after a crash.
//
// # Drop
//
// Drop discards every cached change, invalidates the kernel's caches of the
// files it changed, and returns a Dropped: for each file with a name, the
// byte ranges written and not synced, the size it has now (its durable
// size), the size it had before, and how far a truncate had cut it below its
// durable size (the cut tail is back). Drop is atomic with respect to the
// layer's own operations, but is meant to run while nothing writes through
// the mount (the node's process is killed first): pages dirtied through a
// shared mapping that the kernel has not yet handed to the layer would
// survive it.
//
// # Not cached, not supported, limits
//
// mtime and ctime are the backing file's: cached writes do not change them.
// fallocate answers EOPNOTSUPP (callers fall back to ftruncate or writing
// zeros), copy_file_range falls back to reads and writes through the cache,
// and O_TMPFILE answers EOPNOTSUPP, since such a file could never be linked
// into the tree through the loopback. File locks are kept by the kernel.
//
// Nothing is evicted: un-synced data stays in memory until fsync or Drop
// (LazyFS with apply_eviction=false). The backing directory must be one file
// system, and nothing but the mount may change it while it is mounted.
// Unmount writes nothing back: un-synced data is lost as by Drop.
package lazyfs
