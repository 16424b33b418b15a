package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	dockerbuild "github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/chaos-testing/chaos/internal/progress"
)

// GoProgram is a server built from the Go module proxy at a version, and
// the image that adds it to chaos's node image: etcd, NATS.
type GoProgram struct {
	// Name is the binary's, in the cache and at /usr/local/bin in the
	// image; it also names the image ("chaos/<Name>").
	Name    string
	Version string
	// Module is the module query the build depends on (path@version).
	Module string
	// Main, when set, is the main.go of a throwaway module that depends on
	// Module and is built; otherwise Package, a main package of Module.
	Main    string
	Package string
	// Recipe is hashed into image tags: bump it when the way the binary or
	// the image is built changes, so that stale images are not reused.
	Recipe int
}

// goBuildSem serialises builds in this process; a channel rather than a
// mutex lets a waiter give up when its context ends.
var goBuildSem = make(chan struct{}, 1)

// Image returns an image with the program at /usr/local/bin on top of the
// node image, building the program and the image on first use.
func (g GoProgram) Image(ctx context.Context, cli *client.Client, out io.Writer) (string, error) {
	if out == nil {
		out = io.Discard
	}
	base, err := Ensure(ctx, cli, Node, out)
	if err != nil {
		return "", err
	}
	tag := g.tag(base)
	select {
	case goBuildSem <- struct{}{}:
		defer func() { <-goBuildSem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if ok, err := exists(ctx, cli, tag); err != nil || ok {
		return tag, err
	}
	bin, err := g.Binary(ctx, out)
	if err != nil {
		return "", err
	}
	if err := g.buildImage(ctx, cli, base, tag, bin, out); err != nil {
		return "", fmt.Errorf("building image %s: %w", tag, err)
	}
	return tag, nil
}

// tag derives the image tag from everything that goes into the image.
func (g GoProgram) tag(base string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "chaos-%s v%d\nbase %s\nversion %s\n", g.Name, g.Recipe, base, g.Version))
	return "chaos/" + g.Name + ":" + g.Version + "-" + hex.EncodeToString(h[:])[:12]
}

// buildImage copies bin into base with the Engine's classic builder: no
// BuildKit and no registry are needed for FROM a local image plus COPY.
func (g GoProgram) buildImage(ctx context.Context, cli *client.Client, base, tag, bin string, out io.Writer) error {
	start := time.Now()
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"Dockerfile", 0o644, fmt.Appendf(nil, "FROM %s\nCOPY %s /usr/local/bin/%s\n", base, g.Name, g.Name)},
		{g.Name, 0o755, data},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	resp, err := cli.ImageBuild(ctx, &buf, dockerbuild.ImageBuildOptions{
		Tags:        []string{tag},
		Version:     dockerbuild.BuilderV1,
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{"chaos." + g.Name: g.Version},
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Shows the builder's steps, and turns an error message into an error.
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, out, 0, false, nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: built image %s in %.1fs\n", g.Name, tag, time.Since(start).Seconds())
	return nil
}

// Binary returns the static binary, built from the Go module proxy on
// first use and kept in the user's cache directory: the image may be
// rebuilt (a new base) without rebuilding the program. The build is a
// throwaway module that depends on Module, in the host's go environment
// (proxy, caches), static, outside any workspace.
func (g GoProgram) Binary(ctx context.Context, out io.Writer) (string, error) {
	// The name holds everything the build depends on: a new recipe, module
	// or main builds anew.
	h := sha256.Sum256(fmt.Appendf(nil, "%d\n%s\n%s\n%s", g.Recipe, g.Module, g.Package, g.Main))
	bin := filepath.Join(CacheDir(), g.Name+"-"+g.Version+"-"+hex.EncodeToString(h[:])[:8])
	return Cached(bin, func(tmp string) (string, error) {
		start := time.Now()
		task := progress.Start(out, fmt.Sprintf("%s: building %s %s", g.Name, g.Name, g.Version))
		task.Print(fmt.Sprintf("%s: building %s %s from the Go module proxy", g.Name, g.Name, g.Version))
		built := ""
		defer func() { task.Stop(built) }()
		pkg := g.Package
		if g.Main != "" {
			pkg = "."
			if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(g.Main), 0o644); err != nil {
				return "", err
			}
		}
		steps := []GoStep{
			{"creating the module", []string{"mod", "init", "chaos-" + g.Name}},
			{"downloading " + g.Module, []string{"get", g.Module}},
			// Old releases' go.mod files leave out some of what their
			// packages import: tidy, for a throwaway main (a module's own
			// main package is built as its go.mod has it, and tidy would
			// drop the dependency).
			{"resolving dependencies", []string{"mod", "tidy"}},
			{"listing packages", []string{"list", "-deps", pkg}},
			{"compiling", []string{"build", "-v", "-trimpath", "-ldflags=-s -w", "-o", g.Name, pkg}},
		}
		if g.Main == "" {
			steps = slices.Delete(steps, 2, 3)
		}
		if err := GoBuild(ctx, tmp, task, g.Name+" "+g.Version, steps, nil); err != nil {
			return "", err
		}
		built = fmt.Sprintf("%s: built %s in %.1fs", g.Name, bin, time.Since(start).Seconds())
		return filepath.Join(tmp, g.Name), nil
	})
}

// Cached returns entry, a file or a folder in chaos's cache, made first
// when it is missing: build makes it in a temporary folder beside it and
// says which file or folder there it is, which is then renamed to entry,
// so that a failed or concurrent build never leaves a partial one behind.
func Cached(entry string, build func(tmp string) (string, error)) (string, error) {
	if _, err := os.Stat(entry); err == nil {
		return entry, nil
	}
	dir := filepath.Dir(entry)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, filepath.Base(entry)+".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	made, err := build(tmp)
	if err != nil {
		return "", err
	}
	if err := os.Rename(made, entry); err != nil {
		return "", err
	}
	return entry, nil
}

// GoStep is one go command of a build, with what the progress line says
// while it runs.
type GoStep struct {
	Note string
	Args []string
}

// GoBuild runs steps in dir, in the host's go environment (proxy, caches,
// outside any workspace), static and for Linux, plus env. A "list" step's
// packages are what the "build" step after it counts on task as it
// compiles them (-v names each; those in the build cache are not named).
func GoBuild(ctx context.Context, dir string, task *progress.Task, what string, steps []GoStep, env []string) error {
	var packages int64
	for _, step := range steps {
		task.Set(0, packages, step.Note)
		cmd := exec.CommandContext(ctx, "go", step.Args...)
		cmd.Dir = dir
		// For the containers: Linux, on this host's architecture (the
		// engine's own; no other is pulled or emulated here).
		cmd.Env = slices.Concat(os.Environ(), []string{"CGO_ENABLED=0", "GOWORK=off", "GOOS=linux"}, env)
		var stdout, stderr bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Stderr = &stderr
		if step.Args[0] == "build" {
			var n int64
			cmd.Stderr = io.MultiWriter(&stderr, progress.NewLines(func(pkg string) {
				n++
				task.Set(min(n, packages), packages, "compiling "+pkg)
			}))
		}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: go %s: %w\n%s", what, strings.Join(step.Args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		}
		if step.Args[0] == "list" {
			packages = int64(bytes.Count(stdout.Bytes(), []byte("\n")))
		}
	}
	return nil
}

// CacheDir is where chaos keeps what it builds once (programs, Kubernetes):
// chaos in the user's cache directory, or in the temporary one.
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "chaos")
}
