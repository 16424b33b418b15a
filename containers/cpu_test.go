package containers_test

import (
	"testing"

	"github.com/chaos-testing/chaos/containers"
)

// A limit capped is written as the limit before was (NanoCPUs, or a quota
// over the container's own period, kept), and never loosened.
func TestCPULimitCapped(t *testing.T) {
	for _, c := range []struct {
		before containers.CPULimit
		cpus   float64
		want   containers.CPULimit
	}{
		{containers.CPULimit{}, 0.05, containers.CPULimit{Quota: 5000}},
		{containers.CPULimit{Quota: 150_000, Period: 50_000}, 0.5, containers.CPULimit{Quota: 25_000, Period: 50_000}},
		{containers.CPULimit{Quota: 20_000}, 0.5, containers.CPULimit{Quota: 20_000}},
		// The Engine takes no quota under 1 ms.
		{containers.CPULimit{Period: 10_000}, 0.05, containers.CPULimit{Quota: 1000, Period: 10_000}},
		{containers.CPULimit{NanoCPUs: 2e9}, 0.5, containers.CPULimit{NanoCPUs: 5e8}},
		{containers.CPULimit{NanoCPUs: 1e8}, 0.5, containers.CPULimit{NanoCPUs: 1e8}},
	} {
		if got := c.before.Capped(c.cpus); got != c.want {
			t.Errorf("%+v capped at %v CPUs: %+v, want %+v", c.before, c.cpus, got, c.want)
		}
	}
}
