package kubelocal

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chaos-testing/chaos/nfqueue"
)

// ErrNotUp is a cluster's that is not up.
var ErrNotUp = errors.New("not up (chaos kube up)")

// NodeEnv carries the NodeConfig, as JSON, to the supervisor Up starts.
const NodeEnv = "CHAOS_KUBE_NODE"

// Up brings the cluster up, unless it is up already: it builds or finds
// the programs, starts the node's supervisor (node, a command that runs
// Node with the NodeConfig of NodeEnv) in its own mount and network
// namespaces, and waits until the node is Ready and pods can be created.
// etcd is the API server's etcd program.
func Up(ctx context.Context, c Cluster, etcd string, node []string, out io.Writer) error {
	if pid, ok := c.running(); ok {
		fmt.Fprintf(out, "kubernetes: %s is up already (supervisor pid %d)\n", c.Name, pid)
		return nil
	}
	start := time.Now()
	bins, err := Binaries(ctx, out)
	if err != nil {
		return err
	}
	cni, err := cniPlugins(ctx)
	if err != nil {
		return err
	}
	pause, ref, err := pauseImage(ctx, out)
	if err != nil {
		return err
	}
	cfg, err := json.Marshal(NodeConfig{Cluster: c, Bins: bins, Etcd: etcd, CNI: cni, Pause: pause, Ref: ref})
	if err != nil {
		return err
	}
	for _, d := range []string{c.Run, filepath.Join(c.State, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	log, err := os.Create(filepath.Join(c.State, "logs", "node.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command("unshare", append([]string{"--mount", "--net", "--propagation", "private", "--fork", "--"}, node...)...)
	cmd.Env = append(os.Environ(), NodeEnv+"="+string(cfg))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the node: %w", err)
	}
	if err := os.WriteFile(c.pidFile(), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	_ = cmd.Process.Release()
	fmt.Fprintf(out, "kubernetes: starting %s (logs in %s)\n", c.Name, filepath.Join(c.State, "logs"))
	if err := c.awaitReady(ctx, start, 3*time.Minute); err != nil {
		tail, _ := os.ReadFile(log.Name())
		derr := Down(context.WithoutCancel(ctx), c, io.Discard)
		return errors.Join(fmt.Errorf("kubernetes: %s did not come up: %w\n%s", c.Name, err, lastLines(tail, 20)), derr)
	}
	fmt.Fprintf(out, "kubernetes: %s is up in %.1fs: KUBECONFIG=%s, API server %s, reachable in its network namespace: chaos kube shell\n",
		c.Name, time.Since(start).Seconds(), c.Kubeconfig(), c.server())
	return nil
}

// Down stops the cluster and removes what it left (processes, cgroups,
// the run folder); its state (etcd's data, images) stays for the next Up.
func Down(ctx context.Context, c Cluster, out io.Writer) error {
	if pid, ok := c.running(); ok {
		// The supervisor is unshare's child; unshare ends with it.
		for _, child := range readPids(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)) {
			_ = syscall.Kill(child, syscall.SIGTERM)
		}
		for i := 0; i < 600 && alive(pid); i++ {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	err := sweep(c)
	if rerr := os.RemoveAll(c.Run); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err == nil {
		fmt.Fprintf(out, "kubernetes: %s is down\n", c.Name)
	}
	return err
}

func (c Cluster) pidFile() string { return filepath.Join(c.Run, "node.pid") }

// running is the pid of the node's unshare, when it is alive.
func (c Cluster) running() (int, bool) {
	data, err := os.ReadFile(c.pidFile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid, err == nil && alive(pid)
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie is not alive: the field after the command's ")" is Z.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// Shell runs argv (the user's shell when empty) in the node's network
// namespace, where the API server is reachable, with KUBECONFIG set, and,
// for curl, CURL_CA_BUNDLE the cluster's CA and KUBE_TOKEN the admin's
// bearer token.
func (c Cluster) Shell(argv []string) (*exec.Cmd, error) {
	pid, ok := c.running()
	if !ok {
		return nil, fmt.Errorf("kubernetes: %s: %w", c.Name, ErrNotUp)
	}
	token, err := os.ReadFile(filepath.Join(c.pki(), "admin.token"))
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		argv = []string{cmp.Or(os.Getenv("SHELL"), "/bin/sh")}
	}
	cmd := exec.Command("nsenter", append([]string{"--target", strconv.Itoa(pid), "--net", "--"}, argv...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig(), "CURL_CA_BUNDLE="+filepath.Join(c.pki(), "ca.crt"),
		"KUBE_TOKEN="+strings.TrimSpace(string(token)))
	return cmd, nil
}

func (c Cluster) server() string { return fmt.Sprintf("https://%s:%d", nodeIP, apiPort) }

// Client is an HTTP client of the cluster's API server as admin, which
// dials inside the node's network namespace.
func (c Cluster) Client() (*http.Client, error) {
	pid, ok := c.running()
	if !ok {
		return nil, fmt.Errorf("kubernetes: %s: %w", c.Name, ErrNotUp)
	}
	ca, err := os.ReadFile(filepath.Join(c.pki(), "ca.crt"))
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(filepath.Join(c.pki(), "admin.token"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	netns := fmt.Sprintf("/proc/%d/ns/net", pid)
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var conn net.Conn
			_, err := nfqueue.InNamespace(netns, func() (int, error) {
				var err error
				conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
				return 0, err
			})
			return conn, err
		},
	}
	return &http.Client{Transport: bearer{tr, strings.TrimSpace(string(token))}, Timeout: 30 * time.Second}, nil
}

type bearer struct {
	rt    http.RoundTripper
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// Get reads an API path's object as JSON into v.
func (c Cluster) Get(ctx context.Context, cl *http.Client, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server()+path, nil)
	if err != nil {
		return err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(body, v)
}

// awaitReady waits until the API server is ready, the node Ready by a
// heartbeat since a time (the node of an earlier Up stays Ready in etcd
// for a while), and the default namespace's service account made (pods
// need it).
func (c Cluster) awaitReady(ctx context.Context, since time.Time, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last error
	for {
		if _, ok := c.running(); !ok {
			return errors.New("the node's supervisor exited")
		}
		last = c.ready(ctx, since)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w", limit, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Status says whether the cluster is up and ready.
func (c Cluster) Status(ctx context.Context) error { return c.ready(ctx, time.Time{}) }

func (c Cluster) ready(ctx context.Context, since time.Time) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	if err := c.Get(ctx, cl, "/readyz", nil); err != nil {
		return err
	}
	var node struct {
		Status struct {
			Conditions []struct {
				Type, Status, Message string
				LastHeartbeatTime     time.Time
			}
		}
	}
	if err := c.Get(ctx, cl, "/api/v1/nodes/"+c.Name, &node); err != nil {
		return err
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == "Ready" && (cond.Status != "True" || cond.LastHeartbeatTime.Before(since.Truncate(time.Second))) {
			return fmt.Errorf("node %s not Ready: %s", c.Name, cond.Message)
		}
	}
	if len(node.Status.Conditions) == 0 {
		return fmt.Errorf("node %s has no conditions yet", c.Name)
	}
	return c.Get(ctx, cl, "/api/v1/namespaces/default/serviceaccounts/default", nil)
}

// lastLines is the last n lines of text.
func lastLines(text []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
