package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/internal/clock"
)

func TestBar(t *testing.T) {
	for _, c := range []struct {
		frac float64
		want string
	}{
		{0, "[                    ]"},
		{0.5, "[==========          ]"},
		{1, "[====================]"},
		{2, "[====================]"},
		{-1, "[                    ]"},
	} {
		if got := Bar(c.frac); got != c.want {
			t.Errorf("Bar(%v) = %q, want %q", c.frac, got, c.want)
		}
	}
}

func TestTerminalLineIsRewrittenInPlace(t *testing.T) {
	var b bytes.Buffer
	l := NewLine(&b, true, time.Hour, clock.Real)
	l.Show("a long status")
	l.Show("short")
	l.Print("a message")
	l.Done()
	want := "\ra long status" +
		"\rshort        " + // padded over the longer line
		"\ra message" + "\n" + // the message takes the line...
		"\rshort" + // ...and the status is drawn again below it
		"\n"
	if b.String() != want {
		t.Errorf("terminal output\n%q\nwant\n%q", b.String(), want)
	}
}

// A line longer than the terminal is wide is cut short of its last
// column, so that it never wraps (a wrapped line cannot be redrawn in
// place); the width is asked at each redraw, as a window may be resized.
func TestTerminalLineFitsTheWidth(t *testing.T) {
	var b bytes.Buffer
	cols := 10
	l := NewLine(&b, true, time.Hour, clock.Real)
	l.width = func(io.Writer) int { return cols }
	l.Show("0123456789abcdef")
	cols = 80
	l.Show("0123456789abcdef")
	want := "\r01234567…" + "\r0123456789abcdef"
	if b.String() != want {
		t.Errorf("terminal output\n%q\nwant\n%q", b.String(), want)
	}
	if fit("héllo", 0) != "héllo" || fit("héllo wörld", 6) != "héll…" {
		t.Errorf("fit: %q, %q", fit("héllo", 0), fit("héllo wörld", 6))
	}
}

// /dev/null is a character device, not a terminal: it gets no redraws.
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("IsTerminal(/dev/null) = true")
	}
}

func TestLogGetsALineNowAndThen(t *testing.T) {
	var b bytes.Buffer
	l := NewLine(&b, false, time.Hour, clock.Real)
	l.Show("first")
	l.Show("second") // within the hour: not written
	l.Print("a message")
	l.Done()
	if want := "first\na message\n"; b.String() != want {
		t.Errorf("log output %q, want %q", b.String(), want)
	}
}

func TestTaskShowsItsBar(t *testing.T) {
	var b bytes.Buffer
	clock := clock.NewFake(time.Unix(100, 0))
	task := &Task{Line: NewLine(&b, false, 0, clock), label: "building x", start: clock.Now().Add(-3 * time.Second)}
	task.Set(2, 8, "extracting archives")
	if got, want := task.status(), "building x [=====               ] 2/8 extracting archives, 3s"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	task.Set(0, 0, "")
	if got, want := task.status(), "building x 3s"; got != want {
		t.Errorf("status without a total %q, want %q", got, want)
	}
}

func TestTaskStopPrintsTheFinalLine(t *testing.T) {
	var b bytes.Buffer
	clock := clock.NewFake(time.Unix(100, 0))
	task := StartClock(&b, "building x", clock)
	task.Set(1, 2, "half")
	clock.Advance(1500 * time.Millisecond) // one redraw, received before Advance returns
	task.Stop("built x")
	out := b.String()
	if !strings.Contains(out, "building x [==========          ] 1/2 half, 1s\n") || !strings.HasSuffix(out, "built x\n") {
		t.Errorf("output %q: want the bar, then the final line", out)
	}
}

func TestLinesSplitsAcrossWrites(t *testing.T) {
	var got []string
	l := NewLines(func(s string) { got = append(got, s) })
	for _, p := range []string{"I: one\nI: t", "wo\r\n", "\nlast"} {
		if n, err := l.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if strings.Join(got, "|") != "I: one|I: two" || l.Partial() != "last" {
		t.Errorf("lines %q, partial %q; want [I: one I: two] and \"last\"", got, l.Partial())
	}
}

// Refresh on a fake clock updates once per period passed, and not after
// it is stopped.
func TestRefreshOnFakeClock(t *testing.T) {
	clock := clock.NewFake(time.Unix(100, 0))
	n := 0
	stop := Refresh(clock, time.Second, func() { n++ })
	clock.Advance(3500 * time.Millisecond)
	stop()
	clock.Advance(5 * time.Second)
	if n != 3 {
		t.Errorf("%d updates in 3.5 periods, want 3", n)
	}
}

// A log gets a status line at most once per its period.
func TestLogLineRate(t *testing.T) {
	clock := clock.NewFake(time.Unix(100, 0))
	var b bytes.Buffer
	l := NewLine(&b, false, 2*time.Second, clock)
	for i := 1; i <= 4; i++ {
		clock.Advance(time.Second)
		l.Show(fmt.Sprintf("update %d", i))
	}
	if got := b.String(); got != "update 1\nupdate 3\n" {
		t.Errorf("log %q, want updates 1 and 3 (2 s apart)", got)
	}
}
