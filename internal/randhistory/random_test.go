package randhistory

import "testing"

func TestFuzzBytes(t *testing.T) {
	b := FuzzBytes{7, 200}
	if got := []int{b.IntN(4), b.IntN(3), b.IntN(5)}; got[0] != 3 || got[1] != 2 || got[2] != 0 {
		t.Fatalf("choices %v, expected [3 2 0]: a byte each modulo n, then 0", got)
	}
}
