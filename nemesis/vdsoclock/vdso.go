//go:build linux && amd64

package vdsoclock

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// entrySymbols are the vDSO functions a patch redirects, each to its
// replacement's offset in fakeCode. Go and the JVM read the clock through
// clock_gettime; Redis through gettimeofday (its key expiry) and time.
var entrySymbols = []struct {
	name string
	fake uint64
}{
	{"__vdso_clock_gettime", offClockGettime},
	{"__vdso_gettimeofday", offGettimeofday},
	{"__vdso_time", offTime},
}

// jumpLen is the size of the jump written over a vDSO entry:
// movabs rax, imm64 (48 b8 imm64); jmp rax (ff e0).
const jumpLen = 12

// jump is the code that sends a vDSO entry to target.
func jump(target uint64) []byte {
	b := []byte{0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe0}
	for i := range 8 {
		b[2+i] = byte(target >> (8 * i))
	}
	return b
}

// vdso is a process's vDSO: where it is mapped, and its entries.
type vdso struct {
	start, end uint64
	// entries are the addresses of entrySymbols, in that order.
	entries []uint64
	// syscall is the address of a syscall instruction (0f 05) in it,
	// which the injection executes instead of writing one of its own.
	syscall uint64
}

// findVDSO reads the vDSO of pid from its memory: every process of the
// machine maps the same image, so the one the harness itself maps tells
// what the original bytes of the entries are.
func findVDSO(pid int) (vdso, []byte, error) {
	var v vdso
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return v, nil, err
	}
	defer maps.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 6 && f[5] == "[vdso]" {
			lo, hi, _ := strings.Cut(f[0], "-")
			v.start, _ = strconv.ParseUint(lo, 16, 64)
			v.end, _ = strconv.ParseUint(hi, 16, 64)
		}
	}
	if v.start == 0 || v.end <= v.start {
		return v, nil, fmt.Errorf("process %d maps no vDSO", pid)
	}
	img := make([]byte, v.end-v.start)
	if err := readMem(pid, v.start, img); err != nil {
		return v, nil, fmt.Errorf("reading the vDSO of process %d: %w", pid, err)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return v, nil, fmt.Errorf("the vDSO of process %d: %w", pid, err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return v, nil, fmt.Errorf("the vDSO of process %d: %w", pid, err)
	}
	// Symbol values are link-time addresses; the first loaded segment is
	// at the start of the mapping.
	var base uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			base = p.Vaddr
			break
		}
	}
	for _, want := range entrySymbols {
		i := -1
		for j, s := range syms {
			if s.Name == want.name {
				i = j
			}
		}
		if i < 0 {
			return v, nil, fmt.Errorf("the vDSO of process %d has no %s", pid, want.name)
		}
		v.entries = append(v.entries, v.start+syms[i].Value-base)
	}
	if at := bytes.Index(img, []byte{0x0f, 0x05}); at >= 0 {
		v.syscall = v.start + uint64(at)
	} else {
		return v, nil, fmt.Errorf("the vDSO of process %d has no syscall instruction", pid)
	}
	return v, img, nil
}

func readMem(pid int, addr uint64, b []byte) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.ReadAt(b, int64(addr))
	return err
}

// writeMem writes to pid's memory, read-only mappings (its vDSO) included:
// the kernel writes through /proc/PID/mem for a process the caller may
// trace, copying the page for that process alone.
func writeMem(pid int, addr uint64, b []byte) error {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(addr)); err != nil {
		return err
	}
	return f.Close()
}
