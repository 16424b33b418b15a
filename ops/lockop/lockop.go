// Package lockop is the operation vocabulary of lock workloads and leader
// elections: the names of their operations and the values those carry.
// What the protected resource they write to logs is history's
// (history.ResourceEntry), a record of every run with a resource.
package lockop

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
