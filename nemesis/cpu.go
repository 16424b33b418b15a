package nemesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[CPUParams]("cpu", CPU{}) }

// CPU starves its victims of CPU time, as a noisy neighbour, a throttled
// VM or a CPU limit set too low would: their containers may use cpus CPUs
// and no more (the cgroup's CFS quota, changed live through the Engine as
// docker update --cpus does). Unlike a pause, the process keeps running,
// slowly: its timers fire late, its heartbeats thin out, its requests
// queue. CPU faults compose (see World): a process may use the fewest CPUs
// of those in force on it, and the last heal puts back the limit it had
// before the first, as the Engine told it.
//
// The limit lives in the container's configuration, not in its process:
// a node killed and restarted meanwhile comes back starved, with nothing
// to reinstall. Nothing outside the run's containers is changed, so a
// harness killed with SIGKILL leaves nothing that chaos clean, which
// removes the containers, does not remove with them.
type CPU struct{}

// CPUParams are a cpu fault's own fields.
type CPUParams struct {
	// CPUs are the CPUs each victim may use, as docker run --cpus has
	// them: 0.05 is 5 ms of CPU time every 100 ms.
	CPUs float64 `yaml:"cpus"`
}

// The CPUs a fault may leave its victims: the Engine takes no quota under
// 1 ms a period (0.01 of the kernel's period of 100 ms), and the upper
// bound only refuses what no host has (and what would overflow a quota).
const (
	minCPUs = 0.01
	maxCPUs = 1024
)

// Check checks the role and the CPUs.
func (CPU) Check(e *Entry[CPUParams], _ Setting) error {
	if err := checkRole(e, "nodes", "leader", "clients", "holder"); err != nil {
		return err
	}
	// Written so that NaN fails too.
	if c := e.Params.CPUs; !(c >= minCPUs && c <= maxCPUs) {
		return plans.Fieldf("cpus", "%v: expected the CPUs each victim may use, from %v to %v, such as 0.05 or 0.5", c, minCPUs, maxCPUs)
	}
	return nil
}

// starving is one cpu fault in force.
type starving struct {
	id      int
	victims []Process
}

// Start limits the victims' CPU.
func (CPU) Start(ctx context.Context, w *World, e Entry[CPUParams], rng *rand.Rand) (Injected, error) {
	env, ok := w.Env.(CPUEnv)
	if !ok {
		return Injected{}, errors.New("cpu faults need to limit the CPU of containers, which this environment cannot")
	}
	victims := pickVictims(ctx, w, e.Schedule, rng)
	if len(victims) == 0 {
		return Injected{}, nil
	}
	ctx = context.WithoutCancel(ctx) // the act is not cut short
	st := starving{id: w.newID(), victims: victims}
	var targets []string
	var errs []error
	for _, v := range victims {
		targets = append(targets, fmt.Sprintf("%s (%g CPU)", v.Name, e.Params.CPUs))
		errs = append(errs, w.starve(ctx, env, v, st.id, e.Params.CPUs))
	}
	return Injected{Targets: targets, State: st}, errors.Join(errs...)
}

// Stop takes the fault's limit off; another cpu fault's stays.
func (CPU) Stop(ctx context.Context, w *World, in Injected) error {
	st := in.State.(starving)
	env := w.Env.(CPUEnv) // Start checked it
	var errs []error
	for _, v := range st.victims {
		errs = append(errs, w.feed(ctx, env, v, st.id))
	}
	return errors.Join(errs...)
}

// Pin starves the processes recorded, by name, as much.
func (CPU) Pin(e Entry[CPUParams], targets []string) (Entry[CPUParams], error) {
	return pinProcesses(e, targets)
}

// starve holds p to cpus for fault id, reading the limit p had first if
// no other cpu fault holds it.
func (w *World) starve(ctx context.Context, env CPUEnv, p Process, id int, cpus float64) error {
	h := w.lock(p)
	defer h.mu.Unlock()
	if len(h.cpus) == 0 {
		before, err := env.CPULimit(ctx, p)
		if err != nil {
			return err // not held: nothing to heal
		}
		h.cpus, h.cpuBefore = map[int]float64{}, before
	}
	h.cpus[id] = cpus
	return limitCPU(ctx, env, p, h)
}

// feed releases fault id's limit on p, and puts p's limit from before
// back when it was the last.
func (w *World) feed(ctx context.Context, env CPUEnv, p Process, id int) error {
	h := w.lock(p)
	defer h.mu.Unlock()
	if _, ok := h.cpus[id]; !ok {
		return nil
	}
	delete(h.cpus, id)
	return limitCPU(ctx, env, p, h)
}

// limitCPU puts on p the fewest CPUs held, or its limit from before if
// none is.
func limitCPU(ctx context.Context, env CPUEnv, p Process, h *holds) error {
	if len(h.cpus) == 0 {
		return env.SetCPULimit(ctx, p, h.cpuBefore)
	}
	return env.SetCPULimit(ctx, p, h.cpuBefore.Capped(slices.Min(slices.Collect(maps.Values(h.cpus)))))
}

// Explore leaves one node, or the leader, 0.02 to 0.25 CPUs.
func (CPU) Explore(rng *rand.Rand, _ int) Entry[CPUParams] {
	return explored(drawRole(rng, "nodes", "leader"), CPUParams{CPUs: []float64{0.02, 0.05, 0.1, 0.25}[rng.IntN(4)]})
}
