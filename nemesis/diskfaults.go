package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/plans"
)

func init() {
	Register[DiskSlowParams]("disk-slow", DiskSlow{})
	Register[DiskOpsParams]("disk-stall", DiskStall{})
	Register[DiskErrorParams]("disk-error", DiskError{})
	Register[DiskFullParams]("disk-full", DiskFull{})
}

// The faults of a disk that misbehaves while its node runs, through the
// layer under the node's data directory (package disks): slow, hung,
// failing, full. Each puts a rule on its victims' disks for its window
// and takes it off at the heal, which lets go what the rule held.
type (
	// DiskSlow holds each operation it picks for a drawn time.
	DiskSlow struct{ diskRuled[DiskSlowParams] }
	// DiskStall holds every operation it picks until healed: a hung
	// disk.
	DiskStall struct{ diskRuled[DiskOpsParams] }
	// DiskError fails the operations it picks with an errno.
	DiskError struct{ diskRuled[DiskErrorParams] }
	// DiskFull gives the disk little room: what would add more fails
	// with ENOSPC.
	DiskFull struct{ diskRuled[DiskFullParams] }
)

// diskRuled is what the disk faults share: they act on disks, are
// pinned to their victims by name, and are healed by taking their rules
// off.
type diskRuled[P any] struct{}

func (diskRuled[P]) Traits() Traits { return Traits{Disks: true} }

func (diskRuled[P]) Pin(e Entry[P], targets []string) (Entry[P], error) {
	return pinProcesses(e, targets)
}

func (diskRuled[P]) Stop(_ context.Context, _ *World, in Injected) error {
	for _, remove := range in.State.(*ruled).removes {
		remove()
	}
	return nil
}

// diskOps are the operations a disk fault can pick.
var diskOps = []string{"read", "write", "fsync", "fdatasync", "truncate", "create", "unlink", "rename"}

// DiskOpsParams pick the operations a disk fault acts on: of Ops (every
// kind if empty; fsync picks fdatasync too), on the files of Class (the
// target's kind of file) or Path (a pattern, filepath.Match's, of the
// path in the data directory, or of the file's name), every file if
// neither.
type DiskOpsParams struct {
	Ops   []string `yaml:"ops"`
	Class string   `yaml:"class"`
	Path  string   `yaml:"path"`
}

// DiskSlowParams are a disk-slow fault's own fields: each operation is
// held Delay give or take Jitter, as the network's delay draws them.
type DiskSlowParams struct {
	DiskOpsParams `yaml:",inline"`
	DelayParams   `yaml:",inline"`
}

// DiskErrorParams are a disk-error fault's own fields.
type DiskErrorParams struct {
	DiskOpsParams `yaml:",inline"`
	// Errno is the error: EIO (the default), ENOSPC, EROFS, EDQUOT.
	Errno string `yaml:"errno"`
	// Probability is each picked operation's chance to fail (default 1).
	Probability float64 `yaml:"probability"`
}

// DiskFullParams are a disk-full fault's own fields.
type DiskFullParams struct {
	// Free is how many bytes the disk may still take (default 0).
	Free int64 `yaml:"free"`
}

// errnos are the errors a disk-error may answer.
var errnos = map[string]syscall.Errno{"EIO": syscall.EIO, "ENOSPC": syscall.ENOSPC, "EROFS": syscall.EROFS, "EDQUOT": syscall.EDQUOT}

// checkOps checks the operations, the class or the path, and the role.
func checkOps[P any](e *Entry[P], op *DiskOpsParams, s Setting) error {
	if err := checkRole(e, "nodes", "leader", "all"); err != nil {
		return err
	}
	for _, o := range op.Ops {
		if !slices.Contains(diskOps, o) {
			return plans.Fieldf("ops", "%q: expected operations among %s", o, strings.Join(diskOps, ", "))
		}
	}
	if op.Class != "" && op.Path != "" {
		return plans.Fieldf("path", "%q: give a class of files or a path, not both", op.Path)
	}
	if _, err := filepath.Match(op.Path, ""); err != nil {
		return plans.Fieldf("path", "%q: %v", op.Path, err)
	}
	return checkDisk(e.Kind, op.Class, s)
}

// match is what op picks on w's target.
func (op DiskOpsParams) match(w *World) disks.Match {
	m := disks.Match{Ops: op.Ops}
	switch {
	case op.Class != "":
		m.Paths = w.Target.(Disked).FileClasses()[op.Class]
	case op.Path != "":
		m.Paths = []string{op.Path}
	}
	return m
}

// describe says in a few words what op picks.
func (op DiskOpsParams) describe() string {
	what := "every operation"
	if len(op.Ops) > 0 {
		what = strings.Join(op.Ops, " or ")
	}
	switch {
	case op.Class != "":
		what += " of " + op.Class + " files"
	case op.Path != "":
		what += " of " + op.Path
	}
	return what
}

func (DiskSlow) Check(e *Entry[DiskSlowParams], s Setting) error {
	p := &e.Params
	if err := p.DelayParams.check("operation"); err != nil {
		return err
	}
	return checkOps(e, &p.DiskOpsParams, s)
}

func (DiskStall) Check(e *Entry[DiskOpsParams], s Setting) error { return checkOps(e, &e.Params, s) }

func (DiskError) Check(e *Entry[DiskErrorParams], s Setting) error {
	p := &e.Params
	if p.Errno == "" {
		p.Errno = "EIO"
	}
	if errnos[p.Errno] == 0 {
		return plans.Fieldf("errno", "%q: expected EIO, ENOSPC, EROFS or EDQUOT", p.Errno)
	}
	if p.Probability == 0 {
		p.Probability = 1
	}
	if p.Probability < 0 || p.Probability > 1 {
		return plans.Fieldf("probability", "%g: expected a chance from 0 to 1", p.Probability)
	}
	return checkOps(e, &p.DiskOpsParams, s)
}

func (DiskFull) Check(e *Entry[DiskFullParams], s Setting) error {
	if e.Params.Free < 0 {
		return plans.Fieldf("free", "%d: expected how many bytes the disk may still take", e.Params.Free)
	}
	return checkOps(e, &DiskOpsParams{}, s)
}

func (DiskSlow) Start(ctx context.Context, w *World, e Entry[DiskSlowParams], rng *rand.Rand) (Injected, error) {
	p := e.Params
	draw := func(r *rand.Rand) time.Duration {
		return distributions[p.Distribution](p.Delay.Duration, p.Jitter.Duration, r)
	}
	what := fmt.Sprintf("%s held %s", p.describe(), p.Delay)
	if p.Jitter.Duration > 0 {
		what += fmt.Sprintf(" ± %s (%s)", p.Jitter, p.Distribution)
	}
	return addRules(ctx, w, e.Kind, e.Schedule, rng, p.match(w), what, func(seed uint64) disks.Effect { return disks.NewLatency(draw, seed) })
}

func (DiskStall) Start(ctx context.Context, w *World, e Entry[DiskOpsParams], rng *rand.Rand) (Injected, error) {
	return addRules(ctx, w, e.Kind, e.Schedule, rng, e.Params.match(w), e.Params.describe()+" held", func(uint64) disks.Effect { return disks.Stall{} })
}

func (DiskError) Start(ctx context.Context, w *World, e Entry[DiskErrorParams], rng *rand.Rand) (Injected, error) {
	p := e.Params
	what := fmt.Sprintf("%s fail with %s", p.describe(), p.Errno)
	if p.Probability < 1 {
		what += fmt.Sprintf(" (%g of them)", p.Probability)
	}
	return addRules(ctx, w, e.Kind, e.Schedule, rng, p.match(w), what, func(seed uint64) disks.Effect { return disks.NewFail(errnos[p.Errno], p.Probability, seed) })
}

func (DiskFull) Start(ctx context.Context, w *World, e Entry[DiskFullParams], rng *rand.Rand) (Injected, error) {
	return addRules(ctx, w, e.Kind, e.Schedule, rng, disks.Match{}, fmt.Sprintf("full, %d bytes free", e.Params.Free),
		func(uint64) disks.Effect { return disks.NewFull(e.Params.Free) })
}

// ruled is a disk fault in force: how to take each of its rules off.
type ruled struct{ removes []func() }

// addRules puts a rule of effect (each victim's own, from a seed drawn
// with rng) on each victim's disk; the targets say what it does.
func addRules(ctx context.Context, w *World, kind string, f plans.Schedule, rng *rand.Rand, m disks.Match, what string, effect func(seed uint64) disks.Effect) (Injected, error) {
	env, ok := w.Env.(DiskEnv)
	if !ok {
		return Injected{}, errors.New(kind + ": the run's nodes have no disks")
	}
	st := &ruled{}
	in := Injected{State: st}
	for _, v := range pickVictims(ctx, w, f, rng) {
		rules, err := env.Rules(v)
		if errors.Is(err, ErrNoDisk) {
			in.Targets = append(in.Targets, v.Name+" (no disk)")
			continue
		}
		if err != nil {
			return in, err
		}
		st.removes = append(st.removes, rules.Add(m, effect(rng.Uint64())))
		in.Targets = append(in.Targets, v.Name+" ("+what+")")
	}
	return in, nil
}

// drawOps draws the operations an explored disk fault picks: fsyncs,
// writes, or every one.
func drawOps(rng *rand.Rand) DiskOpsParams {
	return DiskOpsParams{Ops: [][]string{{"fsync"}, {"write"}, nil}[rng.IntN(3)]}
}

// Explore slows one node's or the leader's disk by 10 to 300 ms, jittered
// by up to half that.
func (DiskSlow) Explore(rng *rand.Rand, _ int) Entry[DiskSlowParams] {
	delay := time.Duration(1+rng.IntN(30)) * 10 * time.Millisecond
	return explored(drawRole(rng, "nodes", "leader"), DiskSlowParams{DiskOpsParams: drawOps(rng), DelayParams: DelayParams{
		Delay: plans.Duration{Duration: delay}, Jitter: plans.Duration{Duration: time.Duration(rng.Int64N(int64(delay/2) + 1))}, Distribution: "uniform"}})
}

// Explore hangs one node's or the leader's disk.
func (DiskStall) Explore(rng *rand.Rand, _ int) Entry[DiskOpsParams] {
	return explored(drawRole(rng, "nodes", "leader"), DiskOpsParams{})
}

// Explore fails up to half the writes or fsyncs of one node's or the
// leader's disk with EIO or ENOSPC.
func (DiskError) Explore(rng *rand.Rand, _ int) Entry[DiskErrorParams] {
	return explored(drawRole(rng, "nodes", "leader"), DiskErrorParams{DiskOpsParams: DiskOpsParams{Ops: [][]string{{"fsync"}, {"write"}}[rng.IntN(2)]},
		Errno: drawRole(rng, "EIO", "ENOSPC"), Probability: drawShare(rng, 0.5)})
}

// Explore fills one node's or the leader's disk, leaving it up to 1 MiB.
func (DiskFull) Explore(rng *rand.Rand, _ int) Entry[DiskFullParams] {
	return explored(drawRole(rng, "nodes", "leader"), DiskFullParams{Free: rng.Int64N(1 << 20)})
}
