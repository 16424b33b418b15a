package nemesis

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/lazyfs"
)

// ask has n's disk asked about op once the fault has put its rule on it.
func ask(t *testing.T, c *fakeCluster, node string, ops ...lazyfs.Op) <-chan []syscall.Errno {
	rules, err := c.Rules(Process{Name: node})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan []syscall.Errno, 1)
	go func() {
		for rules.Len() == 0 {
			time.Sleep(time.Millisecond)
		}
		var got []syscall.Errno
		for _, op := range ops {
			got = append(got, rules.Before(context.Background(), op))
		}
		out <- got
	}()
	return out
}

// A crash point kills its victim at the Nth operation it counts, fails
// that operation (the process is dead), says which it was, and restarts
// the node at its heal; with a power loss, the drop follows the kill; a
// pause lets the operation go on; one that never fires does nothing.
func TestCrashPoint(t *testing.T) {
	fsync := lazyfs.Op{Name: "fdatasync", Path: "member/wal/1.wal"}
	write := lazyfs.Op{Name: "write", Path: "member/wal/1.wal", Len: 4}
	for _, c := range []struct {
		action     string
		acts, heal []string
		last       syscall.Errno
	}{
		{"kill", []string{"KILL n2"}, []string{"RESTART n2"}, syscall.EIO},
		{"power-loss", []string{"KILL n2", "DROP n2"}, []string{"RESTART n2"}, syscall.EIO},
		{"pause", []string{"STOP n2"}, []string{"CONT n2"}, 0},
	} {
		t.Run(c.action, func(t *testing.T) {
			fc, _ := diskCluster(t, 3)
			st := newSteps(t, fc)
			f := st.bind("crash-point", onlyNode("n2"), &CrashParams{DiskOpsParams: DiskOpsParams{Ops: []string{"fsync"}}, Nth: 2, Action: c.action})
			answers := ask(t, fc, "n2", write, fsync, fsync)
			var targets []string
			st.want("the crash", st.acts(func() { targets = st.start(0, f) }), c.acts)
			if got := <-answers; !slices.Equal(got, []syscall.Errno{0, 0, c.last}) {
				t.Errorf("answers %v, want the second fsync's %v", got, c.last)
			}
			if len(targets) != 1 || !strings.Contains(targets[0], "at the fdatasync of member/wal/1.wal") {
				t.Errorf("targets %q: want the operation named", targets)
			}
			st.want("its heal", st.acts(func() { st.stop(0) }), c.heal)
		})
	}
	fc, _ := diskCluster(t, 3)
	st := newSteps(t, fc)
	var targets []string
	f := st.bind("crash-point", onlyNode("n1"), &CrashParams{DiskOpsParams: DiskOpsParams{Ops: []string{"rename"}}})
	st.want("armed, never fired", st.acts(func() { targets = st.start(0, f) }), nil)
	st.want("its targets", targets, []string{"n1 (armed for the 1st rename, never fired)"})
	st.want("its heal", st.acts(func() { st.stop(0) }), nil)
	if rules, _ := fc.Rules(Process{Name: "n1"}); rules.Len() != 0 {
		t.Errorf("%d rules left on n1's disk", rules.Len())
	}
}

// A crash point on the log fires at the first line its pattern matches,
// and names it.
func TestCrashPointOnLog(t *testing.T) {
	fc, _ := diskCluster(t, 3)
	st := newSteps(t, fc)
	f := st.bind("crash-point", onlyNode("n3"), &CrashParams{Log: "compaction finished"})
	go func() {
		fc.logTo("n3", `{"msg":"compaction started"}`)
		fc.logTo("n3", `{"level":"info","ts":"2026-12-06T12:51:13.983457Z","caller":"mvcc/kvstore_compaction.go:72","msg":"compaction finished","revision":12,"took":"462.662086ms","hash":3489078056,"current-db-size-bytes":20480}`)
	}()
	var targets []string
	st.want("the crash", st.acts(func() { targets = st.start(0, f) }), []string{"KILL n3"})
	// The line is quoted around its match, not whole.
	if len(targets) != 1 || !strings.Contains(targets[0], `killed at the log line "...`) || !strings.Contains(targets[0], `\"msg\":\"compaction finished\"`) ||
		!strings.Contains(targets[0], `..."`) || strings.Contains(targets[0], "current-db-size") {
		t.Errorf("targets %q: want the line named", targets)
	}
	st.want("its heal", st.acts(func() { st.stop(0) }), []string{"RESTART n3"})
	if _, err := bind("crash-point", onlyNode("n3"), &CrashParams{Log: "x", Nth: 2}, fc.setting()); err == nil {
		t.Errorf("a crash point on the log and on operations: accepted")
	}
}

// An excerpt keeps whole characters at its edges.
func TestExcerpt(t *testing.T) {
	for _, c := range []struct {
		line string
		m    []int
		n    int
		want string
	}{
		{"abcdefgh", []int{3, 5}, 1, "...cdef..."},
		{"abcdefgh", []int{0, 8}, 1, "abcdefgh"},
		{"ééxéé", []int{4, 5}, 1, "...éxé..."},
	} {
		if got := excerpt(c.line, c.m, c.n); got != c.want {
			t.Errorf("excerpt(%q, %v, %d) = %q, want %q", c.line, c.m, c.n, got, c.want)
		}
	}
}
