package history

// Operation names of the set workload: clients add unique numbers to one
// set and, after the faults are healed, read it whole (FRead).
const FAdd = "add"

// SetValue is the value of an add, or of a final read. Node is the server
// that answered (on completions), so a lost add names who acknowledged it.
type SetValue struct {
	Element *int64  `json:"element,omitempty"`
	Read    []int64 `json:"read,omitempty"`
	Node    string  `json:"node,omitempty"`
	// Holes, on a read, are what the server counted in the set but did
	// not return (a stream's sequence numbers it skipped), as it said.
	Holes string `json:"holes,omitempty"`
}

// Observer is the process number of the role poller, which asks every
// node of the cluster, from outside the run's network faults, which role
// it claims.
const Observer = -2

// FRole is an observer's question to one node: which role do you claim,
// and do you accept a write?
const FRole = "role"

// RoleValue is the value of a role observation. On the completion, Role is
// what the node answered ("master", "slave") and Accepts whether it took
// a probe write.
type RoleValue struct {
	Node    string `json:"node"`
	Role    string `json:"role,omitempty"`
	Accepts bool   `json:"accepts,omitempty"`
}
