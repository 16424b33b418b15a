package lazyfs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkWrite writes blocks one after the other to a file, fsyncing
// after each or not, directly in a directory of the backing file system
// and through a mount: what the layer costs a database's log.
func BenchmarkWrite(b *testing.B) {
	for _, fsync := range []bool{true, false} {
		for _, size := range []int{4 << 10, 64 << 10} {
			name := fmt.Sprintf("%dKiB", size>>10)
			if fsync {
				name += "+fsync"
			}
			b.Run(name+"/backing", func(b *testing.B) { writeBlocks(b, b.TempDir(), size, fsync) })
			b.Run(name+"/lazyfs", func(b *testing.B) {
				_, _, mnt := mountForTest(b)
				writeBlocks(b, mnt, size, fsync)
			})
			// A gate that lets everything by: what a disk fault costs
			// the operations it does not pick.
			b.Run(name+"/lazyfs+gate", func(b *testing.B) {
				fsys, _, mnt := mountForTest(b)
				fsys.SetGate(openGate{})
				writeBlocks(b, mnt, size, fsync)
			})
		}
	}
}

// writeBlocks writes blocks of size bytes one after the other, starting
// over every 64 MiB, so that the layer's cache stays bounded when nothing
// is fsynced.
func writeBlocks(b *testing.B, dir string, size int, fsync bool) {
	f, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	block := bytes.Repeat([]byte{'x'}, size)
	b.SetBytes(int64(size))
	var off int64
	for b.Loop() {
		if _, err := f.WriteAt(block, off); err != nil {
			b.Fatal(err)
		}
		off = (off + int64(size)) % (64 << 20)
		if !fsync {
			continue
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// openGate lets every operation by.
type openGate struct{}

func (openGate) Before(context.Context, Op) syscall.Errno { return 0 }
