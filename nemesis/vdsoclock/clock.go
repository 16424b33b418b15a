//go:build linux && amd64

// Package vdsoclock shifts the clocks that one process reads, and no other
// process's, as Chaos Mesh's TimeChaos does. The processes of a run share
// the host's kernel clock, so setting it would move every node and the
// harness; an LD_PRELOAD library never reaches a Go program, which reads
// the clock through the vDSO, not libc.
//
// Install stops every thread of the process with ptrace, maps a page into
// it holding fake.S (replacements of clock_gettime, gettimeofday and time
// that ask the kernel with a system call and add the offset of the clock
// asked for), and writes a jump to them over the entries of the process's
// vDSO. Set changes the offsets by writing the page, without stopping the
// process. Remove puts the vDSO entries back; the page stays, unused. The
// page also names its owner, the harness that patched the process, so
// that a leftover patch can be told from one in use (Scan).
package vdsoclock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// Patch is a process whose vDSO clock entries lead to the injected code.
type Patch struct {
	Pid int
	// Owner names the harness that patched the process (see Install).
	Owner string
	page  uint64 // where the code is mapped in the process
	// offsets are those written to the page.
	offsets Offsets
}

// ownerLen is the room for the owner's name in the page, its NUL included.
const ownerLen = offClockGettime - offOwner

// Install patches process pid, with no offset yet (see Set), and writes
// owner (at most 47 bytes) into the page: who is responsible for it.
func Install(pid int, owner string) (*Patch, error) {
	if len(owner) >= ownerLen || strings.IndexByte(owner, 0) >= 0 {
		return nil, fmt.Errorf("owner %q: at most %d bytes, no NUL", owner, ownerLen-1)
	}
	v, img, err := settledVDSO(pid)
	if err != nil {
		return nil, err
	}
	if patched(v, img) {
		return nil, fmt.Errorf("process %d is already patched", pid)
	}
	p := &Patch{Pid: pid, Owner: owner}
	code := append(append(slices.Clone(fakeCode[:offOwner]), owner...), fakeCode[offOwner+uint64(len(owner)):]...)
	err = withStopped(pid, func(s *stopped) error {
		if !s.sameImage(v) {
			return ErrChanged
		}
		page, err := s.syscall(v.syscall, syscall.SYS_MMAP, 0, uint64(syscall.Getpagesize()),
			syscall.PROT_READ|syscall.PROT_EXEC, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS, ^uint64(0), 0)
		if err != nil {
			return fmt.Errorf("mapping a page in process %d: %w", pid, err)
		}
		if page > ^uint64(4095) { // -errno
			return fmt.Errorf("mapping a page in process %d: %w", pid, syscall.Errno(-page))
		}
		p.page = page
		if err := writeMem(pid, page, code); err != nil {
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
	if errors.Is(err, ErrChanged) {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	} else if err != nil {
		return nil, errors.Join(err, Remove(pid))
	}
	return p, nil
}

// settledVDSO is findVDSO, given up to 100 ms for a process that is
// running another program (execve): its new memory has no vDSO for a
// moment, or none readable.
func settledVDSO(pid int) (vdso, []byte, error) {
	deadline := time.Now().Add(100 * time.Millisecond)
	for {
		v, img, err := findVDSO(pid)
		if err == nil || gone(err) || time.Now().After(deadline) {
			return v, img, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ErrChanged is a process that ran another program (execve) or ended
// while it was to be patched: its vDSO, and any patch of it, went with its
// old program. Its new program may be patched.
var ErrChanged = errors.New("the process ran another program, or ended, meanwhile")

// sameImage reports whether the process, now held stopped, still maps its
// vDSO where v was found: it has not run another program since, and will
// not while it is held. Nothing may be written into it otherwise: the
// addresses found were its old program's.
func (s *stopped) sameImage(v vdso) bool {
	now, _, err := findVDSO(s.pid)
	return err == nil && now.start == v.start
}

// Set makes each clock read its offset ahead (behind, if negative) of
// the truth. Each offset that changes is one aligned 8-byte write, which a
// thread reading the clock meanwhile sees whole.
func (p *Patch) Set(o Offsets) error {
	var b [8]byte
	for id := range o {
		if o[id] == p.offsets[id] {
			continue
		}
		binary.LittleEndian.PutUint64(b[:], uint64(o[id]))
		if err := writeMem(p.Pid, p.page+offDeltas+8*uint64(id), b[:]); err != nil {
			return fmt.Errorf("setting the clock offsets of process %d: %w", p.Pid, err)
		}
		p.offsets[id] = o[id]
	}
	return nil
}

// InForce reports whether process p.Pid runs this patch: its vDSO leads to
// this patch's page. It does not once the process is gone, its pid reused,
// or the patch removed.
func (p *Patch) InForce() bool {
	v, img, err := findVDSO(p.Pid)
	if err != nil {
		return false
	}
	page, ok := pageOf(v, img)
	return ok && page == p.page
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
	v, img, err := settledVDSO(pid)
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
		if !s.sameImage(v) {
			return nil // the patch went with the old program
		}
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
	_, ok := pageOf(v, img)
	return ok
}

// pageOf is the page that the first patched vDSO entry jumps into.
func pageOf(v vdso, img []byte) (uint64, bool) {
	for i, e := range v.entries {
		at := img[e-v.start:]
		if len(at) >= jumpLen && at[0] == 0x48 && at[1] == 0xb8 && at[10] == 0xff && at[11] == 0xe0 {
			return binary.LittleEndian.Uint64(at[2:10]) - entrySymbols[i].fake, true
		}
	}
	return 0, false
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
// patched, each with its owner: what a killed harness may have left, and
// what harnesses at work are using. A page unreadable, or from a chaos
// that wrote no owner, has owner "".
func Scan() ([]Patch, error) {
	es, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var found []Patch
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		// Kernel threads map no vDSO, and processes end as we look.
		v, img, err := findVDSO(pid)
		if err != nil {
			continue
		}
		if page, ok := pageOf(v, img); ok {
			found = append(found, Patch{Pid: pid, Owner: ownerAt(pid, page), page: page})
		}
	}
	return found, nil
}

// ownerAt reads the owner's name from the page at page in process pid.
func ownerAt(pid int, page uint64) string {
	b := make([]byte, ownerLen)
	if readMem(pid, page+offOwner, b) != nil {
		return ""
	}
	name, _, _ := bytes.Cut(b, []byte{0})
	if !utf8.Valid(name) || bytes.ContainsFunc(name, unicode.IsControl) {
		return ""
	}
	return string(name)
}
