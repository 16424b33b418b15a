package history

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Lines appends JSON values, one a line, to a file that other processes
// may be appending to as well (the harness and each client, in their own
// containers, share a run's history). The file is opened with O_APPEND and
// each line goes out in a single write(2), so lines never interleave, and a
// line is in the kernel the moment Write returns: a run killed at any point
// leaves a readable prefix.
type Lines struct {
	mu sync.Mutex
	f  *os.File
}

// OpenLines opens path for appending, creating it if needed.
func OpenLines(path string) (*Lines, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Lines{f: f}, nil
}

// Write appends v as one line.
func (l *Lines) Write(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("append to %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close syncs the file to stable storage and closes it.
func (l *Lines) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.f.Sync(); err != nil {
		l.f.Close()
		return fmt.Errorf("sync %s: %w", l.f.Name(), err)
	}
	return l.f.Close()
}

// Appender writes one process's ops to a run's history.
type Appender struct {
	lines *Lines
	clock Clock
	proc  int
}

// OpenAppender opens (creating if needed) the history at path for process
// proc, stamping entries with clock.
func OpenAppender(path string, clock Clock, proc int) (*Appender, error) {
	l, err := OpenLines(path)
	if err != nil {
		return nil, err
	}
	return &Appender{lines: l, clock: clock, proc: proc}, nil
}

// Append stamps op with the current time and this appender's process and
// writes it. It returns the stamped op.
func (a *Appender) Append(op Op) (Op, error) {
	op.Time = a.clock.Now()
	op.Process = a.proc
	return op, a.lines.Write(op)
}

// Invoke appends the invocation of f with value v.
func (a *Appender) Invoke(f string, v any) (Op, error) {
	return a.Append(Op{Type: Invoke, F: f, Value: MustValue(v)})
}

// Complete appends the completion of f: typ is Ok, Fail or Info.
func (a *Appender) Complete(typ Type, f string, v any, err error) (Op, error) {
	op := Op{Type: typ, F: f, Value: MustValue(v)}
	if err != nil {
		op.Error = err.Error()
	}
	return a.Append(op)
}

// Close syncs and closes the history.
func (a *Appender) Close() error { return a.lines.Close() }

// MustValue encodes v as an op value; nil gives no value. Values are plain
// data made by this program, so failure to encode is a programmer error.
func MustValue(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("history value %T: %v", v, err))
	}
	return b
}
