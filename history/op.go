// Package history holds the record of a run: every operation's invocation and
// completion, from clients and nemesis alike, on one shared monotonic clock.
package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Type says what an entry is: the start of an operation, or how it ended.
type Type string

const (
	Invoke Type = "invoke" // the operation was sent
	Ok     Type = "ok"     // it took effect
	Fail   Type = "fail"   // it certainly did not take effect
	Info   Type = "info"   // its outcome is unknown: it may or may not have taken effect
)

// Nemesis is the process number of the fault injector.
const Nemesis = -1

// Observer is the process number of the role poller, which asks every
// node of the cluster, from outside the run's network faults, which role
// it claims.
const Observer = -2

// Server is the process number of what the system under test does on its
// own, such as a lease expiring: checkers add such invocations, of unknown
// outcome, to what they check; no history file holds them.
const Server = -3

// Op is one history entry. An invocation and its completion are separate
// entries of the same process; a process has at most one operation in flight.
type Op struct {
	// Index is the entry's position in the history file (0-based line
	// number). It is assigned when the file is read; a stored value is ignored.
	Index int `json:"index,omitempty"`
	// Time is nanoseconds since the run started, on the run's shared clock.
	Time    time.Duration   `json:"time"`
	Type    Type            `json:"type"`
	Process int             `json:"process"`
	F       string          `json:"f"`
	Value   json.RawMessage `json:"value,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Valid reports whether t is one of the four entry types.
func (t Type) Valid() bool {
	switch t {
	case Invoke, Ok, Fail, Info:
		return true
	}
	return false
}

// ProcessName is how reports name a process: "nemesis" or "p3".
func ProcessName(p int) string {
	switch p {
	case Nemesis:
		return "nemesis"
	case Observer:
		return "observer"
	case Server:
		return "server"
	}
	return fmt.Sprintf("p%d", p)
}

// maxShownValue bounds the value String shows.
const maxShownValue = 400

// String renders an op on one line for findings and logs.
func (o Op) String() string {
	s := fmt.Sprintf("#%d %s %.3fs %s %s", o.Index, ProcessName(o.Process), o.Time.Seconds(), o.Type, o.F)
	if len(o.Value) > 0 {
		var b bytes.Buffer
		v := string(o.Value)
		if json.Compact(&b, o.Value) == nil {
			v = b.String() // a value read back from indented JSON
		}
		if len(v) > maxShownValue { // a watch's responses: the file has them whole
			v = fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(v[:maxShownValue], ""), len(v))
		}
		s += " " + v
	}
	if o.Error != "" {
		s += " (" + o.Error + ")"
	}
	return s
}

// Decode unmarshals the op's value into v.
func (o Op) Decode(v any) error {
	if len(o.Value) == 0 {
		return fmt.Errorf("op #%d %s has no value", o.Index, o.F)
	}
	if err := json.Unmarshal(o.Value, v); err != nil {
		return fmt.Errorf("op #%d %s: value %s: %w", o.Index, o.F, o.Value, err)
	}
	return nil
}
