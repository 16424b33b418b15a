package plans

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
)

// Rand is the generator of one named stream of a run's randomness ("fault
// 0"'s victims, "client 2"'s operations), from the run's seed. Each stream
// has a name of its own, so that no two parts of a run draw the same
// numbers, as fault i and client i did when streams were numbered. The
// seed is mixed first (SplitMix64's finalizer): PCG seeded with
// neighbouring small numbers gives correlated first draws, so that seeds 1
// to 5 all cut off the same nodes.
func Rand(seed int64, stream string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(stream))
	return rand.New(rand.NewPCG(mix(uint64(seed)), mix(h.Sum64())))
}

// FaultStream and ClientStream name the streams of the plan's i-th fault
// and of client process i.
func FaultStream(i int) string  { return "fault " + strconv.Itoa(i) }
func ClientStream(i int) string { return "client " + strconv.Itoa(i) }

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
