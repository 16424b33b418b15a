package etcd

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
	"regexp"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/internal/progress"
	"github.com/chaos-testing/chaos/targets"
)

// DefaultVersion is the etcd release built when a plan names none: the
// newest v3.6 the Go module proxy serves, pinned so runs are repeatable
// (and matching the client in go.mod).
const DefaultVersion = "v3.6.16"

// recipeVersion is hashed into image tags; bump it when the way the binary
// or the image is built changes, so that stale images are not reused.
const recipeVersion = 1

// versionRE is a release the module proxy can build: the server module
// (go.etcd.io/etcd/server/v3) begins at v3.5.
var versionRE = regexp.MustCompile(`^v3\.([5-9]|\d\d+)\.\d+(-[0-9A-Za-z.]+)?$`)

// legacy are v3.4 releases the module proxy serves. v3.4 was one module,
// go.etcd.io/etcd, without a /v3 path: the proxy refuses its tags and
// commit hashes as versions but serves pseudo-versions of its commits.
// v3.4.13 is the release-3.4 commit Kubernetes pinned for that release; its
// binary reports itself as 3.4.13.
var legacy = map[string]string{
	"v3.4.13": "v0.5.0-alpha.5.0.20200910180754-dd1b699fc489",
}

// normVersion checks a plan's version ("3.6.16" or "v3.6.16"): it ends up
// in a module query, a file name and an image tag.
func normVersion(v string) (string, error) {
	if v == "" {
		return DefaultVersion, nil
	}
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if _, ok := legacy[v]; !ok && !versionRE.MatchString(v) {
		return "", fmt.Errorf("%q: built from the Go module proxy, etcd is v3.4.13 or a release from v3.5 on, such as %s; others come from Debian (source: debian): %s", v, DefaultVersion, Debian.List())
	}
	return v, nil
}

// Debian are the etcd-server versions Debian suites carry, for plans with
// source: debian.
var Debian = images.Releases{Server: "etcd", Default: "3.4.23", Suites: map[string]string{
	"3.3.25": "bullseye", "3.4.23": "bookworm", "3.5.16": "trixie",
}}

// debianVersion is a plan's version as Debian's table has it: no "v".
func debianVersion(v string) string { return strings.TrimPrefix(v, "v") }

// imageTag derives the tag from everything that goes into the image.
func imageTag(base, version string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "chaos-etcd v%d\nbase %s\nversion %s\n", recipeVersion, base, version))
	return "chaos/etcd:" + version + "-" + hex.EncodeToString(h[:])[:12]
}

// buildSem serialises builds in this process; a channel rather than a mutex
// lets a waiter give up when its context ends.
var buildSem = make(chan struct{}, 1)

// Image returns an image with etcd version at /usr/local/bin/etcd on top of
// chaos's node image, building etcd and the image on first use.
// From Debian, the image is Debian's etcd-server of the version asked.
func (Target) Image(ctx context.Context, cli *client.Client, spec targets.Spec, progress io.Writer) (string, error) {
	if params(spec).Source == "debian" {
		r, err := Debian.Recipe("etcd-debian", debianVersion(spec.Version), "etcd-server")
		if err != nil {
			return "", err
		}
		return images.Ensure(ctx, cli, r, progress)
	}
	version, err := normVersion(spec.Version)
	if err != nil {
		return "", err
	}
	if progress == nil {
		progress = io.Discard
	}
	base, err := images.Ensure(ctx, cli, images.Node, progress)
	if err != nil {
		return "", err
	}
	tag := imageTag(base, version)
	select {
	case buildSem <- struct{}{}:
		defer func() { <-buildSem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	} else if !client.IsErrNotFound(err) {
		return "", fmt.Errorf("inspecting image %s: %w", tag, err)
	}
	bin, err := binary(ctx, version, progress)
	if err != nil {
		return "", err
	}
	if err := buildImage(ctx, cli, base, tag, version, bin, progress); err != nil {
		return "", fmt.Errorf("building image %s: %w", tag, err)
	}
	return tag, nil
}

// buildImage copies bin into base with the Engine's classic builder: no
// BuildKit and no registry are needed for FROM a local image plus COPY.
func buildImage(ctx context.Context, cli *client.Client, base, tag, version, bin string, progress io.Writer) error {
	start := time.Now()
	etcd, err := os.ReadFile(bin)
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
		{"Dockerfile", 0o644, fmt.Appendf(nil, "FROM %s\nCOPY etcd /usr/local/bin/etcd\n", base)},
		{"etcd", 0o755, etcd},
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
	resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{
		Tags:        []string{tag},
		Version:     build.BuilderV1,
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{"chaos.etcd": version},
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Shows the builder's steps, and turns an error message into an error.
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, progress, 0, false, nil); err != nil {
		return err
	}
	fmt.Fprintf(progress, "etcd: built image %s in %.1fs\n", tag, time.Since(start).Seconds())
	return nil
}

// binary returns a static etcd server of version, built from the Go module
// proxy on first use and kept in the user's cache directory: the image may
// be rebuilt (a new base) without rebuilding etcd.
//
// `go install go.etcd.io/etcd/server/v3@v` is refused (its go.mod has
// replace directives), so a throwaway module whose main calls etcdmain.Main
// depends on the server module instead (on go.etcd.io/etcd for v3.4).
func binary(ctx context.Context, version string, out io.Writer) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "chaos")
	bin := filepath.Join(dir, "etcd-"+version)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build in a directory beside the cache entry and rename at the end, so
	// a failed or concurrent build never leaves a partial binary behind.
	tmp, err := os.MkdirTemp(dir, "etcd-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	task := progress.Start(out, "etcd: building etcd "+version)
	task.Print(fmt.Sprintf("etcd: building etcd %s from the Go module proxy", version))
	built := ""
	defer func() { task.Stop(built) }()
	module, main := "go.etcd.io/etcd/server/v3@"+version, "package main\n\nimport (\n\t\"os\"\n\n\t\"go.etcd.io/etcd/server/v3/etcdmain\"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n"
	if pseudo, ok := legacy[version]; ok {
		module, main = "go.etcd.io/etcd@"+pseudo, "package main\n\nimport \"go.etcd.io/etcd/etcdmain\"\n\nfunc main() { etcdmain.Main() }\n"
	}
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(main), 0o644); err != nil {
		return "", err
	}
	goCmd := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = tmp
		// The host's go environment (proxy, caches, GOFLAGS), but static, and
		// never part of a workspace the caller happens to be in.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
		return cmd
	}
	var packages int64
	for _, step := range []struct {
		note string
		args []string
	}{
		{"creating the module", []string{"mod", "init", "chaos-etcd"}},
		{"downloading " + module, []string{"get", module}},
		// Old releases' go.mod files leave out some of what their packages import.
		{"resolving dependencies", []string{"mod", "tidy"}},
		{"listing packages", []string{"list", "-deps", "."}},
		// -v names each package as it is compiled: the bar counts them
		// against the list (packages already in the build cache are not named).
		{"compiling", []string{"build", "-v", "-trimpath", "-ldflags=-s -w", "-o", "etcd", "."}},
	} {
		task.Set(0, packages, step.note)
		cmd := goCmd(step.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Stderr = &stderr
		if step.args[0] == "build" {
			var n int64
			cmd.Stderr = io.MultiWriter(&stderr, progress.NewLines(func(pkg string) {
				n++
				task.Set(min(n, packages), packages, "compiling "+pkg)
			}))
		}
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("building etcd %s: go %s: %w\n%s", version, strings.Join(step.args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		}
		if step.args[0] == "list" {
			packages = int64(bytes.Count(stdout.Bytes(), []byte("\n")))
		}
	}
	if err := os.Rename(filepath.Join(tmp, "etcd"), bin); err != nil {
		return "", err
	}
	built = fmt.Sprintf("etcd: built %s in %.1fs", bin, time.Since(start).Seconds())
	return bin, nil
}
