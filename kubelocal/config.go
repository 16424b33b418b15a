package kubelocal

import (
	"fmt"
	"net"
	"path/filepath"
)

// The node's addresses, inside its own network namespace: nothing of the
// cluster is reachable from outside it, and it has no route out.
var (
	nodeIP    = net.IPv4(10, 77, 0, 1)
	serviceIP = net.IPv4(10, 96, 0, 1) // the API server's, first of serviceCIDR
)

const (
	nodeCIDR    = "10.77.0.1/24"
	podCIDR     = "10.88.0.0/16"
	serviceCIDR = "10.96.0.0/16"
	apiPort     = 6443
)

// Cluster is a local cluster's name and where it keeps its files: state
// (etcd's data, credentials, containerd's images, the kubelet's root)
// survives down, so that up again is quick; run holds sockets and the
// supervisor's pid, and goes at down.
type Cluster struct {
	Name  string
	State string
	Run   string
}

// Named is the local cluster called name, in the usual places.
func Named(name string) Cluster {
	return Cluster{Name: name, State: filepath.Join("/var/lib/chaos/kube", name), Run: filepath.Join("/run/chaos-kube", name)}
}

func (c Cluster) pki() string              { return filepath.Join(c.State, "pki") }
func (c Cluster) containerdSocket() string { return filepath.Join(c.Run, "containerd.sock") }

// Kubeconfig is the file a client of the cluster uses, as admin.
func (c Cluster) Kubeconfig() string { return filepath.Join(c.pki(), "admin.kubeconfig") }

// cgroupRoot is the cgroup, in every hierarchy, the kubelet puts pods in.
func (c Cluster) cgroupRoot() string { return "/chaos-kube-" + c.Name }

// containerdConfig is the private containerd's: its own root, state and
// socket, so Docker's containerd is never touched. This host lacks
// CAP_SYS_RESOURCE: without restrict_oom_score_adj runc fails to start
// any container ("can't get final child's PID from pipe").
func (c Cluster) containerdConfig(cni, pause string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, filepath.Join(c.State, "containerd"), filepath.Join(c.Run, "containerd"), c.containerdSocket(),
		filepath.Join(c.Run, "containerd.ttrpc.sock"), filepath.Join(c.Run, "containerd.debug.sock"),
		filepath.Join(c.State, "containerd-opt"), pause, cni, filepath.Join(c.State, "cni"))
}

// cniConfig is the pods' network: a bridge with the pods' addresses, no
// masquerade; the pods' default route leads only into the node's
// namespace.
func cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "chaos",
  "plugins": [
    {"type": "bridge", "bridge": "chaos0", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
`, podCIDR)
}

// kubeletConfig is the kubelet's: pods in the cluster's cgroup root, no
// DNS, no eviction (a full disk here is the host's business, not a
// reason to evict a run's pods), and, reachable only from the node's
// namespace, any request allowed.
func (c Cluster) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: %s
containerRuntimeEndpoint: unix://%s
resolvConf: ""
failSwapOn: false
failCgroupV1: false
evictionHard: {memory.available: "0%%", nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
`, nodeIP, c.cgroupRoot(), c.containerdSocket())
}
