package plans

import "math/rand/v2"

// Rand is the generator of one stream of a run's randomness (a fault's
// victims, a client's operations), from the run's seed. The seed is mixed
// first (SplitMix64's finalizer): PCG seeded with neighbouring small
// numbers gives correlated first draws, so that seeds 1 to 5 all cut off
// the same nodes.
func Rand(seed int64, stream int) *rand.Rand {
	return rand.New(rand.NewPCG(mix(uint64(seed)), mix(uint64(stream)^0x9e3779b97f4a7c15)))
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
