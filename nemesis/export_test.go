package nemesis

import (
	"fmt"
	"testing"

	"github.com/chaos-testing/chaos/plans"
)

// bind binds a fault of kind, scheduled as s, with its own fields params
// (a *P of the kind's, nil for none given), against set, as bind.Bind
// binds a plan's fault once its schedule is resolved: the kind's Check
// refuses it or fills its defaults. The schedule is taken as given (no
// plans.Schedule.Resolve): tests that want the shared checks call it.
func bind(kind string, s plans.Schedule, params any, set Setting) (*Fault, error) {
	n, ok := Nemeses.Lookup(kind)
	if !ok {
		return nil, fmt.Errorf("unknown fault kind %q", kind)
	}
	if params == nil {
		params = n.NewParams()
	}
	return n.Bind(s, params, set)
}

// bindFault is bind for a fault the test means to be valid.
func bindFault(t testing.TB, kind string, s plans.Schedule, params any, set Setting) *Fault {
	t.Helper()
	f, err := bind(kind, s, params, set)
	if err != nil {
		t.Fatalf("%s on %+v: %v", kind, s, err)
	}
	return f
}

// BindFault is bindFault for the tests of package nemesis_test, which
// schedule bound faults and cannot make them otherwise.
var BindFault = bindFault
