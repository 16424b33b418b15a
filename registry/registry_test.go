package registry_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chaos-testing/chaos/registry"
)

func TestRegisterLookupNames(t *testing.T) {
	r := registry.New[int]("widget")
	if names := r.Names(); len(names) != 0 {
		t.Fatalf("new registry lists %v", names)
	}
	for i, n := range []string{"zeta", "alpha", "mid", "Beta"} {
		r.Register(n, i+1)
	}
	for _, tc := range []struct {
		name string
		want int
		ok   bool
	}{
		{"zeta", 1, true},
		{"alpha", 2, true},
		{"mid", 3, true},
		{"Beta", 4, true},
		{"beta", 0, false}, // names are case-sensitive
		{"", 0, false},
		{"nope", 0, false},
	} {
		got, ok := r.Lookup(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	want := []string{"Beta", "alpha", "mid", "zeta"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	// Names hands out a copy: changing it does not change the registry.
	names := r.Names()
	names[0] = "changed"
	if got := r.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() after its result was modified = %v, want %v", got, want)
	}
}

// Two registries do not share names.
func TestRegistriesAreSeparate(t *testing.T) {
	a, b := registry.New[string]("a"), registry.New[string]("b")
	a.Register("x", "from a")
	b.Register("x", "from b")
	if v, _ := a.Lookup("x"); v != "from a" {
		t.Errorf("a.Lookup(x) = %q", v)
	}
	if v, _ := b.Lookup("x"); v != "from b" {
		t.Errorf("b.Lookup(x) = %q", v)
	}
}

func TestRegisterPanics(t *testing.T) {
	for _, tc := range []struct {
		name     string
		register []string // the last one must panic
		contains []string
	}{
		{"duplicate", []string{"pause", "pause"}, []string{"nemesis registry", "pause", "twice"}},
		{"duplicate among others", []string{"a", "b", "a"}, []string{"nemesis registry", `a registered twice`}},
		{"empty name", []string{""}, []string{"nemesis registry", "empty name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := registry.New[int]("nemesis")
			last := len(tc.register) - 1
			for _, n := range tc.register[:last] {
				r.Register(n, 1)
			}
			msg := panicMessage(func() { r.Register(tc.register[last], 2) })
			if msg == "" {
				t.Fatalf("Register(%q) did not panic", tc.register[last])
			}
			for _, s := range tc.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("panic %q lacks %q", msg, s)
				}
			}
			// The failed registration changed nothing.
			if v, ok := r.Lookup(tc.register[last]); ok && v != 1 {
				t.Errorf("after the panic, Lookup(%q) = %d; the first registration must stand", tc.register[last], v)
			}
			if got := len(r.Names()); got != last {
				t.Errorf("%d names registered after the panic, want %d", got, last)
			}
		})
	}
}

func panicMessage(f func()) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg = fmt.Sprint(p)
		}
	}()
	f()
	return ""
}

func TestConcurrentUse(t *testing.T) {
	r := registry.New[int]("thing")
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r.Register(fmt.Sprintf("p%02d", i), i)
			r.Lookup("p00")
			r.Names()
		})
	}
	wg.Wait()
	names := r.Names()
	if len(names) != n || !slices.IsSorted(names) {
		t.Fatalf("Names() = %v, want %d sorted names", names, n)
	}
	for i := range n {
		if v, ok := r.Lookup(fmt.Sprintf("p%02d", i)); !ok || v != i {
			t.Errorf("Lookup(p%02d) = %d, %v", i, v, ok)
		}
	}
}
