package jepsen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// listAppendHistory writes a valid Elle list-append history of txns
// transactions as Jepsen prints one (an op map per line, with :time and
// :index), about 500 bytes a transaction: the size of the histories issue
// 35 measured the reader on. Ten processes each keep a transaction in
// flight; a transaction takes effect when it completes, so the history is
// strict serializable. Each key takes 40 appends before a fresh key
// replaces it, so reads return lists of up to 40 elements.
func listAppendHistory(txns int) []byte {
	const procs, keys, appendsPerKey = 10, 8, 40
	var b bytes.Buffer
	lists := map[int][]int{}
	appended := map[int]int{} // appends each key has been given
	nextKey, next, index := keys, 0, 0
	active := make([]int, keys) // the keys being appended to
	for i := range active {
		active[i] = i
	}
	type txn struct{ steps [][3]int } // f (0 read, 1 append), key, value
	inFlight := make([]*txn, procs)
	write := func(typ string, p int, t *txn, done bool) {
		fmt.Fprintf(&b, "{:type :%s, :f :txn, :value [", typ)
		for i, s := range t.steps {
			if i > 0 {
				b.WriteByte(' ')
			}
			switch {
			case s[0] == 1:
				fmt.Fprintf(&b, "[:append %d %d]", s[1], s[2])
			case !done:
				fmt.Fprintf(&b, "[:r %d nil]", s[1])
			default:
				fmt.Fprintf(&b, "[:r %d [", s[1])
				for j, v := range lists[s[1]][:s[2]] {
					if j > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(strconv.Itoa(v))
				}
				b.WriteString("]]")
			}
		}
		fmt.Fprintf(&b, "], :time %d, :process %d, :index %d}\n", 1_000_000+index*1337, p, index)
		index++
	}
	for i := 0; i < txns+procs; i++ {
		p := i % procs
		if t := inFlight[p]; t != nil { // complete it: its effects happen now
			for j, s := range t.steps {
				if s[0] == 1 {
					lists[s[1]] = append(lists[s[1]], s[2])
				} else {
					t.steps[j][2] = len(lists[s[1]])
				}
			}
			write("ok", p, t, true)
			inFlight[p] = nil
		}
		if i >= txns {
			continue
		}
		t := &txn{}
		for j := range 4 {
			slot := (i*3 + j*5) % keys
			k := active[slot]
			if j%2 == 0 {
				t.steps = append(t.steps, [3]int{0, k, 0})
				continue
			}
			next++
			t.steps = append(t.steps, [3]int{1, k, next})
			if appended[k]++; appended[k] == appendsPerKey {
				active[slot] = nextKey
				nextKey++
			}
		}
		inFlight[p] = t
		write("invoke", p, t, false)
	}
	return b.Bytes()
}

// TestListAppendHistoryFile writes listAppendHistory(100_000) to the file
// $CHAOS_LIST_APPEND_EDN names, to time chaos check on it:
//
//	CHAOS_LIST_APPEND_EDN=/tmp/la.edn go test -run ListAppendHistoryFile ./foreign/jepsen
//	chaos check /tmp/la.edn -model list-append
func TestListAppendHistoryFile(t *testing.T) {
	path := os.Getenv("CHAOS_LIST_APPEND_EDN")
	if path == "" {
		t.Skip("CHAOS_LIST_APPEND_EDN names no file to write")
	}
	if err := os.WriteFile(path, listAppendHistory(100_000), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The generated history reads, and is what the benchmark says it is.
func TestListAppendHistory(t *testing.T) {
	ops, err := Read(bytes.NewReader(listAppendHistory(1000)), "", ListAppend)
	if err != nil || len(ops) != 2000 {
		t.Fatalf("%d ops, %v", len(ops), err)
	}
}

// bigListAppend is the 100,000-transaction history issue 35 timed,
// generated once for the benchmarks.
var bigListAppend = sync.OnceValue(func() []byte { return listAppendHistory(100_000) })

// BenchmarkReadListAppend reads bigListAppend.
func BenchmarkReadListAppend(b *testing.B) {
	in := bigListAppend()
	b.SetBytes(int64(len(in)))
	defer perCPUSecond(b, len(in))()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(in), "", ListAppend); err != nil {
			b.Fatal(err)
		}
	}
}

// perCPUSecond reports, when the function it returns is called, the MB of
// input read per second of CPU time that the whole process spent, the
// garbage collector's included: on a loaded machine wall time says more
// about the other processes than about reading.
func perCPUSecond(b *testing.B, size int) func() {
	start := cpuTime(b)
	return func() {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpuTime(b)-start).Seconds(), "MB/cpu-s")
	}
}

func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkDecodeListAppend decodes the same history without converting
// it: the decoder's share of BenchmarkReadListAppend.
func BenchmarkDecodeListAppend(b *testing.B) {
	in := bigListAppend()
	b.SetBytes(int64(len(in)))
	defer perCPUSecond(b, len(in))()
	for b.Loop() {
		if err := NewDecoder(bytes.NewReader(in)).Elements(func(Value) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
