// Small helpers shared by the checkers: wording for explanations and notes,
// and a few generic bits the standard library lacks.

package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Secs is how explanations give a time in the run.
func Secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// DescribeCounts lists counts by name, in name order: "cas ×2, read ×5".
func DescribeCounts(m map[string]int) string {
	var parts []string
	for _, k := range SortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// SortedKeys lists m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// CmpOr is cmp.Or for types that are not ordered: the first non-empty value.
func CmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// BoolInt is 1 for true, 0 for false.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ErrCount counts errors and keeps the first, so that a note can say how
// many entries were unreadable and show one.
type ErrCount struct {
	N     int
	First error
}

// Add counts err, keeping it if it is the first.
func (c *ErrCount) Add(err error) {
	if c.N == 0 {
		c.First = err
	}
	c.N++
}
