// Package roleop is the operation vocabulary of the role observer
// (history.Observer): its polls of each node's claimed role.
package roleop

// FRole is an observer's question to one node: which role do you claim,
// and do you accept a write?
const FRole = "role"

// Value is the value of a role observation. On the completion, Role is
// what the node answered ("master", "slave") and Accepts whether it took
// a probe write.
type Value struct {
	Node    string `json:"node"`
	Role    string `json:"role,omitempty"`
	Accepts bool   `json:"accepts,omitempty"`
}
