package containers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/targets/redis"
)

// A process that dies at start is reported with its exit status and its
// last lines, by DiedWith and by Wait, not only as a service that never
// answered (a dynamically linked chaos in an older suite's container
// says GLIBC_2.32 not found, and nothing else would tell it).
func TestDiedWithSaysWhy(t *testing.T) {
	cli := testenv.Docker(t)
	run := testenv.NewRun(t, cli, "died")
	img := testenv.Image(t, cli, testenv.Bind(t, redis.Kind{}, 1, ""))
	ctx := context.Background()
	// It may die before Start has read its address: Start says why then.
	c, err := run.Start(ctx, containers.Spec{Name: "d", Role: "test", Image: img,
		Cmd: []string{"sh", "-c", "echo 'version GLIBC_2.32 not found' >&2; exit 3"}})
	if err != nil {
		if !strings.Contains(err.Error(), "GLIBC_2.32 not found") {
			t.Errorf("Start of a process that died at once: %v, want its last line", err)
		}
		return
	}
	werr := run.Wait(ctx, c)
	if werr == nil || !strings.Contains(werr.Error(), "status 3") || !strings.Contains(werr.Error(), "GLIBC_2.32 not found") {
		t.Errorf("Wait: %v, want the status and the last line", werr)
	}
	var died error
	for deadline := time.Now().Add(10 * time.Second); died == nil && time.Now().Before(deadline); {
		died = run.DiedWith(ctx, c)
		time.Sleep(50 * time.Millisecond)
	}
	if died == nil || !strings.Contains(died.Error(), "GLIBC_2.32 not found") {
		t.Errorf("DiedWith: %v, want the last line", died)
	}

	s, err := run.Start(ctx, containers.Spec{Name: "s", Role: "test", Image: img, Cmd: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.DiedWith(ctx, s); err != nil {
		t.Errorf("DiedWith of a running process: %v, want nil", err)
	}
}
