package containers

import (
	"cmp"
	"context"
	"fmt"

	"github.com/docker/docker/api/types/container"
)

// CPULimit is a container's CPU limit as the Engine keeps it: what
// docker run --cpus sets (NanoCPUs), or a CFS quota per period (--cpu-quota,
// --cpu-period). The zero value is no limit.
type CPULimit struct {
	// NanoCPUs are billionths of a CPU; 0 if the limit is a quota.
	NanoCPUs int64
	// Quota is the CPU time the container may use each Period, in µs; 0
	// is none (the Engine says -1 or 0).
	Quota int64
	// Period is the CFS period, in µs; 0 is the kernel's (defaultPeriod).
	Period int64
}

// defaultPeriod is the CFS period of a cgroup that sets none, in µs: the
// kernel's default, which the Engine's --cpus uses too.
const defaultPeriod = 100_000

// minQuota is the least quota the Engine takes, in µs.
const minQuota = 1000

// Capped is l held to at most cpus CPUs, written as l is written: as
// NanoCPUs if l sets them (the Engine then refuses a quota), or else as a
// quota over l's own period, which stays as it is so that restoring l
// puts everything back. A limit lower than cpus already stays.
func (l CPULimit) Capped(cpus float64) CPULimit {
	if l.NanoCPUs > 0 {
		l.NanoCPUs = min(l.NanoCPUs, int64(cpus*1e9))
		return l
	}
	period := l.Period
	if period == 0 {
		period = defaultPeriod
	}
	quota := max(int64(cpus*float64(period)), minQuota)
	if l.Quota > 0 {
		quota = min(quota, l.Quota)
	}
	l.Quota = quota
	return l
}

// CPULimit reads the container's CPU limit.
func (r *Run) CPULimit(ctx context.Context, c Container) (CPULimit, error) {
	info, err := r.cli.ContainerInspect(ctx, c.ID)
	if err != nil {
		return CPULimit{}, fmt.Errorf("inspect %s: %w", c.Name, err)
	}
	res := info.HostConfig.Resources
	return CPULimit{NanoCPUs: res.NanoCPUs, Quota: max(res.CPUQuota, 0), Period: res.CPUPeriod}, nil
}

// SetCPULimit changes the container's CPU limit live, as docker update
// does: the Engine writes it to the container's cgroup, and keeps it in
// the container's configuration, so that a container down now, or killed
// later, starts again with it. The period is never changed (Capped keeps
// it): the Engine cannot put a period of 0, the kernel's, back.
func (r *Run) SetCPULimit(ctx context.Context, c Container, l CPULimit) error {
	// The Engine's update leaves a field of 0 as it is: -1 is how it is
	// told to take a quota off.
	res := container.Resources{NanoCPUs: l.NanoCPUs}
	if l.NanoCPUs == 0 {
		res.CPUQuota = cmp.Or(l.Quota, -1)
	}
	update := func() error {
		_, err := r.cli.ContainerUpdate(ctx, c.ID, container.UpdateConfig{Resources: res})
		return err
	}
	err := update()
	if err != nil && !r.Running(ctx, c) {
		// A kill took the container as the Engine wrote its cgroup: the
		// Engine refused the whole update, which a container down takes
		// into its configuration alone.
		err = update()
	}
	if err != nil {
		return fmt.Errorf("CPU limit of %s: %w", c.Name, err)
	}
	return nil
}
