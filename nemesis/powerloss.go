package nemesis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/chaos-testing/chaos/lazyfs"
)

func init() { Register[struct{}]("power-loss", PowerLoss{}) }

// PowerLoss cuts the power of nodes: their processes are killed with
// SIGKILL and every byte they wrote and never fsynced is dropped from
// their disks, as a machine's page cache is lost with its power; the heal
// restarts them on what is left. A kill keeps the page cache; this does
// not. Target all cuts every node at once (a coordinated power failure:
// every process is killed before any disk is dropped). A power loss holds
// its victims down as a kill does, and composes with kills alike (see
// World); a node already down loses its un-synced bytes all the same.
type PowerLoss struct{}

// Check allows nodes only, as Kill, and all, on a target with a data
// directory.
func (PowerLoss) Check(e *Entry[struct{}], s Setting) error {
	if err := checkRole(e, "nodes", "leader", "all"); err != nil {
		return err
	}
	return checkDisk(e.Kind, "", s)
}

// Traits: a power loss acts on disks (whatever is un-synced), and its
// heal restarts its victims.
func (PowerLoss) Traits() Traits { return Traits{Disks: true, RestartsNodes: true} }

// Start kills the victims, then drops their un-synced writes. Each
// victim's target says what it lost, file by file.
func (PowerLoss) Start(ctx context.Context, w *World, e Entry[struct{}], rng *rand.Rand) (Injected, error) {
	env, ok := w.Env.(DiskEnv)
	if !ok {
		return Injected{}, errors.New("power-loss: the run's nodes have no disks")
	}
	victims := pickVictims(ctx, w, e.Schedule, rng)
	in, err := holdAll(ctx, w, victims, w.kill)
	errs := []error{err}
	for i, v := range victims {
		d, err := dropUnsynced(context.WithoutCancel(ctx), env, v)
		switch {
		case errors.Is(err, ErrNoDisk):
			in.Targets[i] += " (no disk)"
		case err != nil:
			in.Targets[i] += " (drop failed: " + err.Error() + ")"
			errs = append(errs, err)
		default:
			in.Targets[i] += " (" + describeDropped(d) + ")"
		}
	}
	return in, errors.Join(errs...)
}

// dropUnsynced drops v's un-synced writes once its process is gone.
func dropUnsynced(ctx context.Context, env DiskEnv, v Process) (lazyfs.Dropped, error) {
	if err := env.Stopped(ctx, v); err != nil {
		return lazyfs.Dropped{}, err
	}
	return env.DropUnsynced(v)
}

// Stop releases the victims, restarting those no other fault holds down.
func (PowerLoss) Stop(ctx context.Context, w *World, in Injected) error {
	return restartHeld(ctx, w, in)
}

// maxRanges bounds the byte ranges a history entry lists for one file.
const maxRanges = 16

// describeDropped says what a drop lost: for each file, the byte ranges
// written and not synced ([offset,+length)), and its size before and
// after when the drop changed it.
func describeDropped(d lazyfs.Dropped) string {
	if len(d.Files) == 0 {
		return "nothing un-synced"
	}
	var files []string
	for _, f := range d.Files {
		var b strings.Builder
		b.WriteString(cmp.Or(f.Path, fmt.Sprintf("inode %d", f.Inode)))
		var total int64
		for j, r := range f.Ranges {
			total += r.Length
			if j < maxRanges {
				fmt.Fprintf(&b, " [%d,+%d)", r.Offset, r.Length)
			}
		}
		if n := len(f.Ranges) - maxRanges; n > 0 {
			fmt.Fprintf(&b, " and %d more ranges", n)
		}
		if len(f.Ranges) > 1 {
			fmt.Fprintf(&b, ", %d bytes", total)
		}
		if f.SizeBefore != f.DurableSize {
			fmt.Fprintf(&b, ", size %d to %d", f.SizeBefore, f.DurableSize)
		}
		if f.TruncatedTo != nil {
			fmt.Fprintf(&b, ", its truncate to %d undone", *f.TruncatedTo)
		}
		files = append(files, b.String())
	}
	return "lost " + strings.Join(files, "; ")
}
