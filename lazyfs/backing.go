package lazyfs

import (
	"io"

	"golang.org/x/sys/unix"
)

// backingFD is a Backing over an open file descriptor of the backing file.
// It does not own the descriptor.
type backingFD int

func (fd backingFD) Size() (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

// ReadAt reads until p is full or the file ends, as io.ReaderAt must.
func (fd backingFD) ReadAt(p []byte, off int64) (int, error) {
	return whole(unix.Pread, int(fd), p, off, io.EOF)
}

// WriteAt writes all of p, as io.WriterAt must.
func (fd backingFD) WriteAt(p []byte, off int64) (int, error) {
	return whole(unix.Pwrite, int(fd), p, off, io.ErrShortWrite)
}

// whole repeats op (pread or pwrite) from off until all of p is done,
// again after EINTR; a call that moves no byte ends it with short.
func whole(op func(int, []byte, int64) (int, error), fd int, p []byte, off int64, short error) (int, error) {
	n := 0
	for n < len(p) {
		m, err := op(fd, p[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, short
		}
		n += m
	}
	return n, nil
}

func (fd backingFD) Truncate(size int64) error { return unix.Ftruncate(int(fd), size) }

func (fd backingFD) Sync() error { return unix.Fsync(int(fd)) }

// backingPath is a Sizer of the backing file at a path, for a truncate
// that comes without an open handle.
type backingPath string

func (p backingPath) Size() (int64, error) {
	var st unix.Stat_t
	if err := unix.Lstat(string(p), &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}
