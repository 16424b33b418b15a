package plans

import "testing"

// TestRandSeedsDiffer: the first coin flip of seeds 1..20 is not one
// value for all, as it was with PCG seeded directly.
func TestRandSeedsDiffer(t *testing.T) {
	heads := 0
	for seed := int64(1); seed <= 20; seed++ {
		heads += Rand(seed, FaultStream(0)).IntN(2)
	}
	if heads < 4 || heads > 16 {
		t.Errorf("%d heads in 20 first flips", heads)
	}
	if Rand(7, FaultStream(1)).Uint64() == Rand(7, FaultStream(2)).Uint64() || Rand(7, FaultStream(1)).Uint64() != Rand(7, FaultStream(1)).Uint64() {
		t.Error("streams of one seed are equal, or one stream is not reproducible")
	}
}

// TestRandStreamsOfFaultsAndClients: fault i and client i draw different
// numbers (they drew the same when streams were numbered).
func TestRandStreamsOfFaultsAndClients(t *testing.T) {
	for i := range 5 {
		if Rand(1, FaultStream(i)).Uint64() == Rand(1, ClientStream(i)).Uint64() {
			t.Errorf("fault %d and client %d share a stream", i, i)
		}
	}
}
