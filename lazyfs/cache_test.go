package lazyfs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// backingFile is a real file standing for a file under the mount: the cache
// reads, writes and syncs it as the FUSE layer would its backing file.
type backingFile struct {
	t    *testing.T
	path string
	file *os.File
}

func newBackingFile(t *testing.T, dir, name, durable string) *backingFile {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(durable), 0o644); err != nil {
		t.Fatal(err)
	}
	return openBackingFile(t, path)
}

func openBackingFile(t *testing.T, path string) *backingFile {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &backingFile{t: t, path: path, file: f}
}

func (b *backingFile) fd() backingFD { return backingFD(b.file.Fd()) }

func (b *backingFile) id() FileID {
	st, err := b.file.Stat()
	if err != nil {
		b.t.Fatal(err)
	}
	return FileID(st.Sys().(*syscall.Stat_t).Ino)
}

func (b *backingFile) write(c *Cache, p string, off int64) {
	b.t.Helper()
	if err := c.Write(b.id(), b.fd(), []byte(p), off); err != nil {
		b.t.Fatal(err)
	}
}

func (b *backingFile) truncate(c *Cache, size int64) {
	b.t.Helper()
	if err := c.Truncate(b.id(), b.fd(), size); err != nil {
		b.t.Fatal(err)
	}
}

func (b *backingFile) sync(c *Cache) {
	b.t.Helper()
	if err := c.Sync(b.id(), b.fd()); err != nil {
		b.t.Fatal(err)
	}
}

// visible is the whole file as seen through the mount.
func (b *backingFile) visible(c *Cache) string {
	b.t.Helper()
	size, ok := c.Size(b.id())
	if !ok {
		var err error
		if size, err = b.fd().Size(); err != nil {
			b.t.Fatal(err)
		}
	}
	p := make([]byte, size+10) // asking for more must stop at the end
	n, err := c.Read(b.id(), b.fd(), p, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	if int64(n) != size {
		b.t.Fatalf("read %d bytes of a %d-byte file", n, size)
	}
	return string(p[:n])
}

// durable is the backing file's contents: what a power loss leaves.
func (b *backingFile) durable() string {
	b.t.Helper()
	data, err := os.ReadFile(b.path)
	if err != nil {
		b.t.Fatal(err)
	}
	return string(data)
}

// expect checks what the mount shows and what is durable.
func (b *backingFile) expect(c *Cache, visible, durable string) {
	b.t.Helper()
	if got := b.visible(c); got != visible {
		b.t.Errorf("%s visible: %q, want %q", filepath.Base(b.path), got, visible)
	}
	if got := b.durable(); got != durable {
		b.t.Errorf("%s durable: %q, want %q", filepath.Base(b.path), got, durable)
	}
}

// expectDropped checks Drop's report as JSON, with paths left to the FS.
func expectDropped(t *testing.T, got []DroppedFile, want string) {
	t.Helper()
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != want {
		t.Errorf("dropped:\n got %s\nwant %s", data, want)
	}
}

func TestWriteIsLostWithoutSync(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "f", "durable")
	b.write(c, "XY", 2)
	b.write(c, "tail", 9) // past the end: two zeros between
	b.expect(c, "duXYble\x00\x00tail", "durable")
	dropped := c.Drop()
	b.expect(c, "durable", "durable")
	expectDropped(t, dropped, `[{"path":"","inode":`+jsonInt(b.id())+`,"ranges":[{"offset":2,"length":2},{"offset":9,"length":4}],"durable_size":7,"size_before":13}]`)
}

func TestSyncMakesWritesDurable(t *testing.T) {
	dir := t.TempDir()
	c := NewCache()
	synced, unsynced := newBackingFile(t, dir, "synced", ""), newBackingFile(t, dir, "unsynced", "")
	synced.write(c, "abc", 0)
	unsynced.write(c, "def", 0)
	synced.sync(c)
	synced.expect(c, "abc", "abc")
	unsynced.expect(c, "def", "")
	dropped := c.Drop()
	synced.expect(c, "abc", "abc")
	unsynced.expect(c, "", "")
	expectDropped(t, dropped, `[{"path":"","inode":`+jsonInt(unsynced.id())+`,"ranges":[{"offset":0,"length":3}],"durable_size":0,"size_before":3}]`)
}

// TestSyncLargeWrite syncs more than a flush writes in one call, from an
// offset inside a block.
func TestSyncLargeWrite(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "f", "head")
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*flushChunk/16+1)
	b.write(c, string(data), 3)
	want := "hea" + string(data)
	b.sync(c)
	b.expect(c, want, want)
}

func TestWriteAfterSyncIsLost(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "log", "")
	b.write(c, "one;", 0)
	b.sync(c)
	b.write(c, "two;", 4)
	b.write(c, "2", 4) // over the un-synced write
	b.expect(c, "one;2wo;", "one;")
	dropped := c.Drop()
	b.expect(c, "one;", "one;")
	expectDropped(t, dropped, `[{"path":"","inode":`+jsonInt(b.id())+`,"ranges":[{"offset":4,"length":4}],"durable_size":4,"size_before":8}]`)
}

func TestOverlappingWritesMerge(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "f", "0123456789")
	b.write(c, "aa", 1)
	b.write(c, "bb", 6)
	b.write(c, "c", 4)
	b.write(c, "dddd", 2) // joins all three
	b.expect(c, "0addddbb89", "0123456789")
	expectDropped(t, c.Drop(), `[{"path":"","inode":`+jsonInt(b.id())+`,"ranges":[{"offset":1,"length":7}],"durable_size":10,"size_before":10}]`)
}

func TestTruncateIsLostWithoutSync(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "f", "0123456789")
	b.truncate(c, 4)
	b.expect(c, "0123", "0123456789")
	// Growing again shows zeros, not the durable bytes the truncate cut.
	b.write(c, "x", 6)
	b.expect(c, "0123\x00\x00x", "0123456789")
	dropped := c.Drop()
	b.expect(c, "0123456789", "0123456789")
	expectDropped(t, dropped, `[{"path":"","inode":`+jsonInt(b.id())+`,"ranges":[{"offset":6,"length":1}],"durable_size":10,"size_before":7,"truncated_to":4}]`)
}

func TestTruncateSynced(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "f", "0123456789")
	b.write(c, "abcdef", 2)
	b.truncate(c, 4) // cuts the write too
	b.truncate(c, 6) // grows with zeros
	b.expect(c, "01ab\x00\x00", "0123456789")
	b.sync(c)
	b.expect(c, "01ab\x00\x00", "01ab\x00\x00")
	expectDropped(t, c.Drop(), `[]`)
}

func TestExtendingTruncateIsLostWithoutSync(t *testing.T) {
	c, b := NewCache(), newBackingFile(t, t.TempDir(), "f", "ab")
	b.truncate(c, 5)
	b.expect(c, "ab\x00\x00\x00", "ab")
	expectDropped(t, c.Drop(), `[{"path":"","inode":`+jsonInt(b.id())+`,"durable_size":2,"size_before":5}]`)
	b.expect(c, "ab", "ab")
}

// The cache knows a file by inode: un-synced data follows it to its new
// name, and a rename makes nothing durable.
func TestRenameKeepsCachedDataWithTheFile(t *testing.T) {
	dir := t.TempDir()
	c := NewCache()
	lost, kept := newBackingFile(t, dir, "lost.tmp", "old"), newBackingFile(t, dir, "kept.tmp", "old")
	lost.write(c, "new", 0)
	kept.write(c, "new", 0)
	for _, name := range []string{"lost", "kept"} {
		if err := os.Rename(filepath.Join(dir, name+".tmp"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	lost, renamed := openBackingFile(t, filepath.Join(dir, "lost")), openBackingFile(t, filepath.Join(dir, "kept"))
	lost.expect(c, "new", "old")
	renamed.expect(c, "new", "old")
	renamed.sync(c) // through a handle opened under the new name
	renamed.expect(c, "new", "new")
	c.Drop()
	lost.expect(c, "old", "old")
	renamed.expect(c, "new", "new")
}

// Once a file's last name is gone, its cached data serves the handles still
// open, is forgotten with the last one, and is never reported by Drop.
func TestUnlinkForgetsCachedDataWithTheLastHandle(t *testing.T) {
	dir := t.TempDir()
	c := NewCache()
	open, closed := newBackingFile(t, dir, "open", ""), newBackingFile(t, dir, "closed", "")
	c.Open(open.id())
	open.write(c, "still readable", 0)
	closed.write(c, "gone", 0)
	for _, b := range []*backingFile{open, closed} {
		if err := os.Remove(b.path); err != nil {
			t.Fatal(err)
		}
		c.Unlink(b.id())
	}
	if _, ok := c.Size(closed.id()); ok {
		t.Error("a file without name or handle still has cached data")
	}
	if got := open.visible(c); got != "still readable" {
		t.Errorf("an open unlinked file reads %q", got)
	}
	c.Close(open.id())
	if _, ok := c.Size(open.id()); ok {
		t.Error("an unlinked file still has cached data after its last handle was closed")
	}
	expectDropped(t, c.Drop(), `[]`)
}

func TestDropReportsOnlyFilesThatChanged(t *testing.T) {
	dir := t.TempDir()
	c := NewCache()
	same, synced := newBackingFile(t, dir, "same", "abc"), newBackingFile(t, dir, "synced", "")
	same.truncate(c, 3) // its own size: nothing to lose
	synced.write(c, "x", 0)
	synced.sync(c)
	c.Open(synced.id()) // an open handle keeps the file known, not reported
	expectDropped(t, c.Drop(), `[]`)
}

// TestDroppedJSON shows the report the run's history records.
func TestDroppedJSON(t *testing.T) {
	truncatedTo := int64(4)
	d := Dropped{Files: []DroppedFile{{
		Path: "member/wal/0.wal", Inode: 12,
		Ranges:      []ByteRange{{Offset: 4096, Length: 512}},
		DurableSize: 8192, SizeBefore: 4608, TruncatedTo: &truncatedTo,
	}}}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"files":[{"path":"member/wal/0.wal","inode":12,"ranges":[{"offset":4096,"length":512}],"durable_size":8192,"size_before":4608,"truncated_to":4}]}`
	if !bytes.Equal(data, []byte(want)) {
		t.Errorf("got %s\nwant %s", data, want)
	}
}

func jsonInt(id FileID) string {
	data, _ := json.Marshal(uint64(id))
	return string(data)
}

// TestCacheConcurrentUse has goroutines write, read, sync, open and close
// their own files at once, and then do it again while others drop, for the
// race detector and to catch deadlocks; without drops, each checks what it
// reads and what becomes durable.
func TestCacheConcurrentUse(t *testing.T) {
	c := NewCache()
	use := func(id FileID, check bool) {
		f, written := &memBacking{}, []byte(nil)
		for i := range 200 {
			c.Open(id)
			p := fmt.Appendf(nil, "%d:%d;", id, i)
			if err := c.Write(id, f, p, int64(len(written))); err != nil {
				t.Error(err)
				return
			}
			written = append(written, p...)
			if i%10 == 0 {
				if err := c.Sync(id, f); err != nil {
					t.Error(err)
					return
				}
			}
			got := make([]byte, len(written))
			n, err := c.Read(id, f, got, 0)
			if check && (err != nil || !bytes.Equal(got[:n], written)) {
				t.Errorf("file %d reads %q (%v), want %q", id, got[:n], err, written)
				return
			}
			c.Close(id)
		}
		if err := c.Sync(id, f); err != nil {
			t.Error(err)
		}
		if check && !bytes.Equal(f.data, written) {
			t.Errorf("file %d durable %q, want %q", id, f.data, written)
		}
	}
	var wg sync.WaitGroup
	for id := range FileID(8) {
		wg.Go(func() { use(id, true) })
	}
	wg.Wait()
	for id := range FileID(8) {
		wg.Go(func() { use(100+id, false) })
	}
	wg.Go(func() {
		for range 200 {
			c.Drop()
		}
	})
	wg.Wait()
	expectDropped(t, c.Drop(), `[]`)
}
