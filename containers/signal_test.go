package containers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/targets/redis"
)

// state is the process state letter of pid (R, S, T for stopped, ...).
func state(t *testing.T, pid int) byte {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	return stat[bytes.LastIndexByte(stat, ')')+2]
}

// sleeper starts a container whose main process sleeps, in a run of its own.
func sleeper(t testing.TB) (*client.Client, *containers.Run, containers.Container) {
	cli := testenv.Docker(t)
	run := testenv.NewRun(t, cli, "signal")
	img := testenv.Image(t, cli, testenv.Bind(t, redis.Kind{}, 1, ""))
	c, err := run.Start(context.Background(), containers.Spec{Name: "p", Role: "test", Image: img, Cmd: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	return cli, run, c
}

// TestSignalReachesTheProcess: STOP and CONT, sent from the host through
// the run's handle on the process, stop and resume the container's main
// process at once; after a KILL and a restart the new process is the one
// signalled, and a signal to a process that has exited says so.
func TestSignalReachesTheProcess(t *testing.T) {
	cli, run, c := sleeper(t)
	ctx := context.Background()
	pid, err := run.HostPID(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := run.Signal(ctx, c, "STOP"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitStopped(t, cli, c)
	t.Logf("stopped %s after the call", time.Since(began))
	if err := run.Signal(ctx, c, "CONT"); err != nil {
		t.Fatal(err)
	}
	for state(t, pid) == 'T' {
		if time.Since(began) > 3*time.Second {
			t.Fatal("still stopped 3 s after SIGCONT")
		}
		time.Sleep(time.Millisecond)
	}

	if err := run.Signal(ctx, c, "KILL"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for run.Running(ctx, c) {
		if time.Now().After(deadline) {
			t.Fatal("still running 10 s after SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := run.Signal(ctx, c, "STOP"); !errors.Is(err, containers.ErrNotRunning) {
		t.Fatalf("SIGSTOP to an exited process: %v, want ErrNotRunning", err)
	}
	if err := run.NetnsExec(ctx, c, "true"); !errors.Is(err, containers.ErrNotRunning) {
		t.Fatalf("a command in the namespace of an exited process: %v, want ErrNotRunning", err)
	}
	if c, err = run.Restart(ctx, c); err != nil {
		t.Fatal(err)
	}
	now, err := run.HostPID(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Exited(ctx, c, pid) || run.Exited(ctx, c, now) {
		t.Errorf("after a restart: Exited(old pid) = %v, Exited(new pid) = %v; want true, false", run.Exited(ctx, c, pid), run.Exited(ctx, c, now))
	}
	if err := run.Signal(ctx, c, "STOP"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitStopped(t, cli, c)
}

// BenchmarkSignal is what a STOP and a CONT cost from the host through the
// run's pidfd, against the Engine's kill endpoint: the time a lock holder
// has to release before its pause lands.
func BenchmarkSignal(b *testing.B) {
	cli, run, c := sleeper(b)
	ctx := context.Background()
	b.Run("pidfd", func(b *testing.B) {
		for b.Loop() {
			if err := errors.Join(run.Signal(ctx, c, "STOP"), run.Signal(ctx, c, "CONT")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			if err := errors.Join(cli.ContainerKill(ctx, c.ID, "STOP"), cli.ContainerKill(ctx, c.ID, "CONT")); err != nil {
				b.Fatal(err)
			}
		}
	})
}
