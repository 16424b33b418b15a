package lazyfs

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
)

// FileID identifies a file: its backing inode number, which stays the same
// through renames and is shared by hard links.
type FileID uint64

// Sizer reports a backing file's size.
type Sizer interface {
	Size() (int64, error)
}

// Backing is a backing file as the cache reads, writes and syncs it.
type Backing interface {
	Sizer
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Sync() error
}

// Cache holds the un-synced changes of every file of one mount. It knows
// nothing of FUSE: callers pass the backing file an operation needs.
type Cache struct {
	// gate makes Drop atomic: every operation holds it shared, Drop holds
	// it exclusively, so no operation is ever half done when Drop runs.
	gate sync.RWMutex
	// mu guards files. Lock order: an entry's mu before mu, never after.
	mu    sync.Mutex
	files map[FileID]*entry
}

// entry is what the cache knows of one file: its open handles, whether it
// still has a name, and its un-synced changes. It is removed from the map
// once it holds nothing worth keeping.
type entry struct {
	mu       sync.Mutex
	removed  bool // no longer in the map: look the file up again
	handles  int
	unlinked bool
	pending  *changes // nil when the backing file is all there is
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{files: make(map[FileID]*entry)}
}

// lock returns id's entry locked, creating it if create is set; nil if it
// has none and create is not set.
func (c *Cache) lock(id FileID, create bool) *entry {
	for {
		c.mu.Lock()
		e := c.files[id]
		if e == nil && create {
			e = &entry{}
			c.files[id] = e
		}
		c.mu.Unlock()
		if e == nil {
			return nil
		}
		e.mu.Lock()
		if !e.removed {
			return e
		}
		e.mu.Unlock()
	}
}

// unlock unlocks e, first removing it from the map if it holds nothing
// worth keeping: no handle is open and it has no changes, or the file has
// no name left, so its changes can never be seen again.
func (c *Cache) unlock(id FileID, e *entry) {
	if e.handles == 0 && (e.pending == nil || e.unlinked) {
		c.mu.Lock()
		delete(c.files, id)
		c.mu.Unlock()
		e.removed = true
	}
	e.mu.Unlock()
}

// Open records that a handle to the file was opened.
func (c *Cache) Open(id FileID) {
	c.gate.RLock()
	defer c.gate.RUnlock()
	e := c.lock(id, true)
	e.handles++
	c.unlock(id, e)
}

// Close records that a handle to the file was closed. Closing the last
// handle of a file without a name forgets its changes.
func (c *Cache) Close(id FileID) {
	c.gate.RLock()
	defer c.gate.RUnlock()
	if e := c.lock(id, false); e != nil {
		e.handles--
		c.unlock(id, e)
	}
}

// Unlink records that the file's last name was removed: its changes are
// forgotten now if no handle is open, else when the last one is closed.
func (c *Cache) Unlink(id FileID) {
	c.gate.RLock()
	defer c.gate.RUnlock()
	if e := c.lock(id, false); e != nil {
		e.unlinked = true
		c.unlock(id, e)
	}
}

// Write caches p as written at off. backing gives the file's durable size
// when it has no changes yet.
func (c *Cache) Write(id FileID, backing Sizer, p []byte, off int64) error {
	return c.change(id, backing, func(ch *changes) { ch.write(p, off) })
}

// Truncate caches a change of the file's size.
func (c *Cache) Truncate(id FileID, backing Sizer, size int64) error {
	return c.change(id, backing, func(ch *changes) { ch.truncate(size) })
}

func (c *Cache) change(id FileID, backing Sizer, apply func(*changes)) error {
	c.gate.RLock()
	defer c.gate.RUnlock()
	e := c.lock(id, true)
	defer c.unlock(id, e)
	if e.pending == nil {
		size, err := backing.Size()
		if err != nil {
			return fmt.Errorf("size of backing file: %w", err)
		}
		e.pending = newChanges(size)
	}
	apply(e.pending)
	return nil
}

// Read reads the file as seen through the mount into p from off: backing's
// bytes under the cached changes. It returns how many bytes it read, fewer
// than len(p) only at the end of the file.
func (c *Cache) Read(id FileID, backing io.ReaderAt, p []byte, off int64) (int, error) {
	c.gate.RLock()
	defer c.gate.RUnlock()
	e := c.lock(id, false)
	if e == nil {
		return readBacking(backing, p, off)
	}
	defer c.unlock(id, e)
	if e.pending == nil {
		return readBacking(backing, p, off)
	}
	return e.pending.readAt(backing, p, off)
}

// readBacking reads an unchanged file: backing as it is.
func readBacking(backing io.ReaderAt, p []byte, off int64) (int, error) {
	n, err := backing.ReadAt(p, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// Size returns the file's size as seen through the mount, and false if it
// has no cached changes (then it is the backing file's size).
func (c *Cache) Size(id FileID) (int64, bool) {
	c.gate.RLock()
	defer c.gate.RUnlock()
	e := c.lock(id, false)
	if e == nil {
		return 0, false
	}
	defer c.unlock(id, e)
	if e.pending == nil {
		return 0, false
	}
	return e.pending.size, true
}

// Sync makes the file durable: it writes its cached changes to backing,
// syncs backing and forgets the changes. Other files' operations go on
// meanwhile; this file's wait. After a failed write the changes stay, and
// the backing file may hold part of them, as a disk may after a failed
// fsync.
func (c *Cache) Sync(id FileID, backing Backing) error {
	c.gate.RLock()
	defer c.gate.RUnlock()
	if e := c.lock(id, false); e != nil {
		var err error
		if e.pending != nil {
			if err = e.pending.flush(backing); err == nil {
				e.pending = nil
			}
		}
		c.unlock(id, e)
		if err != nil {
			return err
		}
	}
	if err := backing.Sync(); err != nil {
		return fmt.Errorf("sync backing file: %w", err)
	}
	return nil
}

// Pending lists the files with cached changes that still have a name, in
// inode order.
func (c *Cache) Pending() []FileID {
	c.gate.RLock()
	defer c.gate.RUnlock()
	c.mu.Lock()
	ids := make([]FileID, 0, len(c.files))
	for id := range c.files {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return slices.DeleteFunc(ids, func(id FileID) bool {
		e := c.lock(id, false)
		if e == nil {
			return true
		}
		defer c.unlock(id, e)
		return e.pending == nil || e.unlinked
	})
}

// Drop discards every cached change, as a power loss would, and returns
// what it discarded from files that still have a name, in inode order,
// without paths.
func (c *Cache) Drop() []DroppedFile {
	c.gate.Lock()
	defer c.gate.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	dropped := []DroppedFile{} // a list, even empty, in JSON
	for id, e := range c.files {
		// No operation runs, so no entry lock is held: e is ours.
		if e.pending != nil && !e.unlinked && e.pending.changesAnything() {
			dropped = append(dropped, e.pending.dropped(id))
		}
		e.pending = nil
		if e.handles == 0 {
			delete(c.files, id)
			e.removed = true
		}
	}
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].Inode < dropped[j].Inode })
	return dropped
}
