package nemesis

import (
	"bytes"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/lazyfs"
	"github.com/chaos-testing/chaos/plans"
)

// aDrop is what the fake disks say every power loss lost.
var aDrop = lazyfs.Dropped{Files: []lazyfs.DroppedFile{
	{Path: "wal/1.log", Ranges: []lazyfs.ByteRange{{Offset: 4096, Length: 100}, {Offset: 8192, Length: 50}}, DurableSize: 4096, SizeBefore: 8242},
	{Path: "db", Ranges: []lazyfs.ByteRange{{Offset: 0, Length: 10}}, DurableSize: 10, SizeBefore: 10},
}}

// diskCluster is a fake cluster of n nodes with a data directory each.
func diskCluster(t *testing.T, n int) (*fakeCluster, map[string]string) {
	c := newFakeCluster(n, 0)
	dirs := map[string]string{}
	for _, name := range c.roles["nodes"] {
		dirs[name] = t.TempDir()
	}
	c.useDisks(dirs, aDrop)
	return c, dirs
}

// A power loss kills its victim before it drops the victim's un-synced
// writes, says what was lost, and restarts the victim at its heal.
func TestPowerLoss(t *testing.T) {
	c, _ := diskCluster(t, 3)
	st := newSteps(t, c)
	var targets []string
	st.want("power loss", st.acts(func() { targets = st.start(0, st.onNode("power-loss", "n2")) }), []string{"KILL n2", "DROP n2"})
	st.want("its targets", targets, []string{"n2 (lost wal/1.log [4096,+100) [8192,+50), 150 bytes, size 8242 to 4096; db [0,+10))"})
	st.want("its heal", st.acts(func() { st.stop(0) }), []string{"RESTART n2"})
}

// A coordinated power loss kills every node before it drops any disk, and
// a node with no disk is killed and restarted all the same.
func TestPowerLossAll(t *testing.T) {
	c, dirs := diskCluster(t, 3)
	delete(dirs, "n3")
	st := newSteps(t, c)
	var targets []string
	acts := st.acts(func() { targets = st.start(0, st.bind("power-loss", plans.Schedule{Target: "all"}, nil)) })
	if len(acts) != 6 || !slices.ContainsFunc(acts[:3], func(a string) bool { return a == "KILL n3" }) ||
		slices.ContainsFunc(acts[:3], func(a string) bool { return !strings.HasPrefix(a, "KILL ") }) ||
		slices.ContainsFunc(acts[3:], func(a string) bool { return !strings.HasPrefix(a, "DROP ") }) {
		t.Errorf("acts %q: want three kills, then three drops", acts)
	}
	if !slices.Contains(targets, "n3 (no disk)") || len(targets) != 3 {
		t.Errorf("targets %q: want each node, n3 with no disk", targets)
	}
	st.want("its heal", sortedActs(st.acts(func() { st.stop(0) })), []string{"RESTART n1", "RESTART n2", "RESTART n3"})
}

// A power loss of a node a kill holds down drops its writes all the same,
// and the node comes back only when both have healed.
func TestPowerLossOfANodeDown(t *testing.T) {
	c, _ := diskCluster(t, 3)
	st := newSteps(t, c)
	st.start(0, st.onNode("kill", "n1"))
	var targets []string
	st.want("power loss", st.acts(func() { targets = st.start(1, st.onNode("power-loss", "n1")) }), []string{"DROP n1"})
	if len(targets) != 1 || !strings.HasPrefix(targets[0], "n1 (already down) (lost ") {
		t.Errorf("targets %q", targets)
	}
	st.want("the kill's heal", st.acts(func() { st.stop(0) }), nil)
	st.want("the power loss's heal", st.acts(func() { st.stop(1) }), []string{"RESTART n1"})
}

// A bitflip flips exactly the bits it says, in a file of its class on a
// stopped node, and restarts the node at its heal.
func TestBitflip(t *testing.T) {
	c, dirs := diskCluster(t, 1)
	orig := bytes.Repeat([]byte{0x55}, 1000)
	writeFile(t, filepath.Join(dirs["n1"], "a.log"), orig)
	writeFile(t, filepath.Join(dirs["n1"], "empty.log"), nil)
	writeFile(t, filepath.Join(dirs["n1"], "other.db"), orig)
	st := newSteps(t, c)
	f := st.bind("bitflip", onlyNode("n1"), &BitflipParams{FileParams: FileParams{Class: "log", Files: 2}, Bits: 5})
	var targets []string
	st.want("bitflip", st.acts(func() { targets = st.start(0, f) }), []string{"KILL n1"})
	got := readFile(t, filepath.Join(dirs["n1"], "a.log"))
	flipped := 0
	for i := range got {
		flipped += bits.OnesCount8(got[i] ^ orig[i])
	}
	// Two flips may hit one bit and undo each other: at most 5, odd parity.
	if flipped > 5 || flipped%2 != 1 {
		t.Errorf("%d bits differ, want 5 flips' worth", flipped)
	}
	if len(targets) != 1 || !strings.HasPrefix(targets[0], "n1 (a.log: flipped bit ") || strings.Count(targets[0], "bit ") != 5 {
		t.Errorf("targets %q: want the five flips of a.log (the empty file and the db left alone)", targets)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dirs["n1"], "other.db")), orig) {
		t.Error("a file of another class changed")
	}
	st.want("its heal", st.acts(func() { st.stop(0) }), []string{"RESTART n1"})
}

// A truncate cuts the bytes asked from the end, or a random amount when
// none is, and says so; a node with no file of the class is left as is.
func TestTruncate(t *testing.T) {
	c, dirs := diskCluster(t, 2)
	writeFile(t, filepath.Join(dirs["n1"], "a.log"), make([]byte, 1000))
	st := newSteps(t, c)
	cut := func(bytes int64) *Fault {
		return st.bind("truncate", onlyNode("n1"), &TruncateParams{FileParams: FileParams{Class: "log", Files: 1}, Bytes: bytes})
	}
	st.want("targets", st.start(0, cut(300)), []string{"n1 (a.log: cut from 1000 to 700 bytes)"})
	if n := len(readFile(t, filepath.Join(dirs["n1"], "a.log"))); n != 700 {
		t.Errorf("a.log holds %d bytes, want 700", n)
	}
	st.stop(0)
	targets := st.start(1, cut(0))
	n := len(readFile(t, filepath.Join(dirs["n1"], "a.log")))
	if n >= 700 || len(targets) != 1 || !strings.HasSuffix(targets[0], fmt.Sprintf("to %d bytes)", n)) {
		t.Errorf("a random cut left %d bytes, targets %q", n, targets)
	}
	st.stop(1)
	none := st.bind("truncate", onlyNode("n2"), &TruncateParams{FileParams: FileParams{Class: "log", Files: 1}})
	st.want("no file", st.start(2, none), []string{"n2 (no log file to change)"})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sortedActs(acts []string) []string { slices.Sort(acts); return acts }
