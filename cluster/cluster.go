// Package cluster names a started cluster's parts as the targets that
// start it, the faults that hit it and the runner share them: its nodes,
// each a server in a container of the run. It sits below all three, so
// that a fault can ask a target for what it needs (a leader, a member
// removed) without either importing the other.
package cluster

import "github.com/chaos-testing/chaos/containers"

// Node is one server of a started cluster.
type Node struct {
	Container containers.Container
	// Addr is host:port for clients on the run's network. It uses the
	// node's name, which survives a restart; the harness itself reaches
	// the node at Container.IP. It is empty for a server that clients find
	// through another (Redis servers behind Sentinel).
	Addr string
	// Kind tells apart the servers of a target that runs two kinds
	// ("sentinel"); "" is the servers that hold the data.
	Kind string
}

// Name is the node's name in the run: n1, n2, ... (s1, ... for servers of
// another kind).
func (n Node) Name() string { return n.Container.Name }
