package kubelocal

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/images"
)

// hostState is what bringing a cluster up and down must leave as it was:
// the kernel settings the kubelet writes, the top cgroups, Docker's
// containerd's containers, the host's mounts and network links.
func hostState(t *testing.T) map[string]string {
	t.Helper()
	s := map[string]string{}
	for _, k := range kernelTunables {
		v, _ := os.ReadFile(filepath.Join("/proc/sys", k))
		s["sysctl "+k] = strings.TrimSpace(string(v))
	}
	for _, h := range cgroupHierarchies() {
		entries, _ := os.ReadDir(h)
		var dirs []string
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
		s["cgroups "+h] = strings.Join(dirs, " ")
	}
	out, _ := exec.Command("ctr", "-n", "moby", "containers", "ls", "-q").Output()
	s["docker's containerd"] = string(out)
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	s["mounts"] = fmt.Sprint(bytes.Count(mounts, []byte("\n")))
	links, _ := exec.Command("ip", "-o", "link").Output()
	s["links"] = fmt.Sprint(bytes.Count(links, []byte("\n")))
	return s
}

// TestUpDown brings a cluster up (from cached binaries, or building them
// with CHAOS_KUBE=1: about half an hour), runs a pod of an image built
// here, and takes it down, once as down does and once after its
// supervisor was killed: each time the host is as it was.
func TestUpDown(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if os.Getenv("CHAOS_KUBE") == "" {
		if m, _ := filepath.Glob(filepath.Join(images.CacheDir(), "kubernetes-"+Version+"-*")); len(m) == 0 {
			t.Skip("no Kubernetes built yet: CHAOS_KUBE=1 builds it (about half an hour)")
		}
	}
	etcd := os.Getenv("CHAOS_KUBE_ETCD")
	if etcd == "" {
		m, _ := filepath.Glob(filepath.Join(images.CacheDir(), "etcd-v3.*"))
		if len(m) == 0 {
			t.Skip("no etcd built yet: run an etcd plan first, or set CHAOS_KUBE_ETCD")
		}
		etcd = m[len(m)-1]
	}
	self := os.Getenv("CHAOS_BIN")
	if self == "" {
		t.Skip("CHAOS_BIN (a chaos binary, for the node's supervisor) is not set")
	}
	for _, killed := range []bool{false, true} {
		name := "down"
		if killed {
			name = "SIGKILL of the supervisor, then down"
		}
		t.Run(name, func(t *testing.T) { upPodDown(t, etcd, self, killed) })
	}
}

// upPodDown brings a fresh cluster up, runs a pod, takes the cluster down
// (killing its supervisor first, if killed), and compares the host with
// what it was.
func upPodDown(t *testing.T, etcd, self string, killed bool) {
	before := hostState(t)
	c := Named("test")
	if err := os.RemoveAll(c.State); err != nil { // a fresh cluster, as up's first time
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	var log bytes.Buffer
	if err := Up(ctx, c, etcd, []string{self, "kube-node"}, &log); err != nil {
		t.Fatalf("up: %v\n%s", err, log.String())
	}
	t.Log(log.String())
	defer func() {
		if pid, ok := c.running(); killed && ok {
			for _, p := range append(readPids(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)), pid) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		if err := Down(context.Background(), c, &log); err != nil {
			t.Errorf("down: %v", err)
		}
		if err := os.RemoveAll(c.State); err != nil {
			t.Error(err)
		}
		after := hostState(t)
		for _, k := range slices.Sorted(maps.Keys(before)) {
			if before[k] != after[k] {
				t.Errorf("%s: %q before, %q after", k, before[k], after[k])
			}
		}
		if left := leftPids(c); len(left) > 0 {
			t.Errorf("processes of the cluster left: %v", left)
		}
	}()
	// The node's mount namespace holds no copy of the host's FUSE mounts
	// (a chaos run's disks), which would keep them alive.
	if pid, ok := c.running(); ok {
		info, _ := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		if bytes.Contains(info, []byte(" - fuse")) || bytes.Contains(info, []byte(" - nsfs")) {
			t.Errorf("the node's mount namespace holds the host's FUSE or namespace mounts:\n%s", info)
		}
	}
	cl, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	_, ref, err := pauseImage(ctx, &log)
	if err != nil {
		t.Fatal(err)
	}
	pod := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"hello"},"spec":{"containers":[{"name":"c","image":%q,"imagePullPolicy":"Never"}]}}`, ref)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.server()+"/api/v1/namespaces/default/pods", strings.NewReader(pod))
	req.Header.Set("Content-Type", "application/json")
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating a pod: %s", resp.Status)
	}
	start := time.Now()
	for {
		var p struct{ Status struct{ Phase string } }
		if err := c.Get(ctx, cl, "/api/v1/namespaces/default/pods/hello", &p); err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == "Running" {
			t.Logf("the pod ran %s after it was created", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the pod is %s after a minute", p.Status.Phase)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
