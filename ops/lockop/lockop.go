// Package lockop is the operation vocabulary of lock workloads and leader
// elections: the names of their operations, the values those carry, and
// the log of the resource that holders write to.
package lockop

import (
	"fmt"
	"time"

	"github.com/chaos-testing/chaos/history"
)

// Operation names and values of lock workloads. A client numbers its
// successful acquisitions ("sessions") 1, 2, ...; every write and release it
// makes while holding the lock carries that session, so an analyzer can tie
// a write accepted by the resource back to the acquisition it relied on.
const (
	FAcquire = "acquire"
	FRelease = "release"
	FWrite   = "write"
)

// Operation names of leader elections: a client campaigns until elected
// (its value a Value, the token being its term or fencing token),
// writes to the resource while it leads, and resigns, or learns that it
// lost, which it records as a resign that failed.
const (
	FCampaign = "campaign"
	FResign   = "resign"
)

// Value is the value of acquire and release ops. Session and Token are
// set on a successful acquire's completion and on the release.
type Value struct {
	Lock    string `json:"lock"`
	Session int    `json:"session,omitempty"`
	// Token is the fencing token the lock service handed out, if it has one.
	// Redlock has none: nil, never an invented number.
	Token *int64 `json:"token"`
}

// WriteValue is the value of a write to the protected resource.
type WriteValue struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Session int    `json:"session"`
	Token   *int64 `json:"token"`
}

// ResourceEntry is one line of the protected resource's log: a write
// attempt and the resource's decision, stamped on the run's clock.
type ResourceEntry struct {
	Time     time.Duration `json:"time"`
	Client   int           `json:"client"`
	Key      string        `json:"key"`
	Value    string        `json:"value"`
	Session  int           `json:"session"`
	Token    *int64        `json:"token"`
	Accepted bool          `json:"accepted"`
	// Reason says why a write was rejected.
	Reason string `json:"reason,omitempty"`
	// Line is the entry's 1-based line in the log, set when read.
	Line int `json:"-"`
}

// ReadResourceLog loads a protected resource's log.
func ReadResourceLog(path string) ([]ResourceEntry, *history.Truncated, error) {
	es, trunc, err := history.ReadJSONLines(path, func(e *ResourceEntry) error {
		if e.Key == "" {
			return fmt.Errorf(`missing "key"`)
		}
		return nil
	})
	for i := range es {
		es[i].Line = i + 1
	}
	return es, trunc, err
}
