// Package images provides the Docker images that test nodes run in.
//
// No registry is assumed reachable, so the node image is built locally: a
// Debian root filesystem made by mmdebstrap from the host's own apt mirrors is
// streamed straight into the Engine's image import. The tag is derived from
// the recipe, so an image is built once and reused until the recipe changes.
package images

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/internal/progress"
)

// recipeVersion is hashed into every tag. Bump it whenever the build
// procedure (mmdebstrap options, import changes) alters what ends up in the
// image, so stale images are not reused.
const recipeVersion = 1

// Recipe says what goes into a locally built image.
type Recipe struct {
	Name     string   // image name under chaos/: node, zookeeper
	Suite    string   // Debian suite, e.g. "bookworm"
	Packages []string // installed on top of the minbase variant
	// Version is the server's version the suite carries, for the tag's
	// reader only: the suite and the packages say what is in the image.
	Version string
}

// Node is the recipe for a node image with the fault tools alone, which
// targets that bring their own server (etcd) build on.
var Node = Recipe{Name: "node", Suite: "bookworm", Packages: FaultTools}

// hash is a short digest of a canonical encoding of the recipe: packages are
// sorted and deduplicated so listing order does not force a rebuild.
func (r Recipe) hash() string {
	pkgs := slices.Compact(slices.Sorted(slices.Values(r.Packages)))
	h := sha256.New()
	fmt.Fprintf(h, "chaos-recipe v%d\nsuite %s\n", recipeVersion, r.Suite)
	for _, p := range pkgs {
		fmt.Fprintf(h, "package %s\n", p)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Tag is the image reference Ensure builds the recipe under.
// A recipe without a name is a node image.
func (r Recipe) Tag() string {
	v := ""
	if r.Version != "" {
		v = r.Version + "-"
	}
	return "chaos/" + cmp.Or(r.Name, "node") + ":" + v + r.hash()
}

// buildSem serialises builds in this process, so concurrent Ensure calls for
// one recipe build it once. A channel rather than a mutex lets waiters give up
// when their context ends.
var buildSem = make(chan struct{}, 1)

// Ensure returns the tag of an image built from r, building it first if the
// Engine does not have it. Build progress goes to progress (may be nil). On
// failure or cancellation no image is left under the tag.
func Ensure(ctx context.Context, cli *client.Client, r Recipe, progress io.Writer) (string, error) {
	tag := r.Tag()
	if ok, err := exists(ctx, cli, tag); err != nil {
		return "", err
	} else if ok {
		return tag, nil
	}
	select {
	case buildSem <- struct{}{}:
		defer func() { <-buildSem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	// Another caller may have built it while we waited.
	if ok, err := exists(ctx, cli, tag); err != nil {
		return "", err
	} else if ok {
		return tag, nil
	}
	if progress == nil {
		progress = io.Discard
	}
	if err := build(ctx, cli, r, tag, progress); err != nil {
		return "", fmt.Errorf("building image %s: %w", tag, err)
	}
	return tag, nil
}

// Pull makes ref available locally, pulling it if it is not already present.
// It is for plans that name a published image instead of a recipe.
func Pull(ctx context.Context, cli *client.Client, ref string, progress io.Writer) error {
	if ok, err := exists(ctx, cli, ref); err != nil || ok {
		return err
	}
	if progress == nil {
		progress = io.Discard
	}
	fail := func(err error) error {
		return fmt.Errorf("image %s could not be pulled (no registry reachable?): %w", ref, err)
	}
	rc, err := cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return fail(err)
	}
	defer rc.Close()
	err = readMessages(rc, func(m message) {
		// Skip the per-chunk progress bars; layer state changes are enough.
		if m.Progress == "" {
			fmt.Fprintf(progress, "pull %s: %s %s\n", ref, m.ID, m.Status)
		}
	})
	if err != nil {
		return fail(err)
	}
	return nil
}

func exists(ctx context.Context, cli *client.Client, ref string) (bool, error) {
	_, err := cli.ImageInspect(ctx, ref)
	switch {
	case err == nil:
		return true, nil
	case client.IsErrNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("inspecting image %s: %w", ref, err)
	}
}

// hookDir makes mmdebstrap set up merged-/usr with symlinks instead of
// installing the usrmerge package, which drags in perl (about 30 MB).
const hookDir = "/usr/share/mmdebstrap/hooks/merged-usr"

func mmdebstrapArgs(r Recipe, mirrors []string) []string {
	args := []string{"--variant=minbase"}
	if len(r.Packages) > 0 {
		args = append(args, "--include="+strings.Join(r.Packages, ","))
	}
	// bullseye predates the merged /usr, and the hook fails on it.
	if _, err := os.Stat(hookDir); err == nil && r.Suite != "bullseye" {
		args = append(args, "--hook-dir="+hookDir)
	}
	// OpenJDK's postinst registers java.1.gz as a slave of the java
	// alternative, and update-alternatives fails if the directory for that
	// link is missing, which excluding /usr/share/man/* makes it. The page
	// itself stays excluded; only the empty directory is made.
	args = append(args, `--setup-hook=mkdir -p "$1/usr/share/man/man1"`)
	// Documentation and translations are dead weight in a test node.
	for _, o := range []string{
		"path-exclude=/usr/share/man/*",
		"path-exclude=/usr/share/info/*",
		"path-exclude=/usr/share/locale/*",
		"path-exclude=/usr/share/doc/*",
		"path-include=/usr/share/doc/*/copyright",
	} {
		args = append(args, "--dpkgopt="+o)
	}
	// "-" writes the tarball to stdout so it never touches the disk.
	return append(append(args, r.Suite, "-"), mirrors...)
}

func build(ctx context.Context, cli *client.Client, r Recipe, tag string, out io.Writer) error {
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return errors.New("mmdebstrap not found: install the mmdebstrap package (the project's setup script does)")
	}
	mirrors, err := Sources(r.Suite)
	if err != nil {
		return err
	}
	start := time.Now()
	task := progress.Start(out, "images: building "+tag)
	task.Print(fmt.Sprintf("images: building %s (%s: %s) from %s", tag, r.Suite, strings.Join(r.Packages, " "), strings.Join(mirrors, "; ")))
	built := ""
	defer func() { task.Stop(built) }()

	// mmdebstrap's temp files go in a directory of our own: a signalled
	// mmdebstrap leaves its gpg home behind, and this way we can remove it.
	tmp, err := os.MkdirTemp("", "chaos-images-")
	if err != nil {
		return err
	}
	defer cleanTemp(tmp)
	// apt downloads as user _apt, which must reach the chroot inside.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, "mmdebstrap", mmdebstrapArgs(r, mirrors)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout = pw
	done := make(chan struct{})
	var waitErr error
	src := &tarStream{r: pr, done: done, err: &waitErr}
	stderr := newLineWriter(task)
	// The bar moves as mmdebstrap reaches a stage and as the tarball streams.
	show := func() {
		stage := stderr.stage.Load()
		task.Set(int64(stage), int64(len(stages)), fmt.Sprintf("%s, %.1f MB streamed", stages[max(0, stage-1)], float64(src.n.Load())/1e6))
	}
	stderr.onStage, src.onRead = show, show
	cmd.Stderr = stderr
	// Its own process group, because when writing the tarball fails
	// mmdebstrap sends SIGHUP to its whole group, which would otherwise
	// include this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// On cancellation, TERM the group: mmdebstrap alone would finish the
	// whole install before acting on it, but with apt and dpkg stopped too it
	// cleans up (unmounts, removes its chroot) and exits within seconds. Kill
	// it only if it dawdles.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Start()
	pw.Close() // the child holds its own copy; ours would hide EOF
	if err != nil {
		return fmt.Errorf("starting mmdebstrap: %w", err)
	}
	go func() { waitErr = cmd.Wait(); close(done) }()
	id, err := importImage(ctx, cli, src, r)
	pr.Close() // unblocks mmdebstrap if the import gave up early
	<-done

	// Report the root cause: a failed mmdebstrap also fails the import.
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case waitErr != nil:
		err = fmt.Errorf("mmdebstrap: %w; its last output:\n%s", waitErr, stderr)
	}
	if err == nil {
		if err = cli.ImageTag(ctx, id, tag); err != nil {
			err = fmt.Errorf("tagging %s: %w", id, err)
		}
	}
	// The import is untagged, so a failed build never leaves an image under
	// tag; drop whatever the daemon may have created from a partial stream.
	if err != nil {
		if id != "" {
			rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			cli.ImageRemove(rmCtx, id, image.RemoveOptions{PruneChildren: true})
		}
		return err
	}
	built = fmt.Sprintf("images: built %s in %ds, %.1f MB", tag, int(time.Since(start).Seconds()), float64(src.n.Load())/1e6)
	return nil
}

// cleanTemp removes what mmdebstrap left in dir. Its chroot is removed only
// by mmdebstrap itself, as it may still have host directories mounted in it:
// if one is left, so is dir.
func cleanTemp(dir string) {
	gpg, _ := filepath.Glob(filepath.Join(dir, "mmdebstrap.gpghome.*"))
	for _, g := range gpg {
		os.RemoveAll(g)
	}
	os.Remove(dir)
}

// importImage streams the tarball into the Engine and returns the new image ID.
func importImage(ctx context.Context, cli *client.Client, tar io.Reader, r Recipe) (string, error) {
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: tar, SourceName: "-"}, "", image.ImportOptions{
		Message: "chaos: mmdebstrap " + r.Suite,
		Changes: []string{
			"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"LABEL chaos.recipe=" + r.hash(),
			"LABEL chaos.packages=" + strings.Join(slices.Sorted(slices.Values(r.Packages)), ","),
			`CMD ["/bin/bash"]`,
		},
	})
	if err != nil {
		return "", fmt.Errorf("importing: %w", err)
	}
	defer rc.Close()
	var id string
	err = readMessages(rc, func(m message) {
		if strings.HasPrefix(m.Status, "sha256:") {
			id = m.Status
		}
	})
	if err == nil && id == "" {
		err = errors.New("daemon reported no image ID")
	}
	if err != nil {
		return id, fmt.Errorf("importing: %w", err)
	}
	return id, nil
}

// tarStream counts bytes for progress and, at EOF, waits for mmdebstrap: if
// it failed, the read fails too, so the upload is aborted instead of ending
// like a complete (but truncated) tarball.
type tarStream struct {
	r      io.Reader
	n      atomic.Int64
	onRead func()
	done   <-chan struct{}
	err    *error
}

func (s *tarStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n.Add(int64(n))
	s.onRead()
	if err == io.EOF {
		<-s.done
		if *s.err != nil {
			return n, fmt.Errorf("mmdebstrap: %w", *s.err)
		}
	}
	return n, err
}

// message is one line of the Engine's JSON progress stream.
type message struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Progress string `json:"progress"`
	Error    string `json:"error"`
}

func readMessages(r io.Reader, f func(message)) error {
	dec := json.NewDecoder(r)
	for {
		var m message
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
		f(m)
	}
}

// stages are mmdebstrap's stage messages ("I: ..."), in the order a build
// reaches them: how far it has come.
var stages = []string{
	"running apt-get update",
	"downloading packages",
	"extracting archives",
	"installing essential packages",
	"installing remaining packages",
	"cleaning package lists",
	"creating tarball",
	"success",
}

// lineWriter shows mmdebstrap's own messages ("I: ...", "W: ...", "E: ..."),
// counts the stages reached, and keeps the last lines of everything,
// including the chatter of apt and dpkg, for the error message if the build
// fails.
type lineWriter struct {
	*progress.Lines
	task    *progress.Task
	stage   atomic.Int32 // stages reached
	onStage func()
	tail    []string
}

const tailLines = 30

func newLineWriter(task *progress.Task) *lineWriter {
	l := &lineWriter{task: task}
	l.Lines = progress.NewLines(func(line string) {
		if len(line) > 2 && strings.Contains("IWE", line[:1]) && line[1] == ':' {
			task.Print("images: mmdebstrap: " + line)
		}
		for i, s := range stages {
			if strings.HasPrefix(line, "I: "+s) && int32(i+1) > l.stage.Load() {
				l.stage.Store(int32(i + 1))
				l.onStage()
			}
		}
		if l.tail = append(l.tail, line); len(l.tail) > tailLines {
			l.tail = l.tail[1:]
		}
	})
	return l
}

// String is the last lines written, for error messages.
func (l *lineWriter) String() string {
	return strings.Join(append(l.tail, l.Partial()), "\n")
}
