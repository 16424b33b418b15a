// Package release names NATS server releases: a plan's version checked and
// normalized, its minor and patch numbers, and the first release with a
// feature a workload needs. It imports nothing of chaos's but plans, so
// that workloads can check a version without importing the target.
package release

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/chaos-testing/chaos/plans"
)

// Default is the release built when a plan names none: the newest the Go
// module proxy served here when it was chosen, pinned so runs are
// repeatable.
const Default = "v2.12.1"

// versionRE is a v2 release: the server module is github.com/nats-io/nats-server/v2.
var versionRE = regexp.MustCompile(`^v2\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)

// Norm checks a plan's version ("2.10.22" or "v2.10.22"): it ends up in a
// module query, a file name and an image tag.
func Norm(v string) (string, error) {
	if v == "" {
		return Default, nil
	}
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("%q: expected a NATS server v2 release the Go module proxy serves, such as %s", v, Default)
	}
	return v, nil
}

// Parse is a plan's version as the server's release: its name, and its
// minor and patch numbers (v2.MINOR.PATCH), which features depend on.
func Parse(version string) (v string, minor, patch int, err error) {
	if v, err = Norm(version); err != nil {
		return "", 0, 0, err
	}
	if _, err := fmt.Sscanf(v, "v2.%d.%d", &minor, &patch); err != nil {
		return "", 0, 0, fmt.Errorf("%s: not a v2.MINOR.PATCH release", v)
	}
	return v, minor, patch, nil
}

// Since refuses a plan whose servers are older than v2.MINOR.0, the first
// release with feature, which its workload needs.
func Since(p *plans.Plan, minor int, feature string) error {
	v, m, _, err := Parse(p.Target.Version)
	if err != nil {
		return nil // the target reports its version's error
	}
	if m < minor {
		return p.Errorf("target.version", "%s: %s needs %s, in NATS from v2.%d.0 on", v, p.Workload.Kind, feature, minor)
	}
	return nil
}
