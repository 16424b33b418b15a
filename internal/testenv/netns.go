package testenv

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/chaos-testing/chaos/nfqueue"
)

// UDPIn is a UDP socket bound to addr:port inside the network namespace
// at netns (a node's, which runs no UDP service of its own), made by the
// harness: what a packet fault does to datagrams reaching it.
func UDPIn(t testing.TB, netns string, addr [4]byte, port int) net.PacketConn {
	t.Helper()
	fd, err := nfqueue.InNamespace(netns, func() (int, error) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
		return fd, unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: addr})
	})
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "udp")
	defer f.Close()
	c, err := net.FilePacketConn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// UDPChecksumErrors is the count of UDP datagrams the namespace at netns
// dropped for their checksum (InCsumErrors in /proc/net/snmp).
func UDPChecksumErrors(t testing.TB, netns string) int {
	t.Helper()
	out, err := exec.Command("nsenter", "--net="+netns, "cat", "/proc/net/snmp").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, name := range names {
			if name == "InCsumErrors" && i < len(f) {
				n, err := strconv.Atoi(f[i])
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	t.Fatalf("no UDP InCsumErrors in /proc/net/snmp:\n%s", out)
	return 0
}
