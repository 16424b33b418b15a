package txn

import (
	"testing"
	"time"
)

func TestShowTimes(t *testing.T) {
	a, b := showTimes(1234*time.Millisecond, 1300*time.Millisecond)
	c, d := showTimes(1*time.Nanosecond, 2*time.Nanosecond)
	if a != "1.234s" || b != "1.300s" || c != "1ns" || d != "2ns" {
		t.Fatalf("%s %s %s %s", a, b, c, d)
	}
}
