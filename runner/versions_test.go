package runner_test

import (
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/runner"
	"github.com/chaos-testing/chaos/workloads"
)

// TestWorkloadLibrariesInBuild: every workload names client libraries,
// and each is a module of the chaos binary, so that run.json has its
// version.
func TestWorkloadLibrariesInBuild(t *testing.T) {
	bin := testenv.ChaosBinary(t)
	for _, k := range workloads.Workloads.Names() {
		if strings.HasPrefix(k, "validate-test-") {
			continue // a plug-in of the tests
		}
		w, _ := workloads.Workloads.Lookup(k)
		if len(w.Libraries()) == 0 {
			t.Errorf("%s names no client library", k)
		}
		v, err := runner.Versions(bin, w.Libraries())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range append([]string{"go", "github.com/docker/docker"}, w.Libraries()...) {
			if !strings.HasPrefix(v[m], "v") && !strings.HasPrefix(v[m], "go1") {
				t.Errorf("%s: %s at version %q", k, m, v[m])
			}
		}
	}
	v, err := runner.Versions(bin, []string{"example.com/nothing"})
	if err != nil || v["example.com/nothing"] != "not in this build" {
		t.Errorf("a module outside the build has version %q (%v)", v["example.com/nothing"], err)
	}
	if _, err := runner.Versions(t.TempDir(), nil); err == nil {
		t.Error("the versions of a folder were read")
	}
}
