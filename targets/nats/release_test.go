package nats

import (
	"testing"

	"github.com/chaos-testing/chaos/targets"
)

func TestNormVersion(t *testing.T) {
	for in, want := range map[string]string{"": DefaultVersion, "2.10.22": "v2.10.22", "v2.12.1": "v2.12.1"} {
		if got, err := normVersion(in); err != nil || got != want {
			t.Errorf("normVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"1.4.1", "v2.10", "latest", "v2.10.22; rm -rf /"} {
		if _, err := normVersion(bad); err == nil {
			t.Errorf("normVersion(%q) accepted", bad)
		}
	}
}

// Since compares the cluster's release with a feature's first one, minor
// then patch; the plan's default is v2.12.1.
func TestSince(t *testing.T) {
	for _, c := range []struct {
		version, since string
		want           bool
	}{
		{"v2.10.22", "v2.11.0", false},
		{"2.10.99", "v2.11.0", false},
		{"v2.11.0", "v2.11.0", true},
		{"v2.15.3", "v2.11.0", true},
		{"", "v2.11.0", true},
		{"", "v2.12.2", false},
		{"v2.10.28", "v2.10.23", true},
	} {
		tg, err := Kind{}.Bind(&targets.Spec[struct{}]{Nodes: 3, Version: c.version})
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.(targets.Released).Since(c.since); got != c.want {
			t.Errorf("%q since %s: %v, want %v", c.version, c.since, got, c.want)
		}
	}
}
