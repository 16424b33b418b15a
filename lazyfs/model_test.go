package lazyfs

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// modelFile is the brute-force model of one file: its whole durable and
// visible contents.
type modelFile struct {
	durable, visible []byte
}

// memBacking is a backing file in memory, so that a thousand random
// sequences run in seconds; the other tests use real backing files.
type memBacking struct {
	data []byte
}

func (b *memBacking) Size() (int64, error) { return int64(len(b.data)), nil }

func (b *memBacking) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, b.data[min(off, int64(len(b.data))):])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (b *memBacking) WriteAt(p []byte, off int64) (int, error) {
	b.data = resize(b.data, max(int64(len(b.data)), off+int64(len(p))))
	return copy(b.data[off:], p), nil
}

func (b *memBacking) Truncate(size int64) error {
	b.data = resize(b.data, size)
	return nil
}

func (b *memBacking) Sync() error { return nil }

// TestCacheAgreesWithModel runs random sequences of writes, truncates,
// syncs, reads and drops over a few files, through the cache and through
// the model, and checks that reads, sizes, the backing files after each
// drop and the drop reports agree with the model.
func TestCacheAgreesWithModel(t *testing.T) {
	sequences, ops := 1000, 300
	if testing.Short() {
		sequences = 100
	}
	for seed := range uint64(sequences) {
		rng := rand.New(rand.NewPCG(seed, 0))
		c := NewCache()
		files := make([]*memBacking, 3)
		models := make([]*modelFile, len(files))
		for i := range files {
			durable := randomBytes(rng, int(randomOffset(rng, 3*blockSize)))
			files[i] = &memBacking{data: bytes.Clone(durable)}
			models[i] = &modelFile{durable: durable, visible: bytes.Clone(durable)}
		}
		fail := func(step, i int, format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, step %d, file %d: %s", seed, step, i, fmt.Sprintf(format, args...))
		}
		for step := range ops {
			i := rng.IntN(len(files))
			id, f, m := FileID(i), files[i], models[i]
			var err error
			switch op := rng.IntN(100); {
			case op < 40:
				p, off := randomBytes(rng, randomLength(rng)), randomOffset(rng, len(m.visible)+24)
				err = c.Write(id, f, p, off)
				if len(p) > 0 {
					m.visible = resize(m.visible, max(int64(len(m.visible)), off+int64(len(p))))
					copy(m.visible[off:], p)
				}
			case op < 55:
				size := randomOffset(rng, len(m.visible)+24)
				err = c.Truncate(id, f, size)
				m.visible = resize(m.visible, size)
			case op < 65:
				err = c.Sync(id, f)
				m.durable = bytes.Clone(m.visible)
			case op < 95:
				off, n := randomOffset(rng, len(m.visible)+8), randomLength(rng)
				p := make([]byte, n)
				var got int
				got, err = c.Read(id, f, p, off)
				want := m.visible[min(off, int64(len(m.visible))):min(off+int64(n), int64(len(m.visible)))]
				if !bytes.Equal(p[:got], want) {
					fail(step, i, "read %d at %d: %q, want %q", n, off, p[:got], want)
				}
				if size, ok := c.Size(id); ok && size != int64(len(m.visible)) {
					fail(step, i, "size %d, want %d", size, len(m.visible))
				}
			default:
				if err := checkDrop(c, files, models); err != nil {
					fail(step, i, "%v", err)
				}
			}
			if err != nil {
				fail(step, i, "%v", err)
			}
		}
		if err := checkDrop(c, files, models); err != nil {
			fail(ops, 0, "%v", err)
		}
	}
}

// checkDrop drops c's changes and checks: every backing file holds its
// durable contents, every file reads them again, and the report explains
// every difference between what was visible and what is durable.
func checkDrop(c *Cache, files []*memBacking, models []*modelFile) error {
	reports := make(map[uint64]DroppedFile)
	for _, d := range c.Drop() {
		reports[d.Inode] = d
	}
	for i, f := range files {
		m := models[i]
		if !bytes.Equal(f.data, m.durable) {
			return fmt.Errorf("file %d: durable %q, want %q", i, f.data, m.durable)
		}
		if d, reported := reports[uint64(i)]; !reported {
			if !bytes.Equal(m.visible, m.durable) {
				return fmt.Errorf("file %d: lost %q for %q and is not reported", i, m.visible, m.durable)
			}
		} else if err := explains(d, m); err != nil {
			return fmt.Errorf("file %d: report %+v: %v", i, d, err)
		}
		m.visible = bytes.Clone(m.durable)
		p := make([]byte, len(m.visible)+1)
		n, err := c.Read(FileID(i), f, p, 0)
		if err != nil || !bytes.Equal(p[:n], m.visible) {
			return fmt.Errorf("file %d: reads %q (%v) after the drop, want %q", i, p[:n], err, m.visible)
		}
	}
	return nil
}

// explains checks that a report accounts for every visible byte that is
// not durable: it was written (in a range), or lies where the file grew
// past its durable size, or where a truncate cut the durable contents.
func explains(d DroppedFile, m *modelFile) error {
	if d.SizeBefore != int64(len(m.visible)) || d.DurableSize != int64(len(m.durable)) {
		return fmt.Errorf("sizes %d before, %d durable; want %d, %d", d.SizeBefore, d.DurableSize, len(m.visible), len(m.durable))
	}
	end := int64(-1)
	for _, r := range d.Ranges {
		if r.Length <= 0 || r.Offset <= end || r.Offset+r.Length > d.SizeBefore {
			return fmt.Errorf("range %+v is empty, out of order, touches the one before or passes the end", r)
		}
		end = r.Offset + r.Length
	}
	cut := d.DurableSize
	if d.TruncatedTo != nil {
		cut = *d.TruncatedTo
	}
	for i := range int64(len(m.visible)) {
		written := false
		for _, r := range d.Ranges {
			written = written || (r.Offset <= i && i < r.Offset+r.Length)
		}
		if !written && i < cut && m.visible[i] != m.durable[i] {
			return fmt.Errorf("byte %d changed from %q to %q, unreported", i, m.durable[i], m.visible[i])
		}
		if !written && i >= cut && m.visible[i] != 0 {
			return fmt.Errorf("byte %d past the durable contents is %q, not written and not zero", i, m.visible[i])
		}
	}
	return nil
}

// randomOffset returns an offset below limit, often next to a multiple of
// blockSize, where the cache splits what it keeps.
func randomOffset(rng *rand.Rand, limit int) int64 {
	if rng.IntN(2) == 0 {
		return int64(rng.IntN(limit))
	}
	near := rng.IntN(limit/blockSize+1)*blockSize + rng.IntN(17) - 8
	return int64(min(max(near, 0), limit-1))
}

// randomLength returns a length for a write or a read: mostly a few bytes,
// sometimes more than a block.
func randomLength(rng *rand.Rand) int {
	if rng.IntN(5) == 0 {
		return rng.IntN(2*blockSize + 16)
	}
	return rng.IntN(24)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte('a' + rng.IntN(26))
	}
	return p
}

// resize cuts p to size, or grows it with zeros.
func resize(p []byte, size int64) []byte {
	if size <= int64(len(p)) {
		return p[:size]
	}
	return append(p, make([]byte, size-int64(len(p)))...)
}
