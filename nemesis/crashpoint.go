package nemesis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chaos-testing/chaos/disks"
	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[CrashParams]("crash-point", CrashPoint{}) }

// CrashPoint crashes a node when it does something, not at a time: armed
// on its victims' disks, it fires at the Nth operation it picks (or at
// each with a chance), freezes the disk, and acts on the node: kills its
// process (SIGKILL), cuts its power (killed, then what it never synced
// dropped, as power-loss) or pauses it (SIGSTOP). Once a node is dead,
// the operation that fired and every later one fail: none reaches the
// disk after the crash. The fault's start stays open while it is armed,
// until every victim's crash point fired or its time to fire ran out (the
// next interval, less the fault's duration, or the duration if that is
// longer); its completion names, for each victim, the operation it
// crashed at. The heal, the fault's duration later, restarts or resumes
// the node. This is how etcd's
// robustness tests use gofail's failpoints, without touching the server.
type CrashPoint struct{}

// CrashParams are a crash point's own fields: the operations it counts
// (as the disk faults pick them), when among them it fires (the Nth,
// default 1; or each with Probability) and what it does.
type CrashParams struct {
	DiskOpsParams `yaml:",inline"`
	Nth           int     `yaml:"nth"`
	Probability   float64 `yaml:"probability"`
	// Log, instead of operations, is a pattern (Go's regexp) of a line
	// of the node's own output: the crash point fires at the first line
	// it matches once armed.
	Log string `yaml:"log"`
	// Action is kill (the default), power-loss or pause.
	Action string `yaml:"action"`
}

func (CrashPoint) Check(e *Entry[CrashParams], s Setting) error {
	p := &e.Params
	if p.Log != "" {
		if _, err := regexp.Compile(p.Log); err != nil {
			return plans.Fieldf("log", "%q: %v", p.Log, err)
		}
		if len(p.Ops) > 0 || p.Class != "" || p.Path != "" || p.Nth != 0 || p.Probability != 0 {
			return plans.Fieldf("log", "%q: a crash point fires at a line of the log or at operations on the disk, not both", p.Log)
		}
	}
	switch {
	case p.Probability < 0 || p.Probability > 1:
		return plans.Fieldf("probability", "%g: expected a chance from 0 to 1", p.Probability)
	case p.Probability > 0 && p.Nth != 0:
		return plans.Fieldf("nth", "%d: give the Nth operation or a probability, not both", p.Nth)
	case p.Probability == 0:
		if err := plans.Count("nth", &p.Nth, 1, 1, 1<<30); err != nil {
			return err
		}
	}
	if p.Action == "" {
		p.Action = "kill"
	}
	if p.Action != "kill" && p.Action != "power-loss" && p.Action != "pause" {
		return plans.Fieldf("action", "%q: expected kill, power-loss or pause", p.Action)
	}
	return checkOps(e, &p.DiskOpsParams, s)
}

// Traits: it acts on disks, and its heal restarts nodes it killed.
func (CrashPoint) Traits() Traits { return Traits{Disks: true, RestartsNodes: true} }

// crashed is a crash point in force: the nodes it holds down or paused.
type crashed struct {
	*holding
	pause bool
}

// fired is what one victim's crash point did when it fired.
type fired struct {
	victim int
	op     lazyfs.Op
	after  time.Duration // from the operation's arrival to the act's end
	held   bool
	note   string
	err    error
}

// Start arms the crash points and waits until they fire, or ctx ends.
func (CrashPoint) Start(ctx context.Context, w *World, e Entry[CrashParams], rng *rand.Rand) (Injected, error) {
	env, ok := w.Env.(DiskEnv)
	if !ok {
		return Injected{}, errors.New(e.Kind + ": the run's nodes have no disks")
	}
	ctx, cancel := armedFor(ctx, e.Duration.Duration)
	defer cancel()
	p := e.Params
	act, dies := w.kill, true
	if p.Action == "pause" {
		act, dies = w.pause, false
	}
	st := &crashed{holding: &holding{id: w.newID()}, pause: !dies}
	in := Injected{State: st}
	victims := pickVictims(ctx, w, e.Schedule, rng)
	in.Targets = make([]string, len(victims))
	fires := make(chan fired, len(victims))
	triggers := make([]disarmer, len(victims))
	removes := make([]func(), len(victims))
	var errs []error
	for i, v := range victims {
		fire := func(op lazyfs.Op, arrived time.Time) bool {
			held, note, err := act(context.WithoutCancel(ctx), v, st.id)
			fires <- fired{victim: i, op: op, after: time.Since(arrived), held: held, note: note, err: err}
			return dies
		}
		var err error
		if p.Log != "" {
			triggers[i], removes[i], err = armLog(ctx, env, v, regexp.MustCompile(p.Log), fire)
		} else {
			triggers[i], removes[i], err = armDisk(env, v, p, w, rng.Uint64(), fire)
		}
		if err != nil {
			in.Targets[i] = fmt.Sprintf("%s (not armed: %v)", v.Name, err)
			errs = append(errs, ignoreNoDisk(err))
			continue
		}
		in.Targets[i] = fmt.Sprintf("%s (armed for %s, never fired)", v.Name, p.when())
	}
	pending := 0
	for _, t := range triggers {
		if t != nil {
			pending++
		}
	}
	for pending > 0 {
		select {
		case f := <-fires:
			pending--
			triggers[f.victim] = nil
			errs = append(errs, crashed1(ctx, env, victims[f.victim], f, p.Action, st, &in.Targets[f.victim]))
			removes[f.victim]()
		case <-ctx.Done():
			for i, t := range triggers {
				if t != nil && !t.Disarm() {
					triggers[i] = nil
					pending--
					removes[i]()
				}
			}
			ctx = context.WithoutCancel(ctx) // those firing now still report
		}
	}
	return in, errors.Join(errs...)
}

// disarmer is a crash point armed on one node: Disarm keeps it from
// firing from then on, and says whether it had fired (or is firing).
type disarmer interface{ Disarm() (fired bool) }

// armDisk arms a crash point on v's disk, at the operations p picks.
func armDisk(env DiskEnv, v Process, p CrashParams, w *World, seed uint64, fire func(lazyfs.Op, time.Time) bool) (disarmer, func(), error) {
	rules, err := env.Rules(v)
	if err != nil {
		return nil, nil, err
	}
	t := disks.NewTrigger(p.match(w), p.Nth, p.Probability, seed, func(op lazyfs.Op) bool { return fire(op, time.Now()) })
	return t, rules.Add(disks.Match{}, t), nil
}

// logTrigger is a crash point armed on a node's log.
type logTrigger struct {
	mu     sync.Mutex
	fired  bool
	off    bool // disarmed
	cancel context.CancelFunc
}

func (t *logTrigger) Disarm() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.off = true
	t.cancel()
	return t.fired
}

// take says whether the trigger may fire now (once, unless disarmed).
func (t *logTrigger) take() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fired || t.off {
		return false
	}
	t.fired = true
	return true
}

// armLog arms a crash point on what v writes from now on: it fires at
// the first line re matches.
func armLog(ctx context.Context, env DiskEnv, v Process, re *regexp.Regexp, fire func(lazyfs.Op, time.Time) bool) (disarmer, func(), error) {
	logs, ok := env.(LogEnv)
	if !ok {
		return nil, nil, errors.New("crash-point: the run cannot follow its nodes' logs")
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rc, err := logs.FollowLog(lctx, v)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	t := &logTrigger{cancel: cancel}
	go func() {
		defer rc.Close()
		lines := bufio.NewScanner(rc)
		lines.Buffer(make([]byte, 64<<10), 1<<20)
		for lines.Scan() {
			if m := re.FindStringIndex(lines.Text()); m != nil && t.take() {
				fire(lazyfs.Op{Name: "log", Path: excerpt(lines.Text(), m, logContext)}, time.Now())
				return
			}
		}
	}()
	return t, cancel, nil
}

// logContext is how much of a matching log line a crash point quotes on
// either side of the match: enough to place it (a JSON log's message, its
// caller), short enough for a finding.
const logContext = 60

// excerpt is line's match m with up to n bytes either side, ellipses
// marking what is left out.
func excerpt(line string, m []int, n int) string {
	from, to := max(m[0]-n, 0), min(m[1]+n, len(line))
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to++
	}
	out := line[from:to]
	if from > 0 {
		out = "..." + out
	}
	if to < len(line) {
		out += "..."
	}
	return out
}

// armedFor is ctx, its deadline put off to at least d from now: it ends
// when ctx is canceled (the run ends), not when ctx's deadline passes
// before then.
func armedFor(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) >= d {
		return context.WithCancel(ctx)
	}
	armed, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	return armed, func() { stop(); cancel() }
}

// crashed1 finishes what a victim's crash point began, once its process
// is gone for a crash (and its un-synced writes dropped for a power
// loss), and says what happened in its target.
func crashed1(ctx context.Context, env DiskEnv, v Process, f fired, action string, st *crashed, target *string) error {
	if f.held {
		st.held = append(st.held, v)
	}
	did := map[string]string{"kill": "killed", "power-loss": "power cut", "pause": "paused"}[action]
	*target = fmt.Sprintf("%s (%s at %s, %s after it came%s)", v.Name, did, describeOp(f.op), f.after.Round(time.Microsecond), f.note)
	if f.err != nil || action == "pause" {
		return f.err
	}
	ctx = context.WithoutCancel(ctx)
	if action == "kill" {
		return env.Stopped(ctx, v)
	}
	d, err := dropUnsynced(ctx, env, v)
	if err != nil {
		*target = fmt.Sprintf("%s; drop failed: %v", *target, err)
		return err
	}
	*target = fmt.Sprintf("%s; %s", *target, describeDropped(d))
	return nil
}

// Stop restarts or resumes the nodes the crash points hold.
func (CrashPoint) Stop(ctx context.Context, w *World, in Injected) error {
	st := in.State.(*crashed)
	if st.pause {
		return releaseAll(ctx, st.holding, st.held, w.resume)
	}
	return releaseAll(ctx, st.holding, st.held, w.restart)
}

// Pin arms the crash points on the nodes recorded, by name.
func (CrashPoint) Pin(e Entry[CrashParams], targets []string) (Entry[CrashParams], error) {
	return pinProcesses(e, targets)
}

// when says at which operation the crash point fires.
func (p CrashParams) when() string {
	if p.Log != "" {
		return fmt.Sprintf("a log line matching %q", p.Log)
	}
	if p.Probability > 0 {
		return fmt.Sprintf("%s, each with a chance of %g", p.describe(), p.Probability)
	}
	return fmt.Sprintf("the %s %s", ordinal(p.Nth), strings.Replace(p.describe(), "every operation", "operation", 1))
}

// describeOp says what an operation did, as a finding can quote it.
func describeOp(op lazyfs.Op) string {
	switch op.Name {
	case "rename":
		return fmt.Sprintf("the rename of %s to %s", op.Path, op.To)
	case "write", "read":
		return fmt.Sprintf("the %s of %s [%d,+%d)", op.Name, op.Path, op.Off, op.Len)
	case "truncate":
		return fmt.Sprintf("the truncate of %s to %d bytes", op.Path, op.Off)
	case "log":
		return fmt.Sprintf("the log line %q", op.Path)
	}
	return fmt.Sprintf("the %s of %s", op.Name, op.Path)
}

// ordinal is 1st, 2nd, 3rd, 4th, ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprint(n) + suffix
}

// ignoreNoDisk is err, unless it says the node has no disk (a Redis
// sentinel), which a fault on disks passes by.
func ignoreNoDisk(err error) error {
	if errors.Is(err, ErrNoDisk) {
		return nil
	}
	return err
}

// Explore arms a crash point on one node or the leader, at one of its
// first 50 writes, fsyncs, renames, unlinks or truncates, to kill, cut
// the power or pause.
func (CrashPoint) Explore(rng *rand.Rand, _ int) Entry[CrashParams] {
	op := drawRole(rng, "write", "fsync", "rename", "unlink", "truncate")
	return explored(drawRole(rng, "nodes", "leader"), CrashParams{DiskOpsParams: DiskOpsParams{Ops: []string{op}},
		Nth: 1 + rng.IntN(50), Action: drawRole(rng, "kill", "power-loss", "pause")})
}
