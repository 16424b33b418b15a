package images

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// dockerClient skips the test unless a real build can run here.
func dockerClient(t *testing.T) *client.Client {
	t.Helper()
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		t.Skip("mmdebstrap not installed")
	}
	return engine(t)
}

// engine skips the test unless a Docker Engine answers.
func engine(t *testing.T) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("uses the Docker Engine; skipped with -short")
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Skipf("docker client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		// The same rule as testenv.Docker, which this package's tests
		// cannot import (testenv builds images).
		if os.Getenv("CHAOS_REQUIRE_DOCKER") != "" {
			t.Fatalf("docker unavailable, and CHAOS_REQUIRE_DOCKER is set (scripts/test): %v", err)
		}
		t.Skipf("docker unavailable: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestEnsureNode(t *testing.T) {
	cli := dockerClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// Two concurrent callers must both get the image (and build it once).
	var wg sync.WaitGroup
	tags := make([]string, 2)
	errs := make([]error, 2)
	for i := range tags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tags[i], errs[i] = Ensure(ctx, cli, Node, t.Output())
		}()
	}
	wg.Wait()
	for i := range tags {
		if errs[i] != nil {
			t.Fatalf("Ensure: %v", errs[i])
		}
		if tags[i] != Node.Tag() {
			t.Errorf("Ensure returned %q, want %q", tags[i], Node.Tag())
		}
	}
	img, err := cli.ImageInspect(ctx, Node.Tag())
	if err != nil {
		t.Fatalf("image not present after Ensure: %v", err)
	}
	if got := img.Config.Labels["chaos.recipe"]; got != Node.hash() {
		t.Errorf("label chaos.recipe = %q, want %q", got, Node.hash())
	}
	t.Logf("%s: %s, %.1f MB", Node.Tag(), img.ID, float64(img.Size)/1e6)

	start := time.Now()
	if _, err := Ensure(ctx, cli, Node, t.Output()); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second Ensure took %v; it should reuse the image", d)
	}
}

func TestEnsureCancel(t *testing.T) {
	cli := dockerClient(t)
	// A recipe nobody builds, so Ensure really starts mmdebstrap.
	r := Recipe{Suite: "bookworm", Packages: []string{"procps"}}
	if ok, _ := exists(context.Background(), cli, r.Tag()); ok {
		t.Skipf("%s already exists", r.Tag())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := Ensure(ctx, cli, r, t.Output())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ensure after cancel: got %v, want deadline exceeded", err)
	}
	if ok, err := exists(context.Background(), cli, r.Tag()); err != nil || ok {
		t.Errorf("image %s left behind after cancel (err %v)", r.Tag(), err)
	}
}

// fakeMmdebstrap puts a shell script named mmdebstrap first on PATH, for a
// build that needs no Debian mirror, and returns an Engine client.
func fakeMmdebstrap(t *testing.T, script string) *client.Client {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "mmdebstrap"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cli := engine(t)
	if _, err := Sources(Node.Suite); err != nil {
		t.Skipf("no host apt sources: %v", err)
	}
	return cli
}

// TestFailedBuildLeavesNoImage fakes an mmdebstrap that writes a complete
// tarball and then fails: the build must fail and tag nothing.
func TestFailedBuildLeavesNoImage(t *testing.T) {
	cli := fakeMmdebstrap(t, "tar -C /etc -cf - hostname passwd\necho 'E: simulated failure' >&2\nexit 1\n")
	r := Recipe{Suite: Node.Suite, Packages: []string{"simulated-failure"}}
	_, err := Ensure(context.Background(), cli, r, t.Output())
	t.Logf("Ensure error: %v", err)
	if err == nil || !strings.Contains(err.Error(), "simulated failure") {
		t.Errorf("Ensure: got %v, want the simulated failure", err)
	}
	if ok, err := exists(context.Background(), cli, r.Tag()); err != nil || ok {
		t.Errorf("image %s exists after a failed build (err %v)", r.Tag(), err)
	}
}

// TestBuildShowsItsStages: the build's bar counts mmdebstrap's stages as
// it reports them (a stand-in mmdebstrap that says each stage, dawdles
// while "creating the tarball" and writes a tiny one).
func TestBuildShowsItsStages(t *testing.T) {
	script := ""
	for _, s := range stages[:len(stages)-1] {
		script += "echo 'I: " + s + "...' >&2\n"
	}
	cli := fakeMmdebstrap(t, script+"sleep 1.5\ntar -C /etc -cf - hostname\necho 'I: success in 1.5 seconds' >&2\n")
	r := Recipe{Name: "stages-test", Suite: Node.Suite, Packages: []string{"stand-in"}}
	var out strings.Builder
	tag, err := Ensure(context.Background(), cli, r, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), tag, image.RemoveOptions{}) })
	t.Logf("output:\n%s", out.String())
	for _, want := range []string{
		"images: mmdebstrap: I: creating tarball...\n",
		"images: building " + tag + " [=================   ] 7/8 creating tarball, 0.0 MB streamed, 1s\n",
		"images: built " + tag + " in ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestPull(t *testing.T) {
	cli := engine(t)
	ctx := context.Background()
	const missing = "chaos/does-not-exist:never"
	err := Pull(ctx, cli, missing, t.Output())
	if err == nil || !strings.Contains(err.Error(), "could not be pulled") {
		t.Errorf("Pull(%s): got %v, want a could-not-be-pulled error", missing, err)
	}
	t.Logf("Pull error: %v", err)
	// A local image is used as is, without asking a registry.
	if ok, _ := exists(ctx, cli, Node.Tag()); ok {
		if err := Pull(ctx, cli, Node.Tag(), t.Output()); err != nil {
			t.Errorf("Pull of local image: %v", err)
		}
	}
}

// A program's image tag names it and its version, and changes with
// anything that goes into the image.
func TestGoProgramTag(t *testing.T) {
	g := GoProgram{Name: "etcd", Version: "v3.6.16", Recipe: 1}
	tag := g.tag("chaos/node:abc")
	if !strings.HasPrefix(tag, "chaos/etcd:v3.6.16-") || len(tag) != len("chaos/etcd:v3.6.16-")+12 {
		t.Errorf("tag %q", tag)
	}
	for _, other := range []string{
		GoProgram{Name: "etcd", Version: "v3.6.16", Recipe: 2}.tag("chaos/node:abc"),
		GoProgram{Name: "etcd", Version: "v3.6.15", Recipe: 1}.tag("chaos/node:abc"),
		g.tag("chaos/node:abd"),
	} {
		if other == tag {
			t.Errorf("%q: the same tag for another recipe, version or base", other)
		}
	}
}

// A cache entry is made once, and a failed making leaves none behind.
func TestCached(t *testing.T) {
	entry := filepath.Join(t.TempDir(), "cache", "thing")
	if _, err := Cached(entry, func(string) (string, error) { return "", errors.New("no") }); err == nil {
		t.Fatal("a failed making gave no error")
	}
	if _, err := os.Stat(entry); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed making left %s: %v", entry, err)
	}
	made := 0
	for range 2 {
		got, err := Cached(entry, func(tmp string) (string, error) {
			made++
			return filepath.Join(tmp, "f"), os.WriteFile(filepath.Join(tmp, "f"), []byte("x"), 0o644)
		})
		if err != nil || got != entry {
			t.Fatalf("got %q, %v", got, err)
		}
	}
	if data, _ := os.ReadFile(entry); made != 1 || string(data) != "x" {
		t.Fatalf("made %d times, holds %q", made, data)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(entry), "*.build-*")); len(left) > 0 {
		t.Fatalf("temporary folders left: %v", left)
	}
}
