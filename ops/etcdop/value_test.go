package etcdop

import "testing"

// A large value travels with its filler and is recorded without it; a
// filler that came back altered is recorded whole, for the model to see.
func TestLargeValues(t *testing.T) {
	v := "p3-17#32769"
	if w := Wire(v); len(w) != len("p3-17#")+32769 || Recorded(w) != v {
		t.Errorf("%q: sent as %d bytes, recorded back as %q", v, len(Wire(v)), Recorded(Wire(v)))
	}
	for _, v := range []string{"p3-17", "p3-17#xxy", "p3-17#"} {
		if Wire(v) != v || Recorded(v) != v {
			t.Errorf("%q: sent as %q, recorded as %q; want it as is", v, Wire(v), Recorded(v))
		}
	}
	if got := Recorded(Wire(v)[:100]); got != "p3-17#94" {
		t.Errorf("a truncated large value recorded as %q", got)
	}
}
