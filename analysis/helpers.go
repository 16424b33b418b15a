// Small helpers shared by the checkers: wording for explanations and notes,
// and a few generic bits the standard library lacks.
package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// secs is how explanations give a time in the run.
func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// describeCounts lists counts by name, in name order: "cas ×2, read ×5".
func describeCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// cmpOr is cmp.Or for types that are not ordered: the first non-empty value.
func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// errCount counts errors and keeps the first, so that a note can say how
// many entries were unreadable and show one.
type errCount struct {
	n     int
	first error
}

func (c *errCount) add(err error) {
	if c.n == 0 {
		c.first = err
	}
	c.n++
}
