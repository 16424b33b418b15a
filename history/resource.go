package history

import (
	"fmt"
	"time"
)

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
func ReadResourceLog(path string) ([]ResourceEntry, *Truncated, error) {
	es, trunc, err := ReadJSONLines(path, func(e *ResourceEntry) error {
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
