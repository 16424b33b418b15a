package lazyfs

import (
	"context"
	"sync/atomic"
	"syscall"
)

// Op is an operation on the layer's files as a Gate sees it, before it
// runs.
type Op struct {
	// Name is what it does: "read", "write", "fsync", "fdatasync",
	// "truncate", "create", "unlink" or "rename".
	Name string
	// Path is the file's path, relative to the layer's root; a rename's
	// old one, with To the new.
	Path, To string
	// Off and Len are the bytes a read or a write covers; a truncate's
	// new size is Off.
	Off, Len int64
	// Grow is how many bytes the operation adds to its file: a write
	// past the end, a truncate upward.
	Grow int64
}

// Gate is asked before each operation on the layer's files. It may hold
// the operation (a slow or hung disk; a crash point that stops the
// process first), or fail it with an errno rather than run it; 0 runs it.
// It is asked concurrently, from the goroutines that serve the kernel.
type Gate interface {
	Before(ctx context.Context, op Op) syscall.Errno
}

// gated holds the layer's gate, if any: set and cleared while the layer
// serves.
type gated struct{ p atomic.Pointer[gateBox] }

type gateBox struct{ g Gate }

// SetGate makes g the layer's gate; nil removes it. Operations already
// held by the old gate stay with it.
func (f *FS) SetGate(g Gate) {
	if g == nil {
		f.gate.p.Store(nil)
		return
	}
	f.gate.p.Store(&gateBox{g})
}

// before asks the gate, if any, about the operation op describes (built
// only then: finding a path walks the tree).
func (g *gated) before(ctx context.Context, op func() Op) syscall.Errno {
	box := g.p.Load()
	if box == nil {
		return 0
	}
	return box.g.Before(ctx, op())
}
