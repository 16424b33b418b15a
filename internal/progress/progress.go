// Package progress shows how far a long step has come: a status line
// rewritten in place on a terminal, or a line every few seconds on a log
// (CI, a file), where rewriting in place would only leave a mess.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/chaos-testing/chaos/internal/clock"
)

// IsTerminal reports whether w is a terminal: only one gets a line
// redrawn in place (/dev/null, a character device too, is not one).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// width is how many columns the terminal w has, 0 if it cannot say.
func width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// fit cuts s to cols-1 columns (0: as it is), so that a redrawn line
// never wraps: a wrapped line cannot be redrawn in place, and smears.
func fit(s string, cols int) string {
	if cols <= 1 || utf8.RuneCountInString(s) < cols {
		return s
	}
	r := []rune(s)
	return string(r[:cols-2]) + "…"
}

// barWidth is the number of cells in a bar.
const barWidth = 20

// Bar draws frac (0 to 1) as a bar of barWidth cells.
func Bar(frac float64) string {
	done := min(barWidth, max(0, int(frac*barWidth)))
	return "[" + strings.Repeat("=", done) + strings.Repeat(" ", barWidth-done) + "]"
}

// Line is one status line. It is safe for concurrent use.
type Line struct {
	mu       sync.Mutex
	w        io.Writer
	clock    clock.Clock
	terminal bool
	// every is how often a log gets a new line.
	every time.Duration
	last  time.Time
	shown string // what the terminal shows now
	// width says how many columns the terminal has (tests set it).
	width func(io.Writer) int
}

// NewLine makes a status line on w, rewritten in place when terminal is
// set, else written out at most once per every of c's time.
func NewLine(w io.Writer, terminal bool, every time.Duration, c clock.Clock) *Line {
	return &Line{w: w, terminal: terminal, every: every, clock: c, width: width}
}

// Show replaces the status with s.
func (l *Line) Show(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminal {
		l.draw(s)
		return
	}
	if now := l.clock.Now(); now.Sub(l.last) >= l.every {
		fmt.Fprintln(l.w, s)
		l.last = now
	}
}

// draw writes s over the line shown, cut to the terminal's width (the
// width asked each time: a window may be resized), padding out what is
// left of the line shown.
func (l *Line) draw(s string) {
	s = fit(s, l.width(l.w))
	fmt.Fprintf(l.w, "\r%s%s", s, strings.Repeat(" ", max(0, utf8.RuneCountInString(l.shown)-utf8.RuneCountInString(s))))
	l.shown = s
}

// Print writes a line of its own above the status line.
func (l *Line) Print(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.terminal || l.shown == "" {
		fmt.Fprintln(l.w, s)
		return
	}
	status := l.shown
	l.draw(s)
	fmt.Fprintln(l.w)
	l.shown = ""
	l.draw(status)
}

// Done ends the status line; the terminal keeps its last state.
func (l *Line) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminal && l.shown != "" {
		fmt.Fprintln(l.w)
		l.shown = ""
	}
}

// Task is a long step with a bar of how much of its work is done and how
// long it has taken, redrawn every second until Stop.
type Task struct {
	*Line
	label string
	start time.Time
	mu    sync.Mutex
	done  int64
	total int64
	note  string
	stop  func()
}

// Start shows a task's status line on w, a terminal or a log.
func Start(w io.Writer, label string) *Task { return StartClock(w, label, clock.Real) }

// StartClock is Start on c's time.
func StartClock(w io.Writer, label string, c clock.Clock) *Task {
	t := &Task{Line: NewLine(w, IsTerminal(w), 5*time.Second, c), label: label, start: c.Now()}
	t.stop = Refresh(c, time.Second, func() { t.Show(t.status()) })
	return t
}

// Refresh calls update every period of c's time until the returned
// function is called, which returns once update has run for the last time.
func Refresh(c clock.Clock, every time.Duration, update func()) (stop func()) {
	tick, stopTick := c.Tick(every)
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-quit:
				return
			case <-tick:
				update()
			}
		}
	}()
	return func() {
		stopTick()
		close(quit)
		<-ended
	}
}

// Set records that done of total units of work are done (total 0: not
// known) and what is being done now.
func (t *Task) Set(done, total int64, note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done, t.total, t.note = done, total, note
}

func (t *Task) status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.label + " "
	if t.total > 0 {
		s += fmt.Sprintf("%s %d/%d ", Bar(float64(t.done)/float64(t.total)), t.done, t.total)
	}
	if t.note != "" {
		s += t.note + ", "
	}
	return s + fmt.Sprintf("%ds", int(t.clock.Now().Sub(t.start).Seconds()))
}

// Stop ends the task's line; final, if not empty, is printed after it.
func (t *Task) Stop(final string) {
	t.stop()
	t.Done()
	if final != "" {
		t.Print(final)
	}
}

// Lines is a writer that calls a function with each line written to it, as
// the line ends: a command's output, watched for the progress it reports.
type Lines struct {
	line    func(string)
	partial []byte
}

// NewLines calls line with each line (without its end, "\n" or "\r";
// blank lines are skipped).
func NewLines(line func(string)) *Lines { return &Lines{line: line} }

func (l *Lines) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexAny(l.partial, "\r\n")
		if i < 0 {
			return len(p), nil
		}
		if s := string(l.partial[:i]); strings.TrimSpace(s) != "" {
			l.line(s)
		}
		l.partial = l.partial[i+1:]
	}
}

// Partial is the last line, not yet ended.
func (l *Lines) Partial() string { return string(l.partial) }
