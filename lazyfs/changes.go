package lazyfs

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// blockSize is the size of the blocks written bytes are kept in: a memory
// page, like the kernel's page cache and LazyFS's default. Fixed blocks
// keep a long append from reallocating and copying one ever larger buffer.
const blockSize = 4096

type block = [blockSize]byte

// flushChunk is the most a flush writes to the backing file in one call.
const flushChunk = 1 << 20

// changes are one file's un-synced changes over its backing file. The file
// as seen through the mount is, byte by byte: the written bytes where
// written says there are some; else the backing file's bytes below
// visiblePrefix; else zeros; all cut at size.
type changes struct {
	// durableSize is the backing file's size, which only a flush changes.
	durableSize int64
	// visiblePrefix is how much of the backing file still shows: a
	// truncate below durableSize hides the rest, even once the file grows
	// again, because the kernel's truncate zeroes what it cuts.
	visiblePrefix int64
	// size is the file's size as seen through the mount.
	size int64
	// written are the ranges written, sorted, neither overlapping nor
	// touching (touching ones are merged).
	written []span
	// blocks hold the written bytes, by offset/blockSize. Bytes of a block
	// outside written mean nothing.
	blocks map[int64]*block
}

// span is the bytes from off up to end.
type span struct{ off, end int64 }

func newChanges(durableSize int64) *changes {
	return &changes{durableSize: durableSize, visiblePrefix: durableSize, size: durableSize, blocks: make(map[int64]*block)}
}

// write records p at off, over whatever was written there before.
func (c *changes) write(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	end := off + int64(len(p))
	for pos := off; pos < end; {
		b := c.blocks[pos/blockSize]
		if b == nil {
			b = new(block)
			c.blocks[pos/blockSize] = b
		}
		pos += int64(copy(b[pos%blockSize:], p[pos-off:]))
	}
	// Spans i to j-1 overlap or touch [off, end); with it they make one.
	i := sort.Search(len(c.written), func(k int) bool { return c.written[k].end >= off })
	j := sort.Search(len(c.written), func(k int) bool { return c.written[k].off > end })
	if i == j {
		c.written = append(c.written, span{})
		copy(c.written[i+1:], c.written[i:])
		c.written[i] = span{off, end}
	} else {
		c.written[i] = span{min(c.written[i].off, off), max(c.written[j-1].end, end)}
		c.written = append(c.written[:i+1], c.written[j:]...)
	}
	c.size = max(c.size, end)
}

// truncate sets the size, cutting what was written at or past it.
func (c *changes) truncate(size int64) {
	c.visiblePrefix = min(c.visiblePrefix, size)
	i := sort.Search(len(c.written), func(k int) bool { return c.written[k].end > size })
	if i < len(c.written) && c.written[i].off < size {
		c.written[i].end = size
		i++
	}
	c.written = c.written[:i]
	for index := range c.blocks {
		if index*blockSize >= size {
			delete(c.blocks, index)
		}
	}
	c.size = size
}

// copyWritten copies the written bytes from off into p, which they must
// fill.
func (c *changes) copyWritten(p []byte, off int64) {
	for n := 0; n < len(p); {
		pos := off + int64(n)
		n += copy(p[n:], c.blocks[pos/blockSize][pos%blockSize:])
	}
}

// readAt reads the file as seen through the mount into p from off, reading
// the backing file from backing. It returns how many bytes it read, fewer
// than len(p) only at the end of the file.
func (c *changes) readAt(backing io.ReaderAt, p []byte, off int64) (int, error) {
	if off >= c.size {
		return 0, nil
	}
	p = p[:min(int64(len(p)), c.size-off)]
	fromBacking := max(0, min(int64(len(p)), c.visiblePrefix-off))
	if fromBacking > 0 {
		n, err := backing.ReadAt(p[:fromBacking], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if int64(n) < fromBacking {
			return 0, fmt.Errorf("backing file is %d bytes shorter than the %d bytes known durable", fromBacking-int64(n), c.durableSize)
		}
	}
	clear(p[fromBacking:])
	end := off + int64(len(p))
	i := sort.Search(len(c.written), func(k int) bool { return c.written[k].end > off })
	for _, s := range c.written[i:] {
		if s.off >= end {
			break
		}
		from, to := max(s.off, off), min(s.end, end)
		c.copyWritten(p[from-off:to-off], from)
	}
	return len(p), nil
}

// flush makes the backing file what the mount shows, without syncing it.
func (c *changes) flush(backing Backing) error {
	if c.visiblePrefix < c.durableSize {
		if err := backing.Truncate(c.visiblePrefix); err != nil {
			return fmt.Errorf("truncate backing file to %d: %w", c.visiblePrefix, err)
		}
	}
	written := c.visiblePrefix
	var chunk []byte
	for _, s := range c.written {
		// Up to flushChunk bytes per write call, rather than one call per
		// block: a call costs more than copying a block.
		for pos := s.off; pos < s.end; pos += int64(len(chunk)) {
			n := min(s.end-pos, flushChunk)
			if int64(cap(chunk)) < n {
				chunk = make([]byte, n)
			}
			chunk = chunk[:n]
			c.copyWritten(chunk, pos)
			if _, err := backing.WriteAt(chunk, pos); err != nil {
				return fmt.Errorf("write %d bytes at %d to backing file: %w", n, pos, err)
			}
		}
		written = max(written, s.end)
	}
	if written != c.size {
		if err := backing.Truncate(c.size); err != nil {
			return fmt.Errorf("truncate backing file to %d: %w", c.size, err)
		}
	}
	return nil
}

// changesAnything reports whether the file as seen through the mount may
// differ from the backing file.
func (c *changes) changesAnything() bool {
	return len(c.written) > 0 || c.size != c.durableSize || c.visiblePrefix != c.durableSize
}

// dropped describes the changes as lost.
func (c *changes) dropped(id FileID) DroppedFile {
	d := DroppedFile{Inode: uint64(id), DurableSize: c.durableSize, SizeBefore: c.size}
	for _, s := range c.written {
		d.Ranges = append(d.Ranges, ByteRange{Offset: s.off, Length: s.end - s.off})
	}
	if c.visiblePrefix < c.durableSize {
		truncatedTo := c.visiblePrefix
		d.TruncatedTo = &truncatedTo
	}
	return d
}
