// Package testenv is what the integration tests share: a Docker Engine to
// run on, runs of their own, clusters of a target, and the chaos binary
// that client containers run (package runner/runtest runs whole plans).
package testenv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/targets"
)

// Docker skips t under -short, or when no Docker Engine answers (fails it
// then if CHAOS_REQUIRE_DOCKER is set, as scripts/test sets it), and
// otherwise returns a client of the engine.
func Docker(t testing.TB) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts containers")
	}
	cli, err := containers.NewClient()
	if err == nil {
		_, err = cli.Ping(context.Background())
	}
	if err != nil {
		if os.Getenv("CHAOS_REQUIRE_DOCKER") != "" {
			t.Fatalf("no Docker Engine, and CHAOS_REQUIRE_DOCKER is set (scripts/test): %v", err)
		}
		t.Skipf("no Docker Engine: %v", err)
	}
	return cli
}

// NewRun creates a run of t's own, its id made of prefix, the process id
// and the time, and removes it when t ends.
func NewRun(t testing.TB, cli *client.Client, prefix string) *containers.Run {
	t.Helper()
	run, err := containers.NewRun(context.Background(), cli, fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		began := time.Now()
		if err := run.Close(context.Background()); err != nil {
			t.Error(err)
		}
		t.Logf("run removed in %s", time.Since(began).Round(time.Millisecond))
	})
	return run
}

// image is one target's node image, made once per test binary.
type image struct {
	once sync.Once
	tag  string
	err  error
}

var images sync.Map // "<target type> <target>" → *image

// Image returns target's node image, building it on the first call of
// the test binary; later calls have the first one's answer.
func Image(t testing.TB, cli *client.Client, target targets.Target) string {
	t.Helper()
	v, _ := images.LoadOrStore(fmt.Sprintf("%T %v", target, target), &image{})
	img := v.(*image)
	img.once.Do(func() {
		began := time.Now()
		img.tag, img.err = target.Image(context.Background(), cli, Log(t))
		t.Logf("image %s ready in %s", img.tag, time.Since(began).Round(time.Millisecond))
	})
	if img.err != nil {
		t.Fatal(img.err)
	}
	return img.tag
}

// Bind is the cluster of kind k of n nodes at version ("" for the kind's
// default), as a plan with no other target field asks for it.
func Bind[P any](t testing.TB, k targets.Kind[P], n int, version string) targets.Target {
	t.Helper()
	target, err := k.Bind(&targets.Spec[P]{Nodes: n, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// Start starts target's nodes in run, from its image, and returns them
// once ready.
func Start(t testing.TB, cli *client.Client, run *containers.Run, target targets.Target) []cluster.Node {
	t.Helper()
	img := Image(t, cli, target)
	began := time.Now()
	nodes, err := target.Start(context.Background(), run, img)
	if err != nil {
		t.Fatal(err)
	}
	// Logged, not asserted: a loaded machine (CI shares it) may take long,
	// and Start has its own limit.
	t.Logf("%d nodes started and ready in %s", len(nodes), time.Since(began).Round(time.Millisecond))
	return nodes
}

// Cluster skips as Docker does, or starts target in a run of its own,
// named after prefix and removed when t ends.
func Cluster(t testing.TB, target targets.Target, prefix string) (*containers.Run, []cluster.Node) {
	t.Helper()
	cli := Docker(t)
	run := NewRun(t, cli, prefix)
	return run, Start(t, cli, run, target)
}

var chaos struct {
	once sync.Once
	dir  string
	err  error
}

// ChaosBinary returns the chaos binary that client containers run, built
// (static, CGO_ENABLED=0) on the first call of the test binary into a
// directory that Main removes.
func ChaosBinary(t testing.TB) string {
	t.Helper()
	chaos.once.Do(func() {
		if chaos.dir, chaos.err = os.MkdirTemp("", "chaos-bin"); chaos.err != nil {
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(chaos.dir, "chaos"), "github.com/chaos-testing/chaos/cmd/chaos")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			chaos.err = fmt.Errorf("build chaos: %v\n%s", err, out)
		}
	})
	if chaos.err != nil {
		t.Fatal(chaos.err)
	}
	return filepath.Join(chaos.dir, "chaos")
}

// Main runs the tests, then removes the chaos binary if one was built: a
// package whose tests call ChaosBinary calls it from TestMain, as
// os.Exit(testenv.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if chaos.dir != "" {
		os.RemoveAll(chaos.dir)
	}
	return code
}

// Log is a writer to t's log, a line a write, its trailing white space
// cut and blank writes dropped.
func Log(t testing.TB) io.Writer { return logWriter{t} }

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	if s := strings.TrimRight(string(p), " \t\r\n"); s != "" {
		w.t.Log(s)
	}
	return len(p), nil
}

// WaitStopped waits until the main process of c is stopped (state T), as a
// SIGSTOP leaves it: a test that goes on before the stop has landed would
// be judging a process that still runs.
func WaitStopped(t testing.TB, cli *client.Client, c containers.Container) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		info, err := cli.ContainerInspect(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", info.State.Pid))
		// The state is the field after the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is not stopped 3 s after SIGSTOP: %s", c.Name, info.State.Pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Eventually runs change until it succeeds, a quarter second apart, and
// logs what it says; t fails with its last error once ctx ends. Membership
// changes need it: a cluster refuses them for a while after any change.
func Eventually(ctx context.Context, t testing.TB, change func() (string, error)) {
	t.Helper()
	for {
		note, err := change()
		if err == nil {
			t.Log(note)
			return
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
