// Package kubelocal brings up, on this machine, a single-node Kubernetes
// that chaos can run plans on: built from the Go module proxy and
// Debian's packages alone, in its own namespaces, leaving Docker and the
// host's settings as they were.
package kubelocal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/internal/progress"
)

// Version is the Kubernetes release brought up: 1.35 and later refuse
// cgroup v1 by default (this host's), and 1.36 drops containerd 1.x
// (Debian's).
const Version = "v1.34.4"

// stagingVersion is the release of the k8s.io modules Version's own
// staging directories hold: Kubernetes's go.mod replaces them by those
// directories, which its module zip leaves out, so the build takes them
// from the proxy at this version instead.
const stagingVersion = "v0.34.4"

// Components are the programs of a node, each built from cmd/<name>.
var Components = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"}

// recipe is hashed into the cache entry's name: bump it when the way the
// binaries are built changes.
const recipe = 1

// Binaries returns the directory holding Components, built from the Go
// module proxy on first use and kept in chaos's cache, as etcd's builds
// are: about half an hour on two cores, 336 MB of binaries.
func Binaries(ctx context.Context, out io.Writer) (string, error) {
	h := sha256.Sum256(fmt.Appendf(nil, "%d\n%s\n%s\n%v", recipe, Version, stagingVersion, Components))
	dir := filepath.Join(images.CacheDir(), "kubernetes-"+Version+"-"+hex.EncodeToString(h[:])[:8])
	return images.Cached(dir, func(tmp string) (string, error) {
		start := time.Now()
		what := "Kubernetes " + Version
		task := progress.Start(out, "kubernetes: building "+what)
		task.Print("kubernetes: building " + what + " from the Go module proxy")
		built := ""
		defer func() { task.Stop(built) }()
		task.Set(0, 0, "downloading k8s.io/kubernetes@"+Version)
		src := filepath.Join(tmp, "src")
		if err := copyModule(ctx, "k8s.io/kubernetes@"+Version, src); err != nil {
			return "", err
		}
		mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return "", err
		}
		if mod, err = fromProxy(mod); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(src, "go.mod"), mod, 0o644); err != nil {
			return "", err
		}
		pkgs := make([]string, len(Components))
		for i, c := range Components {
			pkgs[i] = "./cmd/" + c
		}
		bin := filepath.Join(tmp, "bin")
		steps := []images.GoStep{
			{Note: "listing packages", Args: append([]string{"list", "-deps"}, pkgs...)},
			{Note: "compiling", Args: append([]string{"build", "-v", "-trimpath",
				"-ldflags=-s -w -X k8s.io/component-base/version.gitVersion=" + Version, "-o", bin + "/"}, pkgs...)},
		}
		// The go.sum lacks the staging modules' sums: -mod=mod adds them.
		if err := images.GoBuild(ctx, src, task, what, steps, []string{"GOFLAGS=-mod=mod"}); err != nil {
			return "", err
		}
		built = fmt.Sprintf("kubernetes: built %s in %.0fs", dir, time.Since(start).Seconds())
		return bin, nil
	})
}

// copyModule downloads a module (path@version) through the host's go
// environment and copies its source to dir, writable.
func copyModule(ctx context.Context, module, dir string) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Dir = os.TempDir() // outside any module
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("downloading %s: %w\n%s%s", module, err, bytes.TrimSpace(stdout.Bytes()), bytes.TrimSpace(stderr.Bytes()))
	}
	var got struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || got.Dir == "" {
		return fmt.Errorf("downloading %s: go mod download said %q: %v", module, got.Error, err)
	}
	// The module cache is read-only; CopyFS makes files the umask allows.
	if err := os.CopyFS(dir, os.DirFS(got.Dir)); err != nil {
		return fmt.Errorf("copying %s: %w", module, err)
	}
	return nil
}

// stagingReplace is a go.mod line that replaces a k8s.io module by a
// staging directory of the main module.
var stagingReplace = regexp.MustCompile(`(?m)^(\s*)(k8s\.io/[A-Za-z0-9._-]+) => \./staging/src/(k8s\.io/[A-Za-z0-9._-]+)\s*$`)

// fromProxy rewrites Kubernetes's go.mod to take each staging module from
// the proxy at stagingVersion.
func fromProxy(mod []byte) ([]byte, error) {
	n := 0
	out := stagingReplace.ReplaceAllFunc(mod, func(line []byte) []byte {
		m := stagingReplace.FindSubmatch(line)
		if !bytes.Equal(m[2], m[3]) {
			return line // not a module's own directory: left, and go will say why it fails
		}
		n++
		return fmt.Appendf(nil, "%s%s => %s %s", m[1], m[2], m[2], stagingVersion)
	})
	if n == 0 {
		return nil, fmt.Errorf("go.mod of k8s.io/kubernetes@%s replaces no module by a staging directory: not the layout this build knows", Version)
	}
	return out, nil
}
