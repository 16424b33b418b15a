package lazyfs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mountForTest mounts a layer over a new backing directory, unmounting it
// when tb ends. It skips tb unless it runs as root with /dev/fuse.
func mountForTest(tb testing.TB) (fsys *FS, backing, mnt string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("mounting needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		tb.Skipf("no FUSE: %v", err)
	}
	backing, mnt = tb.TempDir(), tb.TempDir()
	fsys, err := Mount(backing, mnt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := fsys.Unmount(); err != nil {
			tb.Error(err)
		}
		mounts, err := os.ReadFile("/proc/self/mounts")
		if err != nil {
			tb.Error(err)
		}
		if bytes.Contains(mounts, []byte(" "+mnt+" ")) {
			tb.Errorf("%s is still mounted", mnt)
		}
	})
	return fsys, backing, mnt
}

// fileOps writes through the mount with real system calls, failing t on
// any error.
type fileOps struct {
	t   *testing.T
	mnt string
}

func (o fileOps) open(name string, flags int) *os.File {
	o.t.Helper()
	f, err := os.OpenFile(filepath.Join(o.mnt, name), flags, 0o644)
	if err != nil {
		o.t.Fatal(err)
	}
	o.t.Cleanup(func() { f.Close() })
	return f
}

// write writes data to name (created if need be) and closes it, syncing
// it first with sync if sync is not nil.
func (o fileOps) write(name string, flags int, data string, sync func(fd int) error) {
	o.t.Helper()
	f := o.open(name, flags|os.O_WRONLY|os.O_CREATE)
	if _, err := f.WriteString(data); err != nil {
		o.t.Fatal(err)
	}
	if sync != nil {
		if err := sync(int(f.Fd())); err != nil {
			o.t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		o.t.Fatal(err)
	}
}

func (o fileOps) do(err error) {
	o.t.Helper()
	if err != nil {
		o.t.Fatal(err)
	}
}

// expectFiles checks that the regular files under dir are exactly want.
func expectFiles(t *testing.T, where, dir string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		got[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range want {
		if got[name] != data {
			t.Errorf("%s: %s holds %q, want %q", where, name, got[name], data)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected %s", where, name)
		}
	}
}

// TestMountDrop writes through a real mount, fsyncs some files and not
// others, drops, and checks what survived through the mount, in the
// backing directory and in the report.
func TestMountDrop(t *testing.T) {
	fsys, backing, mnt := mountForTest(t)
	o := fileOps{t: t, mnt: mnt}

	o.write("fsynced", 0, "kept", unix.Fsync)
	o.write("fdatasynced", 0, "kept", unix.Fdatasync)
	o.write("unsynced", 0, "lost", nil)
	o.write("o_sync", os.O_SYNC, "kept", nil)     // the kernel fsyncs each write
	o.write("o_dsync", unix.O_DSYNC, "kept", nil) // likewise, fdatasync
	o.write("appended", 0, "kept;", unix.Fsync)
	o.write("appended", os.O_APPEND, "lost;", nil)
	o.write("truncated", 0, "0123456789", unix.Fsync)
	o.do(os.Truncate(filepath.Join(mnt, "truncated"), 4))
	// Replacing a file by renaming a new one over it, without fsyncing the
	// new one: the rename survives, the new contents do not.
	o.write("renamed", 0, "old", unix.Fsync)
	o.write("renamed.tmp", 0, "new", nil)
	o.do(os.Rename(filepath.Join(mnt, "renamed.tmp"), filepath.Join(mnt, "renamed")))
	// A directory fsync makes names durable (they always are here), not
	// the data of the files in it.
	o.do(os.Mkdir(filepath.Join(mnt, "dir"), 0o755))
	o.write("dir/child", 0, "lost", nil)
	o.write("dir/synced", 0, "kept", unix.Fsync)
	dir := o.open("dir", os.O_RDONLY)
	o.do(dir.Sync())
	// A handle open across the drop reads what survived.
	open := o.open("open", os.O_RDWR|os.O_CREATE)
	_, err := open.WriteString("lost")
	o.do(err)

	before := map[string]string{
		"fsynced": "kept", "fdatasynced": "kept", "unsynced": "lost", "o_sync": "kept", "o_dsync": "kept",
		"appended": "kept;lost;", "truncated": "0123", "renamed": "new", "dir/child": "lost", "dir/synced": "kept",
		"open": "lost",
	}
	expectFiles(t, "mount before the drop", mnt, before)
	expectFiles(t, "backing before the drop", backing, map[string]string{
		"fsynced": "kept", "fdatasynced": "kept", "unsynced": "", "o_sync": "kept", "o_dsync": "kept",
		"appended": "kept;", "truncated": "0123456789", "renamed": "", "dir/child": "", "dir/synced": "kept",
		"open": "",
	})

	dropped, err := fsys.Drop()
	if err != nil {
		t.Fatal(err)
	}
	// Before anything else looks the file up again, which would refresh the
	// kernel's view of it anyway.
	buf := make([]byte, 8)
	if n, err := open.ReadAt(buf, 0); n != 0 {
		t.Errorf("a handle open across the drop reads %q (%v), want nothing", buf[:n], err)
	}

	after := map[string]string{
		"fsynced": "kept", "fdatasynced": "kept", "unsynced": "", "o_sync": "kept", "o_dsync": "kept",
		"appended": "kept;", "truncated": "0123456789", "renamed": "", "dir/child": "", "dir/synced": "kept",
		"open": "",
	}
	expectFiles(t, "mount after the drop", mnt, after)
	expectFiles(t, "backing after the drop", backing, after)

	var got []string
	for _, d := range dropped.Files {
		data, err := json.Marshal(d)
		o.do(err)
		// Inode numbers vary from run to run.
		got = append(got, strings.Replace(string(data), `"inode":`+jsonInt(FileID(d.Inode)), `"inode":N`, 1))
	}
	want := []string{
		`{"path":"appended","inode":N,"ranges":[{"offset":5,"length":5}],"durable_size":5,"size_before":10}`,
		`{"path":"dir/child","inode":N,"ranges":[{"offset":0,"length":4}],"durable_size":0,"size_before":4}`,
		`{"path":"open","inode":N,"ranges":[{"offset":0,"length":4}],"durable_size":0,"size_before":4}`,
		`{"path":"renamed","inode":N,"ranges":[{"offset":0,"length":3}],"durable_size":0,"size_before":3}`,
		`{"path":"truncated","inode":N,"durable_size":10,"size_before":4,"truncated_to":4}`,
		`{"path":"unsynced","inode":N,"ranges":[{"offset":0,"length":4}],"durable_size":0,"size_before":4}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dropped:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Writing after the drop starts afresh.
	o.write("unsynced", 0, "again", unix.Fsync)
	expectFiles(t, "backing after a new write", backing, map[string]string{
		"fsynced": "kept", "fdatasynced": "kept", "unsynced": "again", "o_sync": "kept", "o_dsync": "kept",
		"appended": "kept;", "truncated": "0123456789", "renamed": "", "dir/child": "", "dir/synced": "kept",
		"open": "",
	})
}

// TestMountUnlinkedOpenFile checks that a file removed while open keeps
// its cached data for the open handle, and that Drop does not report it.
func TestMountUnlinkedOpenFile(t *testing.T) {
	fsys, _, mnt := mountForTest(t)
	o := fileOps{t: t, mnt: mnt}
	f := o.open("gone", os.O_RDWR|os.O_CREATE)
	_, err := f.WriteString("cached")
	o.do(err)
	o.do(os.Remove(filepath.Join(mnt, "gone")))
	buf := make([]byte, 16)
	n, err := f.ReadAt(buf, 0)
	if string(buf[:n]) != "cached" {
		t.Errorf("the unlinked file reads %q (%v)", buf[:n], err)
	}
	dropped, err := fsys.Drop()
	o.do(err)
	if len(dropped.Files) != 0 {
		t.Errorf("dropped %+v, want nothing", dropped.Files)
	}
	o.do(f.Close())
}

// TestMountOtherUsers checks what the harness relies on: other users (a
// container's) may use the mount (allow_other), and the kernel checks
// their permissions (default_permissions).
func TestMountOtherUsers(t *testing.T) {
	_, _, mnt := mountForTest(t)
	o := fileOps{t: t, mnt: mnt}
	// The test's temporary directories are root's alone; open the path.
	o.do(os.Chmod(filepath.Dir(mnt), 0o755))
	o.do(os.Chmod(mnt, 0o755))
	o.write("readable", 0, "hello", nil)
	nobody := func(script string) *exec.Cmd {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = mnt
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd
	}
	out, err := nobody("cat readable").CombinedOutput()
	if err != nil || string(out) != "hello" {
		t.Errorf("another user reads %q (%v), want %q", out, err, "hello")
	}
	if out, err := nobody("echo x >> readable").CombinedOutput(); err == nil {
		t.Errorf("another user wrote to a file only root may write (%q)", out)
	}
}

// TestMountMmap checks that pages written through a shared mapping are
// cached like writes, and that msync makes them durable. The mapping is
// written by a child process: a page fault on a FUSE file blocks its
// thread in the kernel until the server answers, and when the server is
// this same Go process, a garbage collection that stops the world waits
// on that thread for ever (CI hung so once).
func TestMountMmap(t *testing.T) {
	fsys, backing, mnt := mountForTest(t)
	for _, name := range []string{"msynced", "unsynced"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMmapChild$")
		cmd.Env = append(os.Environ(), "LAZYFS_MMAP_FILE="+filepath.Join(mnt, name))
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("the child writing %s through a mapping: %v\n%s", name, err, out)
		}
	}
	_, err := fsys.Drop()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"msynced": "msynced", "unsynced": "\x00\x00\x00\x00\x00\x00\x00\x00"} {
		data, err := os.ReadFile(filepath.Join(backing, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 4096 || string(data[:len(want)]) != want {
			t.Errorf("%s holds %d bytes starting %q after the drop, want 4096 starting %q", name, len(data), data[:min(len(data), len(want))], want)
		}
	}
}

// TestMmapChild is TestMountMmap's child: it creates the file that
// LAZYFS_MMAP_FILE names, 4096 bytes, fsynced, writes its base name into
// it through a shared mapping, and msyncs the mapping if the name is
// "msynced". Without that variable it does nothing.
func TestMmapChild(t *testing.T) {
	path := os.Getenv("LAZYFS_MMAP_FILE")
	if path == "" {
		t.Skip("run by TestMountMmap")
	}
	o := fileOps{t: t}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	o.do(err)
	o.do(f.Truncate(4096))
	o.do(f.Sync())
	m, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	o.do(err)
	name := filepath.Base(path)
	copy(m, name)
	if name == "msynced" {
		o.do(unix.Msync(m, unix.MS_SYNC))
	}
	o.do(unix.Munmap(m))
	o.do(f.Close())
}

// TestMountSync checks that Sync writes back every file's cached changes,
// in subdirectories and after a rename, and that a drop after it loses
// nothing.
func TestMountSync(t *testing.T) {
	fsys, backing, mnt := mountForTest(t)
	o := fileOps{t: t, mnt: mnt}
	o.do(os.Mkdir(filepath.Join(mnt, "dir"), 0o755))
	o.write("top", 0, "top", nil)
	o.write("dir/child", 0, "child", nil)
	o.write("moved", 0, "moved", nil)
	o.do(os.Rename(filepath.Join(mnt, "moved"), filepath.Join(mnt, "dir/renamed")))
	expectFiles(t, "backing before Sync", backing, map[string]string{"top": "", "dir/child": "", "dir/renamed": ""})
	o.do(fsys.Sync())
	want := map[string]string{"top": "top", "dir/child": "child", "dir/renamed": "moved"}
	expectFiles(t, "backing after Sync", backing, want)
	dropped, err := fsys.Drop()
	o.do(err)
	if len(dropped.Files) != 0 {
		t.Errorf("dropped %+v after Sync, want nothing", dropped.Files)
	}
	expectFiles(t, "mount after Sync and a drop", mnt, want)
}
