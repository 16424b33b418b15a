package setop

import "testing"

// TestSeqRanges: holes print as ranges, single numbers alone, empty ranges
// left out.
func TestSeqRanges(t *testing.T) {
	var r SeqRanges
	r.Add(5, 4)
	if len(r) != 0 {
		t.Fatalf("after an empty range: %v", r)
	}
	r.Add(2, 2)
	r.Add(7, 9)
	if got := r.String(); got != "2, 7-9" || r.Count() != 4 {
		t.Errorf("String() = %q, Count() = %d; want \"2, 7-9\", 4", got, r.Count())
	}
}
