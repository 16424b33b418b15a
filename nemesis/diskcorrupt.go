package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/plans"
)

func init() {
	Register[BitflipParams]("bitflip", Bitflip{})
	Register[TruncateParams]("truncate", Truncate{})
}

// Bitflip stops nodes (SIGKILL, as Kill), flips random bits in files of a
// class on their disks, durably, and restarts them at the heal: a disk
// that returns bad bytes. The files are changed through the node's disk,
// so the node reads what a bad disk would give it.
type Bitflip struct{}

// Truncate stops nodes (SIGKILL, as Kill), cuts the tail of files of a
// class on their disks, durably, and restarts them at the heal: a file
// that lost its end to a crash or a bad disk.
type Truncate struct{}

// FileParams pick the files a corruption changes on each victim.
type FileParams struct {
	// Class is the kind of file, as the target names its files
	// (Disked: etcd's wal, snapshot, db; ZooKeeper's txnlog,
	// snapshot; ...).
	Class string `yaml:"class"`
	// Files is how many files of the class to change on each victim,
	// drawn among those not empty (default 1).
	Files int `yaml:"files"`
}

// BitflipParams are a bitflip fault's own fields.
type BitflipParams struct {
	FileParams `yaml:",inline"`
	// Bits is how many bits to flip in each file, each at a random offset
	// (default 1).
	Bits int `yaml:"bits"`
}

// TruncateParams are a truncate fault's own fields.
type TruncateParams struct {
	FileParams `yaml:",inline"`
	// Bytes is how many bytes to cut off each file's end, at most its
	// size; 0 (the default) cuts a random amount, from 1 byte to the
	// whole file.
	Bytes int64 `yaml:"bytes"`
}

// Check checks the role, the class and the counts.
func (Bitflip) Check(e *Entry[BitflipParams], s Setting) error {
	bp := &e.Params
	if err := checkFiles(e, &bp.FileParams); err != nil {
		return err
	}
	if err := plans.Count("bits", &bp.Bits, 1, 1, 1<<20); err != nil {
		return err
	}
	return checkDisk(e.Kind, bp.Class, s)
}

// Check checks the role, the class and the counts.
func (Truncate) Check(e *Entry[TruncateParams], s Setting) error {
	tp := &e.Params
	if err := checkFiles(e, &tp.FileParams); err != nil {
		return err
	}
	if tp.Bytes < 0 {
		return plans.Fieldf("bytes", "%d: expected how many bytes to cut, or 0 for a random amount", tp.Bytes)
	}
	return checkDisk(e.Kind, tp.Class, s)
}

// checkFiles checks the fields corruptions share; checkDisk, that the
// target has the class of files.
func checkFiles[P any](e *Entry[P], fp *FileParams) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	if fp.Class == "" {
		return plans.Fieldf("class", "missing; expected the kind of file to change, as the target names them")
	}
	return plans.Count("files", &fp.Files, 1, 1, 1000)
}

// Traits: a corruption acts on disks, and its heal restarts its victims.
func (Bitflip) Traits() Traits { return Traits{Disks: true, RestartsNodes: true} }

// Traits: a corruption acts on disks, and its heal restarts its victims.
func (Truncate) Traits() Traits { return Traits{Disks: true, RestartsNodes: true} }

// Start flips bits.
func (Bitflip) Start(ctx context.Context, w *World, e Entry[BitflipParams], rng *rand.Rand) (Injected, error) {
	bp := e.Params
	return corrupt(ctx, w, e.Kind, e.Schedule, bp.FileParams, rng, func(file *os.File, size int64) (string, error) {
		var flips []string
		for range bp.Bits {
			off, bit := rng.Int64N(size), rng.IntN(8)
			b := make([]byte, 1)
			if _, err := file.ReadAt(b, off); err != nil {
				return "", err
			}
			b[0] ^= 1 << bit
			if _, err := file.WriteAt(b, off); err != nil {
				return "", err
			}
			flips = append(flips, fmt.Sprintf("bit %d of byte %d", bit, off))
		}
		return "flipped " + strings.Join(flips, ", "), nil
	})
}

// Start cuts files.
func (Truncate) Start(ctx context.Context, w *World, e Entry[TruncateParams], rng *rand.Rand) (Injected, error) {
	tp := e.Params
	return corrupt(ctx, w, e.Kind, e.Schedule, tp.FileParams, rng, func(file *os.File, size int64) (string, error) {
		cut := min(tp.Bytes, size)
		if cut == 0 {
			cut = 1 + rng.Int64N(size)
		}
		if err := file.Truncate(size - cut); err != nil {
			return "", err
		}
		return fmt.Sprintf("cut from %d to %d bytes", size, size-cut), nil
	})
}

// Stop releases the victims, restarting those no other fault holds down.
func (Bitflip) Stop(ctx context.Context, w *World, in Injected) error { return restartHeld(ctx, w, in) }

// Stop releases the victims, restarting those no other fault holds down.
func (Truncate) Stop(ctx context.Context, w *World, in Injected) error {
	return restartHeld(ctx, w, in)
}

// corrupt kills the victims and, once each is gone, has change alter
// fp.Files of its non-empty files of fp.Class, drawn with rng, and syncs
// them. Each victim's target says what was changed, file by file.
func corrupt(ctx context.Context, w *World, kind string, f plans.Schedule, fp FileParams, rng *rand.Rand,
	change func(file *os.File, size int64) (string, error)) (Injected, error) {
	env, ok := w.Env.(DiskEnv)
	if !ok {
		return Injected{}, errors.New(kind + ": the run's nodes have no disks")
	}
	victims := pickVictims(ctx, w, f, rng)
	in, err := holdAll(ctx, w, victims, w.kill)
	errs := []error{err}
	for i, v := range victims {
		did, err := corruptNode(context.WithoutCancel(ctx), w, env, v, fp, rng, change)
		if err != nil {
			did = append(did, kind+" failed: "+err.Error())
			errs = append(errs, err)
		}
		in.Targets[i] += " (" + strings.Join(did, "; ") + ")"
	}
	return in, errors.Join(errs...)
}

// corruptNode changes the files of one victim, and says what it did.
func corruptNode(ctx context.Context, w *World, env DiskEnv, v Process, fp FileParams, rng *rand.Rand,
	change func(file *os.File, size int64) (string, error)) ([]string, error) {
	if err := env.Stopped(ctx, v); err != nil {
		return nil, err
	}
	dir, files, err := dataFiles(w, env, v, fp.Class)
	if errors.Is(err, ErrNoDisk) {
		return []string{"no disk"}, nil
	}
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	for _, name := range files {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			sizes[name] = st.Size()
		}
	}
	files = slices.DeleteFunc(files, func(name string) bool { return sizes[name] == 0 })
	if len(files) == 0 {
		return []string{"no " + fp.Class + " file to change"}, nil
	}
	rng.Shuffle(len(files), func(a, b int) { files[a], files[b] = files[b], files[a] })
	var did []string
	for _, name := range files[:min(fp.Files, len(files))] {
		what, err := changeFile(filepath.Join(dir, name), sizes[name], change)
		if err != nil {
			return did, fmt.Errorf("%s: %w", name, err)
		}
		did = append(did, name+": "+what)
	}
	return did, nil
}

// changeFile opens the file, changes it and makes the change durable.
func changeFile(path string, size int64, change func(file *os.File, size int64) (string, error)) (string, error) {
	file, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	what, err := change(file, size)
	if err == nil {
		err = file.Sync()
	}
	return what, errors.Join(err, file.Close())
}
