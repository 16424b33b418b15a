package etcd

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/images"
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

// Program is etcd version as the module proxy builds it: `go install
// go.etcd.io/etcd/server/v3@v` is refused (its go.mod has replace
// directives), so a throwaway module whose main calls etcdmain.Main
// depends on the server module instead (on go.etcd.io/etcd for v3.4).
func Program(version string) images.GoProgram {
	g := images.GoProgram{Name: "etcd", Version: version, Recipe: recipeVersion,
		Module: "go.etcd.io/etcd/server/v3@" + version,
		Main:   "package main\n\nimport (\n\t\"os\"\n\n\t\"go.etcd.io/etcd/server/v3/etcdmain\"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n"}
	if pseudo, ok := legacy[version]; ok {
		g.Module, g.Main = "go.etcd.io/etcd@"+pseudo, "package main\n\nimport \"go.etcd.io/etcd/etcdmain\"\n\nfunc main() { etcdmain.Main() }\n"
	}
	return g
}

// Image returns an image with etcd version at /usr/local/bin/etcd on top of
// chaos's node image, building etcd and the image on first use.
// From Debian, the image is Debian's etcd-server of the version asked.
func (c Cluster) Image(ctx context.Context, cli *client.Client, progress io.Writer) (string, error) {
	if c.source == "debian" {
		r, err := Debian.Recipe("etcd-debian", debianVersion(c.version), "etcd-server")
		if err != nil {
			return "", err
		}
		return images.Ensure(ctx, cli, r, progress)
	}
	return Program(c.version).Image(ctx, cli, progress)
}
