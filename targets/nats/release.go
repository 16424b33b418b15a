package nats

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultVersion is the release built when a plan names none: the newest
// the Go module proxy served here when it was chosen, pinned so runs are
// repeatable.
const DefaultVersion = "v2.12.1"

// versionRE is a v2 release: the server module is github.com/nats-io/nats-server/v2.
var versionRE = regexp.MustCompile(`^v2\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)

// normVersion checks a plan's version ("2.10.22" or "v2.10.22"): it ends up in a
// module query, a file name and an image tag.
func normVersion(v string) (string, error) {
	if v == "" {
		return DefaultVersion, nil
	}
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("%q: expected a NATS server v2 release the Go module proxy serves, such as %s", v, DefaultVersion)
	}
	return v, nil
}

// parseVersion is a plan's version as the server's release: its name, and its
// minor and patch numbers (v2.MINOR.PATCH), which features depend on.
func parseVersion(version string) (v string, minor, patch int, err error) {
	if v, err = normVersion(version); err != nil {
		return "", 0, 0, err
	}
	if _, err := fmt.Sscanf(v, "v2.%d.%d", &minor, &patch); err != nil {
		return "", 0, 0, fmt.Errorf("%s: not a v2.MINOR.PATCH release", v)
	}
	return v, minor, patch, nil
}

// Release is the server's release, which workloads' needs compare with
// (targets.Released).
func (c Cluster) Release() string { return c.version }

// Since reports whether the servers run release v or a later one.
func (c Cluster) Since(v string) bool {
	_, minor, patch, _ := parseVersion(c.version)
	_, m, p, err := parseVersion(v)
	if err != nil {
		panic(fmt.Sprintf("nats: %q is not a release: %v", v, err)) // a workload's constant
	}
	return minor > m || minor == m && patch >= p
}
