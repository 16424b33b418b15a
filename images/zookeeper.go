package images

// ZooKeeper is the recipe for ZooKeeper nodes: Debian's zookeeper 3.8.0,
// whose package depends on default-jre and so brings OpenJDK 17 (the full,
// not the headless, runtime: most of the image's size). The fault tools are
// the same as in Node, so the nemeses work on either.
var ZooKeeper = Recipe{
	Name:     "zookeeper",
	Suite:    "bookworm",
	Packages: []string{"zookeeper", "iptables", "iproute2", "procps"},
}
