package set

import (
	"testing"
	"time"
)

// TestNeedsCoverFinalReads: the time a set client asks to finish covers
// its final phase at its longest (settling, then every try of the final
// read running to its timeout), which the runner's old bound for every
// workload, 30 s, cut off.
func TestNeedsCoverFinalReads(t *testing.T) {
	worst := opTimeout + settle + readTries*readTimeout + (readTries-1)*time.Second
	if got := (Workload{}).Needs(Params{}).Finish; got < worst {
		t.Errorf("Finish %s, shorter than the final phase at its longest (%s)", got, worst)
	}
}
