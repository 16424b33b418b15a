package bind

import (
	"slices"

	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

// Variants are the plans comparison plan p runs (plans.Plan.Variants),
// each field a variant gives going to its target when the target has
// it, and to the workload otherwise.
func Variants(p *plans.Plan) []*plans.Plan {
	return p.Variants(func(target, field string) bool {
		t, ok := targets.Targets.Lookup(target)
		return ok && slices.Contains(plans.FieldNames(t.NewParams()), field)
	})
}
