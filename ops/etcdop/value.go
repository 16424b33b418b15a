package etcdop

import (
	"strconv"
	"strings"
)

// A large value is recorded as its name and its size, "p3-17#32769", and
// sent as its name, '#' and that many filler bytes: etcd's robustness
// traffic puts values over 32 KiB, and a history need not hold them.
// Wire is the value sent for a recorded one, and so the bytes etcd
// compares; Recorded is the value recorded for one read: a filler that
// is not all filler is kept whole, and one of another length is recorded
// with that length, a value no put wrote.
func Wire(v string) string {
	name, size, ok := strings.Cut(v, "#")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n < 1 {
		return v
	}
	return name + "#" + strings.Repeat(filler, n)
}

// Recorded is the value a history records for v as read (see Wire).
func Recorded(v string) string {
	name, pad, ok := strings.Cut(v, "#")
	if !ok || pad == "" || strings.Trim(pad, filler) != "" {
		return v
	}
	return name + "#" + strconv.Itoa(len(pad))
}

const filler = "x"
