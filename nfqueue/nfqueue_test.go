package nfqueue_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/nfqueue"
)

// scratch is a network namespace of its own, held by a sleeping process,
// with its loopback up and UDP to port 9999 queued to queue 7, except what
// carries mark 1.
func scratch(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a network namespace and iptables")
	}
	holder := exec.Command("unshare", "-n", "sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	pid := fmt.Sprint(holder.Process.Pid)
	netns := "/proc/" + pid + "/ns/net"
	// unshare makes the namespace a moment after it starts: until then
	// its process is in ours, where no rule must go.
	own, _ := os.Readlink("/proc/self/ns/net")
	for at, _ := os.Readlink(netns); at == own; at, _ = os.Readlink(netns) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, argv := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"iptables", "-A", "OUTPUT", "-o", "lo", "-p", "udp", "--dport", "9999", "-m", "mark", "!", "--mark", "1/1", "-j", "NFQUEUE", "--queue-num", "7"},
	} {
		if out, err := exec.Command("nsenter", append([]string{"--net=" + netns, "--"}, argv...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", argv, err, out)
		}
	}
	return netns
}

// TestQueueHoldsChangesAndDrops: a packet held 100 ms arrives no sooner;
// one whose bytes the verdict changed fails its checksum and never
// arrives, as a corrupted packet on a wire; one without a verdict never
// arrives; a copied one arrives twice; and Close wakes the reader.
func TestQueueHoldsChangesAndDrops(t *testing.T) {
	netns := scratch(t)
	q, err := nfqueue.Open(netns, 7)
	if err != nil {
		t.Fatal(err)
	}
	rx := testenv.UDPIn(t, netns, [4]byte{127, 0, 0, 1}, 9999)
	tx := testenv.UDPIn(t, netns, [4]byte{127, 0, 0, 1}, 0)
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9999}
	fates := map[string]func(p nfqueue.Packet) error{
		"held": func(p nfqueue.Packet) error {
			time.Sleep(100 * time.Millisecond)
			return q.Pass(p.ID, 1, nil)
		},
		"changed": func(p nfqueue.Packet) error {
			b := append([]byte(nil), p.Payload...)
			b[len(b)-1] ^= 0x40 // the datagram's last byte, under its checksum
			return q.Pass(p.ID, 1, b)
		},
		"dropped": func(nfqueue.Packet) error { return nil }, // dropped at Close
		"copied": func(p nfqueue.Packet) error {
			if err := q.Pass(p.ID, 1, nil); err != nil {
				return err
			}
			return q.Send(p.Payload, 1)
		},
	}
	readerDone := make(chan error, 1)
	go func() {
		for {
			ps, err := q.Read()
			if err != nil {
				readerDone <- err
				return
			}
			for _, p := range ps {
				fate := fates[strings.TrimRight(string(p.Payload[28:]), "0123456789")]
				if fate == nil {
					t.Errorf("queued an unknown packet %q", p.Payload[28:])
					continue
				}
				if err := fate(p); err != nil {
					t.Errorf("verdict: %v", err)
				}
			}
		}
	}()
	buf := make([]byte, 100)
	for i, name := range []string{"held", "changed", "dropped", "held", "copied"} {
		sent := time.Now()
		if _, err := tx.WriteTo(fmt.Appendf(nil, "%s%d", name, i), to); err != nil {
			t.Fatal(err)
		}
		rx.SetReadDeadline(time.Now().Add(time.Second))
		n, _, err := rx.ReadFrom(buf)
		took := time.Since(sent)
		if name == "copied" {
			if err != nil {
				t.Fatalf("the copied packet never arrived: %v", err)
			}
			n, _, err = rx.ReadFrom(buf)
			if err != nil || string(buf[:n]) != "copied4" {
				t.Errorf("the copy of %q: %q, %v", "copied4", buf[:n], err)
			}
			rx.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if n, _, err = rx.ReadFrom(buf); err == nil {
				t.Errorf("a third %q arrived: the copy was queued again", buf[:n])
			}
			continue
		}
		switch {
		case name != "held" && err == nil:
			t.Errorf("a %s packet arrived: %q", name, buf[:n])
		case name == "held" && err != nil:
			t.Errorf("the held packet never arrived: %v", err)
		case name == "held" && took < 100*time.Millisecond:
			t.Errorf("the held packet arrived after %v, before its 100 ms", took)
		}
	}
	// The changed one was dropped for its checksum, as a receiver drops
	// a packet corrupted on a wire.
	if errs := testenv.UDPChecksumErrors(t, netns); errs != 1 {
		t.Errorf("UDP checksum errors in the namespace: %d, want 1", errs)
	}
	q.Close()
	select {
	case <-readerDone:
	case <-time.After(5 * time.Second):
		t.Error("Close did not wake the reader")
	}
}
