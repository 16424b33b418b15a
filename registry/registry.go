// Package registry is the one plug-in registry that targets, workloads,
// nemeses and checkers each keep an instance of, in the manner of
// database/sql's Register: plug-ins register by name in init, plans name them.
package registry

import (
	"sort"
	"sync"
)

// Registry maps names to plug-ins of one kind.
type Registry[T any] struct {
	kind string
	mu   sync.Mutex
	m    map[string]T
}

// New makes a registry for plug-ins of the given kind ("target", ...).
func New[T any](kind string) *Registry[T] { return &Registry[T]{kind: kind, m: map[string]T{}} }

// Register adds p under name. An empty or duplicate name is a programmer
// error and panics.
func (r *Registry[T]) Register(name string, p T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic(r.kind + " registry: empty name")
	}
	if _, dup := r.m[name]; dup {
		panic(r.kind + " registry: " + name + " registered twice")
	}
	r.m[name] = p
}

// Lookup finds the plug-in called name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.m[name]
	return p, ok
}

// Names lists the registered names, sorted, for error messages and help.
func (r *Registry[T]) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := make([]string, 0, len(r.m))
	for n := range r.m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
