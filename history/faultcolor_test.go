package history_test

import (
	"regexp"
	"testing"

	"github.com/chaos-testing/chaos/history"
)

// TestFaultColor: a kind chaos has keeps its chosen colour; any other
// kind gets a pale one of its own, the same every time, so that a new
// fault is told apart from its neighbours without being listed.
func TestFaultColor(t *testing.T) {
	if got := history.FaultColor("pause"); got != "#fff1c1" {
		t.Errorf("pause drawn in %s, want its chosen #fff1c1", got)
	}
	pale := regexp.MustCompile(`^#[d-f][0-9a-f][d-f][0-9a-f][d-f][0-9a-f]$`)
	a, b := history.FaultColor("freeze-all"), history.FaultColor("stall")
	if !pale.MatchString(a) || !pale.MatchString(b) {
		t.Errorf("new kinds drawn in %s and %s, want pale colours", a, b)
	}
	if a == b || a != history.FaultColor("freeze-all") {
		t.Errorf("freeze-all %s, stall %s: want a colour of each kind's own, the same every time", a, b)
	}
}
