// Package nfqueue takes the packets that an iptables NFQUEUE rule queued
// in a network namespace and gives each back with a verdict: at once,
// later, changed, or never. It is how the harness delays, reorders,
// duplicates and corrupts a node's packets on a kernel without netem: the
// node keeps no privilege, the harness (root) holds the queue.
//
// It speaks nfnetlink's queue protocol (linux/netfilter/nfnetlink_queue.h)
// over a netlink socket made inside the namespace: a socket keeps the
// namespace it was made in.
package nfqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Verdicts (linux/netfilter.h).
const (
	verdictRepeat = 4
)

// nfnetlink's queue subsystem and its messages and attributes.
const (
	subsysQueue    = 3
	msgPacket      = 0
	msgVerdict     = 1
	msgConfig      = 2
	cfgCmd         = 1
	cfgParams      = 2
	cfgQueueMaxlen = 3
	cmdBind        = 1
	copyPacket     = 2
	attrPacketHdr  = 1
	attrVerdictHdr = 2
	attrMark       = 3
	attrPayload    = 10
)

// Packet is one queued packet: its id, for the verdict, its mark, and its
// bytes from the IP header on.
type Packet struct {
	ID      uint32
	Mark    uint32
	Payload []byte
}

// Queue is one bound queue. Its verdicts may come from any goroutine.
type Queue struct {
	// f is the socket, in the runtime's poller so that Close wakes a
	// Read that waits.
	f   *os.File
	raw int // an IPv4 raw socket in the same namespace, for Send; -1 closed
	rmu sync.Mutex
	num uint16
	wmu sync.Mutex // one verdict at a time on the socket
	buf []byte
}

// maxlen is how many packets a queue holds before the kernel drops what
// comes next, as netem drops past its limit. netem's default limit, 1,000,
// is too few for a cluster's traffic held 100 ms and more.
const maxlen = 20000

// Open binds queue num in the network namespace at netns (a path such as
// /proc/PID/ns/net), copying whole packets.
func Open(netns string, num uint16) (*Queue, error) {
	fd, err := InNamespace(netns, func() (int, error) {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_NETFILTER)
		if err != nil {
			return -1, err
		}
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			unix.Close(fd)
			return -1, err
		}
		return fd, nil
	})
	if err != nil {
		return nil, fmt.Errorf("netfilter socket in %s: %w", netns, err)
	}
	raw, err := InNamespace(netns, func() (int, error) {
		return unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	})
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("raw socket in %s: %w", netns, err)
	}
	// A burst larger than the socket's buffer would be lost to an
	// overrun; a lost packet is dropped by the kernel, as netem drops
	// past its limit, and is no error for the reader.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
	q := &Queue{f: os.NewFile(uintptr(fd), "nfqueue"), raw: raw, num: num, buf: make([]byte, 1<<17)}
	if err := q.setup(); err != nil {
		q.Close()
		return nil, fmt.Errorf("queue %d in %s: %w", num, netns, err)
	}
	return q, nil
}

func (q *Queue) setup() error {
	params := binary.BigEndian.AppendUint32(nil, 0xffff)
	params = append(params, copyPacket)
	steps := [][]byte{
		attr(cfgCmd, []byte{cmdBind, 0, 0, unix.AF_INET}),
		attr(cfgParams, params),
		attr(cfgQueueMaxlen, binary.BigEndian.AppendUint32(nil, maxlen)),
	}
	for _, a := range steps {
		if err := q.request(msgConfig, a); err != nil {
			return err
		}
	}
	return nil
}

// request sends a config message and waits for its acknowledgement.
func (q *Queue) request(msg uint16, attrs []byte) error {
	if err := q.send(msg, unix.NLM_F_REQUEST|unix.NLM_F_ACK, attrs); err != nil {
		return err
	}
	for {
		n, err := q.f.Read(q.buf)
		if err != nil {
			return err
		}
		for _, m := range messages(q.buf[:n]) {
			if m.typ == unix.NLMSG_ERROR && len(m.data) >= 4 {
				if code := int32(binary.NativeEndian.Uint32(m.data)); code != 0 {
					return unix.Errno(-code)
				}
				return nil
			}
		}
	}
}

func (q *Queue) send(msg uint16, flags uint16, attrs []byte) error {
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+4+len(attrs))
	binary.NativeEndian.PutUint16(b[4:], subsysQueue<<8|msg)
	binary.NativeEndian.PutUint16(b[6:], flags)
	b = append(b, unix.AF_UNSPEC, 0)
	b = binary.BigEndian.AppendUint16(b, q.num)
	b = append(b, attrs...)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	q.wmu.Lock()
	defer q.wmu.Unlock()
	_, err := q.f.Write(b)
	return err
}

// Read returns the packets queued since the last call, waiting for at
// least one; an error once the queue is closed.
func (q *Queue) Read() ([]Packet, error) {
	for {
		n, err := q.f.Read(q.buf)
		if errors.Is(err, unix.ENOBUFS) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var out []Packet
		for _, m := range messages(q.buf[:n]) {
			if m.typ != subsysQueue<<8|msgPacket || len(m.data) < 4 {
				continue
			}
			if p, ok := parsePacket(m.data[4:]); ok {
				out = append(out, p)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

type message struct {
	typ  uint16
	data []byte
}

// messages splits what one read returned. The last message may end
// without the padding to four bytes that syscall.ParseNetlinkMessage
// insists on.
func messages(b []byte) []message {
	var out []message
	for len(b) >= unix.NLMSG_HDRLEN {
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			break
		}
		out = append(out, message{binary.NativeEndian.Uint16(b[4:]), b[unix.NLMSG_HDRLEN:l]})
		b = b[min(len(b), (l+3)&^3):]
	}
	return out
}

func parsePacket(b []byte) (p Packet, hasID bool) {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		typ := binary.NativeEndian.Uint16(b[2:]) & 0x3fff
		if l < 4 || l > len(b) {
			break
		}
		v := b[4:l]
		switch typ {
		case attrPacketHdr:
			if len(v) >= 4 {
				p.ID, hasID = binary.BigEndian.Uint32(v), true
			}
		case attrMark:
			if len(v) >= 4 {
				p.Mark = binary.BigEndian.Uint32(v)
			}
		case attrPayload:
			p.Payload = append([]byte(nil), v...)
		}
		b = b[min(len(b), (l+3)&^3):]
	}
	return p, hasID
}

// Pass gives packet id back to the kernel, which runs it through the
// hook's rules again from the top, with mark set on it (so that the rule
// that queued it, which skips marked packets, lets it by). The rules after
// the queue's, a partition's drop among them, still see it; an accept
// would skip them. payload, if not nil, replaces the packet's bytes.
func (q *Queue) Pass(id, mark uint32, payload []byte) error {
	v := attr(attrVerdictHdr, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, verdictRepeat), id))
	v = append(v, attr(attrMark, binary.BigEndian.AppendUint32(nil, mark))...)
	if payload != nil {
		v = append(v, attr(attrPayload, payload)...)
	}
	return q.send(msgVerdict, unix.NLM_F_REQUEST, v)
}

// Send puts an IPv4 packet, header and all, into the namespace as if a
// program there sent it, with mark set on it (so that the rule that
// queued the original lets it by). One addressed to the namespace itself
// arrives through its loopback interface. It is how a packet is
// duplicated.
func (q *Queue) Send(packet []byte, mark uint32) error {
	if len(packet) < 20 || packet[0]>>4 != 4 {
		return fmt.Errorf("not an IPv4 packet")
	}
	to := &unix.SockaddrInet4{Addr: [4]byte(packet[16:20])}
	q.rmu.Lock()
	defer q.rmu.Unlock()
	if q.raw < 0 {
		return os.ErrClosed
	}
	if err := unix.SetsockoptInt(q.raw, unix.SOL_SOCKET, unix.SO_MARK, int(mark)); err != nil {
		return err
	}
	return unix.Sendto(q.raw, packet, 0, to)
}

// Close unbinds the queue: the kernel drops what it still holds for it.
// A Read waiting returns. It may run twice.
func (q *Queue) Close() error {
	q.rmu.Lock()
	if q.raw >= 0 {
		unix.Close(q.raw)
		q.raw = -1
	}
	q.rmu.Unlock()
	return q.f.Close()
}

// attr is one netlink attribute, padded to four bytes.
func attr(typ uint16, v []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(4+len(v)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// InNamespace runs open, which makes a socket, on a thread that entered
// the network namespace at netns, and returns what it made: the socket
// keeps that namespace. The thread goes back to its own namespace, or
// dies with its goroutine if it cannot.
func InNamespace(netns string, open func() (int, error)) (int, error) {
	type result struct {
		fd  int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		fd, err, back := enter(netns, open)
		if back {
			runtime.UnlockOSThread()
		}
		done <- result{fd, err}
	}()
	r := <-done
	return r.fd, r.err
}

func enter(netns string, open func() (int, error)) (fd int, err error, back bool) {
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return -1, err, true
	}
	defer own.Close()
	target, err := os.Open(netns)
	if err != nil {
		return -1, err, true
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("enter %s: %w", netns, err), true
	}
	fd, err = open()
	return fd, err, unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil
}
