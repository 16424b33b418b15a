package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
	l := NewLine(&b, true, time.Hour)
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

func TestLogGetsALineNowAndThen(t *testing.T) {
	var b bytes.Buffer
	l := NewLine(&b, false, time.Hour)
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
	task := &Task{Line: NewLine(&b, false, 0), label: "building x", start: time.Now().Add(-3 * time.Second)}
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
	task := Start(&b, "building x")
	task.Set(1, 2, "half")
	time.Sleep(1100 * time.Millisecond) // one redraw
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
