package txn

import (
	"fmt"
	"strings"
	"testing"
)

// Register histories: Elle infers a version order only from the initial
// nil and from writes that follow reads, so these anomalies lean on those.

// TestRWRegisterG1c: each transaction read the other's write.
func TestRWRegisterG1c(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, write("x", 1), readReg("y", 2))
		var t2 [2]int
		if anomalous {
			t2 = h.tx(1, 0, 10, ok, write("y", 2), readReg("x", 1))
		} else {
			t2 = h.tx(1, 0, 10, ok, write("y", 2), readNil("x"))
		}
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G1c")
		f := finding(t, r, "G1c")
		expectOps(t, f, both(t1, t2)...)
		if !strings.Contains(f.Explanation, `read key "y" = 2, which T`) {
			t.Errorf("explanation %q", f.Explanation)
		}
	}
}

// TestRWRegisterOverwrittenReads: writes that follow reads order each
// key's versions, and each transaction overwrote the other's write, after
// reading it. Each dependency is both ww and wr, and Elle's rw-register
// explains it by wr first: G1c, not G0.
func TestRWRegisterOverwrittenReads(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, write("x", 1), readReg("y", 2), write("y", 3))
		var t2 [2]int
		if anomalous {
			t2 = h.tx(1, 0, 10, ok, write("y", 2), readReg("x", 1), write("x", 4))
		} else {
			t2 = h.tx(1, 0, 10, ok, write("y", 2), readNil("x"), write("x", 4))
		}
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G1c")
		f := finding(t, r, "G1c")
		expectOps(t, f, both(t1, t2)...)
		if !strings.Contains(f.Explanation, `read key "x" = 1, which`) {
			t.Errorf("explanation %q", f.Explanation)
		}
	}
}

// TestRWRegisterGSingle is the paper's Dgraph read skew: T1 read T3's
// 2432 but not T2's 2434, which T3 had read.
func TestRWRegisterGSingle(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		var t1 [2]int
		if anomalous {
			t1 = h.tx(0, 0, 10, ok, readReg(2432, 10), readNil(2434))
		} else {
			t1 = h.tx(0, 0, 10, ok, readReg(2432, 10), readReg(2434, 10))
		}
		t2 := h.tx(1, 0, 10, ok, write(2434, 10))
		t3 := h.tx(2, 0, 10, ok, write(2432, 10), readReg(2434, 10))
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G-single-item")
		f := finding(t, r, "G-single-item")
		expectOps(t, f, both(t1, t2, t3)...)
		if !strings.Contains(f.Explanation, "read key 2434 = nil, its initial value, and T2 set it to 10") {
			t.Errorf("explanation %q", f.Explanation)
		}
	}
}

// TestRWRegisterG2Item: each read nil where the other wrote.
func TestRWRegisterG2Item(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, readNil("x"), write("y", 1))
		var t2 [2]int
		if anomalous {
			t2 = h.tx(1, 0, 10, ok, readNil("y"), write("x", 1))
		} else {
			t2 = h.tx(1, 0, 10, ok, readReg("y", 1), write("x", 1))
		}
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G2-item")
		expectOps(t, finding(t, r, "G2-item"), both(t1, t2)...)
	}
}

// TestRWRegisterRealtime is the paper's Dgraph example: T1 finished
// writing key 540 seconds before T2 began, and T2 read it as nil.
func TestRWRegisterRealtime(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 1, ok, readNil(541), write(540, 2))
		start := 4.0
		if !anomalous {
			start = 0.5
		}
		t2 := h.tx(1, start, 5, ok, readNil(540), write(544, 1))
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G-single-item-realtime")
		f := finding(t, r, "G-single-item-realtime")
		expectOps(t, f, both(t1, t2)...)
		if !strings.Contains(f.Explanation, fmt.Sprintf("T2 completed at 1.000s (#%d), before T1 began at 4.000s (#%d) (realtime)", t1[1], t2[0])) {
			t.Errorf("explanation %q", f.Explanation)
		}
	}
}

func TestRWRegisterG1a(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		typ := fail
		if !anomalous {
			typ = info
		}
		w := h.tx(0, 0, 1, typ, write("x", 1))
		rd := h.tx(1, 2, 3, ok, readReg("x", 1))
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G1a")
		expectOps(t, finding(t, r, "G1a"), both(w, rd)...)
	}
}

func TestRWRegisterG1b(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		w := h.tx(0, 0, 1, ok, write("x", 1), write("x", 2))
		v := 1
		if !anomalous {
			v = 2
		}
		rd := h.tx(1, 2, 3, ok, readReg("x", v))
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G1b")
		expectOps(t, finding(t, r, "G1b"), both(w, rd)...)
	}
}

// TestRWRegisterInternal is the paper's Dgraph case, w(10, 2) r(10, 1),
// and Elle's [:r nil] [:r 1].
func TestRWRegisterInternal(t *testing.T) {
	for _, steps := range [][]step{
		{write(10, 2), readReg(10, 1)},
		{readNil(10), readReg(10, 1)},
	} {
		h := &hist{}
		h.tx(0, 0, 1, ok, write(10, 1))
		tx := h.tx(1, 2, 3, ok, steps...)
		r := run(t, "rw-register", h)
		if count(r, "internal") != 1 {
			t.Fatalf("anomalies %v", kinds(r))
		}
		expectOps(t, finding(t, r, "internal"), both(tx)...)
	}
	h := &hist{}
	h.tx(0, 0, 1, ok, write(10, 1))
	h.tx(1, 2, 3, ok, write(10, 2), readReg(10, 2), readReg(10, 2))
	expectKinds(t, run(t, "rw-register", h))
}

func TestRWRegisterGarbageRead(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		if !anomalous {
			h.tx(0, 0, 1, info, write("x", 7))
		}
		rd := h.tx(1, 2, 3, ok, readReg("x", 7))
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "garbage-read")
		expectOps(t, finding(t, r, "garbage-read"), both(rd)...)
	}
}

func TestRWRegisterLostUpdate(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, write("x", 1))
		a := h.tx(1, 2, 3, ok, readReg("x", 1), write("x", 2))
		var b [2]int
		if anomalous {
			b = h.tx(2, 2, 3, ok, readReg("x", 1), write("x", 3))
		} else {
			b = h.tx(2, 4, 5, ok, readReg("x", 2), write("x", 3))
		}
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		// Both read 1, so each anti-depends on the other: also G2-item.
		expectKinds(t, r, "lost-update", "G2-item")
		expectOps(t, finding(t, r, "lost-update"), both(a, b)...)
	}
}

// TestRWRegisterCyclicVersions: each transaction read what the other then
// overwrote, so writes-follow-reads orders 1 < 2 < 1.
func TestRWRegisterCyclicVersions(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		a := h.tx(0, 0, 1, ok, readReg("x", 1), write("x", 2))
		var b [2]int
		if anomalous {
			b = h.tx(1, 0, 1, ok, readReg("x", 2), write("x", 1))
		} else {
			b = h.tx(1, 0, 1, ok, readNil("x"), write("x", 1))
		}
		r := run(t, "rw-register", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "cyclic-versions", "G1c")
		expectOps(t, finding(t, r, "cyclic-versions"), both(a, b)...)
	}
}

func TestRWRegisterFutureRead(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		var tx [2]int
		if anomalous {
			tx = h.tx(0, 0, 1, ok, readReg("x", 1), write("x", 1))
		} else {
			tx = h.tx(0, 0, 1, ok, write("x", 1), readReg("x", 1))
		}
		r := run(t, "rw-register", h)
		if !anomalous {
			if r.FindingsTotal != 0 {
				t.Fatalf("findings %v", kinds(r))
			}
			continue
		}
		if count(r, "future-read") != 1 {
			t.Fatalf("anomalies %v", kinds(r))
		}
		expectOps(t, finding(t, r, "future-read"), both(tx)...)
	}
}
