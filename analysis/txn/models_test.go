package txn

import (
	"slices"
	"testing"
)

// TestBoundary: Elle's boundaries for a few anomalies (its tests and
// README; Elle names strict serializability strong-serializable).
func TestBoundary(t *testing.T) {
	for _, c := range []struct {
		anomalies []string
		not       []string
	}{
		{[]string{"G1c"}, []string{"read-committed"}},
		{[]string{"G2-item"}, []string{"repeatable-read"}},
		{[]string{"G-single-item"}, []string{"consistent-view", "repeatable-read"}},
		{[]string{"G-single-item-realtime"}, []string{"strong-snapshot-isolation"}},
		{[]string{"G-single-item-process"}, []string{"strong-session-snapshot-isolation"}},
		{[]string{"G-nonadjacent-item"}, []string{"repeatable-read", "snapshot-isolation"}},
		{[]string{"G2-item-realtime"}, []string{"strict-serializable"}},
		{[]string{"G1a"}, []string{"read-committed"}},
		{[]string{"G1a", "G0"}, []string{"read-uncommitted"}},
		{[]string{"internal"}, []string{"read-atomic"}},
		{[]string{"cyclic-versions"}, []string{"read-uncommitted"}},
	} {
		not, alsoNot := boundary(impossibleModels(c.anomalies))
		if !slices.Equal(not, c.not) {
			t.Errorf("%v rule out %v (also %v), want %v", c.anomalies, not, alsoNot, c.not)
		}
	}
}
