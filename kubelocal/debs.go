package kubelocal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/chaos-testing/chaos/images"
)

// cniPackage holds the pods' network plugins (bridge, host-local,
// loopback), from the machine's own Debian sources.
const cniPackage = "containernetworking-plugins"

// cniPlugins returns the directory of the CNI plugins, taken from Debian's
// package on first use (downloaded and unpacked, never installed) and
// kept in chaos's cache.
func cniPlugins(ctx context.Context) (string, error) {
	return images.Cached(filepath.Join(images.CacheDir(), cniPackage), func(tmp string) (string, error) {
		// apt writes the package as _apt where it can, as root here:
		// either way into tmp.
		if err := os.Chmod(tmp, 0o755); err != nil {
			return "", err
		}
		if out, err := run(ctx, tmp, "apt-get", "download", cniPackage); err != nil {
			// A machine whose package lists were never fetched: fetch them.
			if _, uerr := run(ctx, tmp, "apt-get", "update"); uerr != nil {
				return "", fmt.Errorf("downloading Debian's %s: %w\n%s", cniPackage, err, out)
			}
			if out, err := run(ctx, tmp, "apt-get", "download", cniPackage); err != nil {
				return "", fmt.Errorf("downloading Debian's %s: %w\n%s", cniPackage, err, out)
			}
		}
		debs, _ := filepath.Glob(filepath.Join(tmp, cniPackage+"_*.deb"))
		if len(debs) != 1 {
			return "", fmt.Errorf("downloading Debian's %s: found %d packages in %s", cniPackage, len(debs), tmp)
		}
		if out, err := run(ctx, tmp, "dpkg", "-x", debs[0], "root"); err != nil {
			return "", fmt.Errorf("unpacking %s: %w\n%s", debs[0], err, out)
		}
		return filepath.Join(tmp, "root", "usr", "lib", "cni"), nil
	})
}

// run runs a command in dir, and gives its output, both streams.
func run(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return bytes.TrimSpace(out.Bytes()), err
}
