//go:build linux && amd64

// Package vdsoclock shifts the clocks that one process reads, and no other
// process's, as Chaos Mesh's TimeChaos does. The processes of a run share
// the host's kernel clock, so setting it would move every node and the
// harness; an LD_PRELOAD library never reaches a Go program, which reads
// the clock through the vDSO, not libc.
//
// Install stops every thread of the process with ptrace, maps a page into
// it holding fake.S (replacements of clock_gettime, gettimeofday and time
// that ask the kernel with a system call and add an offset), and writes a
// jump to them over the entries of the process's vDSO. Set changes the
// offset by writing the page, without stopping the process. Remove puts
// the vDSO entries back; the page stays, unused.
package vdsoclock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Patch is a process whose vDSO clock entries lead to the injected code.
type Patch struct {
	Pid  int
	page uint64 // where the code is mapped in the process
}

// Install patches process pid, with no offset yet (see Set).
func Install(pid int) (*Patch, error) {
	v, img, err := findVDSO(pid)
	if err != nil {
		return nil, err
	}
	if patched(v, img) {
		return nil, fmt.Errorf("process %d is already patched", pid)
	}
	p := &Patch{Pid: pid}
	err = withStopped(pid, func(s *stopped) error {
		page, err := s.syscall(v.syscall, syscall.SYS_MMAP, 0, uint64(syscall.Getpagesize()),
			syscall.PROT_READ|syscall.PROT_EXEC, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS, ^uint64(0), 0)
		if err != nil {
			return fmt.Errorf("mapping a page in process %d: %w", pid, err)
		}
		if page > ^uint64(4095) { // -errno
			return fmt.Errorf("mapping a page in process %d: %w", pid, syscall.Errno(-page))
		}
		p.page = page
		if err := writeMem(pid, page, fakeCode); err != nil {
			return fmt.Errorf("writing the clock code into process %d: %w", pid, err)
		}
		if err := s.stepOutOf(v.entries); err != nil {
			return err
		}
		for i, e := range v.entries {
			if err := writeMem(pid, e, jump(page+entrySymbols[i].fake)); err != nil {
				return fmt.Errorf("patching the vDSO of process %d: %w", pid, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, Remove(pid))
	}
	return p, nil
}

// Set makes clocks read offset ahead (behind, if negative) of the truth,
// and the other clocks true. Each is one aligned 8-byte write, which a
// thread reading the clock meanwhile sees whole; the offset is written
// before the mask that turns it on.
func (p *Patch) Set(offset time.Duration, clocks Clocks) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(offset))
	if err := writeMem(p.Pid, p.page+offDelta, b[:]); err != nil {
		return fmt.Errorf("setting the clock offset of process %d: %w", p.Pid, err)
	}
	binary.LittleEndian.PutUint64(b[:], uint64(clocks))
	if err := writeMem(p.Pid, p.page+offMask, b[:]); err != nil {
		return fmt.Errorf("setting the clocks of process %d: %w", p.Pid, err)
	}
	return nil
}

// gone reports whether err says that the process has exited (a kill can
// take it while it is being patched).
func gone(err error) bool {
	return errors.Is(err, syscall.ESRCH) || errors.Is(err, syscall.ENOENT)
}

// Remove puts the vDSO entries of pid back as the kernel made them (the
// harness's own vDSO has them), if they were patched. A process that is
// gone has nothing to remove.
func Remove(pid int) error {
	v, img, err := findVDSO(pid)
	if err != nil {
		if gone(err) {
			return nil
		}
		return err
	}
	if !patched(v, img) {
		return nil
	}
	orig, err := originals()
	if err != nil {
		return err
	}
	return withStopped(pid, func(s *stopped) error {
		if err := s.stepOutOf(v.entries); err != nil {
			return err
		}
		for i, e := range v.entries {
			if err := writeMem(pid, e, orig[i]); err != nil {
				return fmt.Errorf("restoring the vDSO of process %d: %w", pid, err)
			}
		}
		return nil
	})
}

// Patched reports whether any vDSO clock entry of pid jumps elsewhere.
func Patched(pid int) (bool, error) {
	v, img, err := findVDSO(pid)
	if err != nil {
		return false, err
	}
	return patched(v, img), nil
}

func patched(v vdso, img []byte) bool {
	for _, e := range v.entries {
		at := img[e-v.start:]
		if len(at) >= jumpLen && at[0] == 0x48 && at[1] == 0xb8 && at[10] == 0xff && at[11] == 0xe0 {
			return true
		}
	}
	return false
}

// originals are the first jumpLen bytes of each entry in the harness's
// own vDSO, the same image the kernel maps into every process.
func originals() ([][]byte, error) {
	v, img, err := findVDSO(syscall.Getpid())
	if err != nil {
		return nil, err
	}
	if patched(v, img) {
		return nil, errors.New("the harness's own vDSO is patched")
	}
	var out [][]byte
	for _, e := range v.entries {
		out = append(out, img[e-v.start:e-v.start+jumpLen])
	}
	return out, nil
}

// Scan lists the processes of the machine whose vDSO clock entries are
// patched: what a killed harness may have left.
func Scan() ([]int, error) {
	es, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		// Kernel threads map no vDSO, and processes end as we look.
		if ok, err := Patched(pid); err == nil && ok {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
