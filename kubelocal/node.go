package kubelocal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/chaos-testing/chaos/disks"
)

// NodeConfig is what the node's supervisor runs: the programs, built or
// unpacked by Up before it starts.
type NodeConfig struct {
	Cluster
	Bins  string // Components
	Etcd  string // the API server's etcd
	CNI   string // the CNI plugins
	Pause string // the sandbox image's archive
	Ref   string // and its name
}

// kernelTunables are the host settings the kubelet writes at start. In the
// node's mount namespace a file of the run folder is bound over each, so
// that the kubelet writes there and the host's stay as they were.
var kernelTunables = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// Node runs the node, inside its own mount and network namespaces (Up
// starts it so, under unshare), until ctx ends; then it stops everything
// it started and removes the cluster's cgroups.
func Node(ctx context.Context, cfg NodeConfig) error {
	c := cfg.Cluster
	logs := filepath.Join(c.State, "logs")
	for _, d := range []string{c.Run, logs, filepath.Join(c.State, "cni"), filepath.Join(c.State, "kubelet")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	defer sweep(c)
	if err := setUp(ctx, c); err != nil {
		return err
	}
	if _, err := os.Stat(c.Kubeconfig()); err != nil {
		if err := writePKI(c.pki(), c.Name, nodeIP); err != nil {
			return fmt.Errorf("writing the cluster's credentials: %w", err)
		}
	}
	files := map[string]string{
		filepath.Join(c.State, "containerd.toml"):          c.containerdConfig(cfg.CNI, cfg.Ref),
		filepath.Join(c.State, "cni", "10-chaos.conflist"): cniConfig(),
		filepath.Join(c.State, "kubelet.yaml"):             c.kubeletConfig(),
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return err
		}
	}
	var started []*exec.Cmd
	var names []string
	defer func() {
		// The kubelet first, so that it starts nothing more; the rest
		// after it, in the reverse order.
		for i := len(started) - 1; i >= 0; i-- {
			stop(started[i])
		}
	}()
	// Each program logs to logs/<what>.log.
	start := func(what, name string, args ...string) error {
		log, err := os.Create(filepath.Join(logs, what+".log"))
		if err != nil {
			return err
		}
		defer log.Close()
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		started, names = append(started, cmd), append(names, what)
		return nil
	}
	pki := func(f string) string { return filepath.Join(c.pki(), f) }
	bin := func(f string) string { return filepath.Join(cfg.Bins, f) }
	if err := start("containerd", "containerd", "--config", filepath.Join(c.State, "containerd.toml")); err != nil {
		return err
	}
	if err := waitFor(ctx, c.containerdSocket(), 30*time.Second); err != nil {
		return fmt.Errorf("containerd: %w (its log: %s)", err, filepath.Join(logs, "containerd.log"))
	}
	if out, err := run(ctx, "/", "ctr", "--address", c.containerdSocket(), "-n", "k8s.io", "images", "import", cfg.Pause); err != nil {
		return fmt.Errorf("importing the pause image: %w\n%s", err, out)
	}
	peer := "http://127.0.0.1:2380"
	if err := start("etcd", cfg.Etcd, "--name", "kube", "--data-dir", filepath.Join(c.State, "etcd"),
		"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "kube="+peer); err != nil {
		return err
	}
	if err := start("kube-apiserver", bin("kube-apiserver"), "--etcd-servers=http://127.0.0.1:2379",
		"--advertise-address="+nodeIP.String(), fmt.Sprintf("--secure-port=%d", apiPort),
		"--service-cluster-ip-range="+serviceCIDR, "--allow-privileged=true",
		"--tls-cert-file="+pki("apiserver.crt"), "--tls-private-key-file="+pki("apiserver.key"),
		"--client-ca-file="+pki("ca.crt"), "--token-auth-file="+pki("tokens.csv"),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file="+pki("sa.pub"), "--service-account-signing-key-file="+pki("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		// No DNS for the node's name.
		"--kubelet-preferred-address-types=InternalIP"); err != nil {
		return err
	}
	if err := start("kube-controller-manager", bin("kube-controller-manager"), "--kubeconfig="+pki("controller-manager.kubeconfig"),
		"--service-account-private-key-file="+pki("sa.key"), "--root-ca-file="+pki("ca.crt"),
		"--use-service-account-credentials=true", "--leader-elect=false", "--bind-address=127.0.0.1"); err != nil {
		return err
	}
	if err := start("kube-scheduler", bin("kube-scheduler"), "--kubeconfig="+pki("scheduler.kubeconfig"), "--leader-elect=false", "--bind-address=127.0.0.1"); err != nil {
		return err
	}
	if err := start("kubelet", bin("kubelet"), "--config="+filepath.Join(c.State, "kubelet.yaml"), "--kubeconfig="+pki("kubelet.kubeconfig"),
		"--hostname-override="+c.Name, "--node-ip="+nodeIP.String(),
		"--root-dir="+filepath.Join(c.State, "kubelet"), "--cert-dir="+filepath.Join(c.State, "kubelet", "pki")); err != nil {
		return err
	}
	exited := make(chan string, len(started))
	for i, cmd := range started {
		go func() { _ = cmd.Wait(); exited <- names[i] }() // its log says why
	}
	select {
	case <-ctx.Done():
		return nil
	case name := <-exited:
		return fmt.Errorf("%s exited (its log: %s)", name, filepath.Join(logs, name+".log"))
	}
}

// setUp lets go of the host's mounts that would otherwise live on in the
// node's mount namespace, gives its network namespace its address and
// loopback, binds stand-ins over the kernel settings the kubelet writes,
// and makes the kubelet's cgroup root in every hierarchy.
func setUp(ctx context.Context, c Cluster) error {
	if err := detachForeign(); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "kn0", "type", "veth", "peer", "name", "kn1"},
		{"addr", "add", nodeCIDR, "dev", "kn0"},
		{"link", "set", "kn0", "up"},
		{"link", "set", "kn1", "up"},
	} {
		if out, err := run(ctx, "/", "ip", args...); err != nil {
			return fmt.Errorf("ip %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, t := range kernelTunables {
		real := filepath.Join("/proc/sys", t)
		value, err := os.ReadFile(real)
		if err != nil {
			continue // not on this kernel
		}
		stand := filepath.Join(c.Run, "sysctl-"+strings.ReplaceAll(t, "/", "-"))
		if err := os.WriteFile(stand, value, 0o644); err != nil {
			return err
		}
		if err := syscall.Mount(stand, real, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("binding a stand-in over %s: %w", real, err)
		}
	}
	for _, h := range cgroupHierarchies() {
		if err := os.MkdirAll(filepath.Join(h, c.cgroupRoot()), 0o755); err != nil {
			return fmt.Errorf("making the kubelet's cgroup root: %w", err)
		}
	}
	return nil
}

// detachForeign detaches, in the node's mount namespace, the copies of
// the host's FUSE and namespace mounts that unshare made: a copy would
// keep a chaos run's disk (a FUSE mount) or a container's network
// namespace alive after the host let go of it, until the node stopped.
func detachForeign() error {
	mounts, err := disks.Mounts()
	if err != nil {
		return err
	}
	var points []string
	for _, m := range mounts {
		if strings.HasPrefix(m.Type, "fuse") || m.Type == "nsfs" {
			points = append(points, m.Path)
		}
	}
	// Deepest first.
	slices.SortFunc(points, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("detaching the host's mount %s from the node's namespace: %w", p, err)
		}
	}
	return nil
}

// cgroupHierarchies are the mounted cgroup v1 hierarchies (a named one,
// such as name=systemd, included).
func cgroupHierarchies() []string {
	var out []string
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// stop ends a started program: SIGTERM, then SIGKILL after 10 s.
func stop(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _, _ = cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// waitFor waits until path exists.
func waitFor(ctx context.Context, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %s", path, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sweep kills what is left of the cluster's processes (its pods'
// containers, in its cgroups; the shims and programs started for it,
// which name its folders) and removes its cgroups. Down runs it too, for
// a node whose supervisor was killed.
func sweep(c Cluster) error {
	for range 50 {
		pids := leftPids(c)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var errs []error
	for _, h := range cgroupHierarchies() {
		errs = append(errs, removeCgroups(filepath.Join(h, c.cgroupRoot())))
	}
	return errors.Join(errs...)
}

// leftPids are the processes of the cluster but this one.
func leftPids(c Cluster) []int {
	seen := map[int]bool{}
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, c.cgroupRoot()), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "cgroup.procs" {
				for _, pid := range readPids(p) {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		var pid int
		if _, err := fmt.Sscan(p.Name(), &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && (strings.Contains(string(cmdline), c.State+"/") || strings.Contains(string(cmdline), c.Run+"/")) {
			seen[pid] = true
		}
	}
	delete(seen, os.Getpid())
	var out []int
	for pid := range seen {
		out = append(out, pid)
	}
	return out
}

func readPids(path string) []int {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// removeCgroups removes a cgroup and those under it, deepest first.
func removeCgroups(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing cgroup %s: %w", dirs[i], err)
		}
	}
	return err
}
