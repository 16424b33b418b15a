package runner

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runfolder"
)

// The end record is the harness's positive statement that a run finished
// cleanly: without it, or with an error in it, the run is incomplete.
func TestRecordEnd(t *testing.T) {
	dir := t.TempDir()
	// run.json is written for a bound plan; which plan matters not.
	p, err := plans.Parse("end-test.yaml", []byte("name: end-test\nseed: 4\ntime_limit: 10s\ntarget: {kind: etcd}\nworkload: {kind: etcd-register}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bind.Bind(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRunInfo(dir, "r1", b, time.Now()); err != nil {
		t.Fatal(err)
	}
	incomplete := func() string {
		t.Helper()
		info, err := runfolder.Folder(dir).ReadInfo()
		if err != nil {
			t.Fatal(err)
		}
		return info.Incomplete()
	}
	if why := incomplete(); !strings.Contains(why, "no end of the run recorded") {
		t.Errorf("a run with no end record: incomplete %q", why)
	}
	if err := recordEnd(dir, errors.New("kill-start [n3]: SIGKILL to n3: container is not running")); err != nil {
		t.Fatal(err)
	}
	if why := incomplete(); why != "kill-start [n3]: SIGKILL to n3: container is not running" {
		t.Errorf("a run that ended with a harness error: incomplete %q", why)
	}
	if err := recordEnd(dir, nil); err != nil {
		t.Fatal(err)
	}
	if why := incomplete(); why != "" {
		t.Errorf("a run that ended cleanly: incomplete %q", why)
	}
	if err := recordEnd(filepath.Join(dir, "gone"), nil); err == nil || !strings.Contains(err.Error(), "recording the end of the run") {
		t.Errorf("recording in a folder with no run.json: %v", err)
	}
}
