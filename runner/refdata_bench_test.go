package runner_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/chaos-testing/chaos/runner"
)

// BenchmarkEtcdLogsChaos is what chaos check FILE does on each of the 102
// etcd logs with a verdict: detect the format, parse, check with the
// cas-register checker, and draw each illegal key. Compare with
// BenchmarkEtcdLogsPorcupineDrawn; BenchmarkEtcdLogsChaosVerdict, the
// verdict alone, with BenchmarkEtcdLogsPorcupine.
func BenchmarkEtcdLogsChaos(b *testing.B) { benchmarkEtcdLogsChaos(b, b.TempDir()) }

func BenchmarkEtcdLogsChaosVerdict(b *testing.B) { benchmarkEtcdLogsChaos(b, "") }

func benchmarkEtcdLogsChaos(b *testing.B, out string) {
	benchmarkEtcdLogs(b, func(_ int, c refCase) {
		rep, err := runner.CheckFile(context.Background(), filepath.Join(refDir, c.file), runner.FileCheck{Out: out})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Verdict != wantVerdict(c.want) {
			b.Fatalf("%s: %s, expected %s", c.file, rep.Verdict, wantVerdict(c.want))
		}
	})
}

// BenchmarkEtcdLogsPorcupine is porcupine alone on the same files: its own
// test parser and etcd model (porcupine_test.go, MIT licence, Anish
// Athalye), checked with CheckEvents as its tests do.
func BenchmarkEtcdLogsPorcupine(b *testing.B) {
	benchmarkEtcdLogs(b, func(_ int, c refCase) {
		if ok := porcupine.CheckEvents(etcdModel, porcupineEvents(b, c)); ok != (c.want == "true") {
			b.Fatalf("%s: %t, expected %s", c.file, ok, c.want)
		}
	})
}

// BenchmarkEtcdLogsPorcupineDrawn is porcupine as its users see why a
// log is illegal: CheckEventsVerbose, and the visualization of each
// illegal one.
func BenchmarkEtcdLogsPorcupineDrawn(b *testing.B) {
	out := b.TempDir()
	benchmarkEtcdLogs(b, func(i int, c refCase) {
		res, info := porcupine.CheckEventsVerbose(etcdModel, porcupineEvents(b, c), 0)
		if (res == porcupine.Ok) != (c.want == "true") {
			b.Fatalf("%s: %s, expected %s", c.file, res, c.want)
		}
		if res == porcupine.Illegal {
			if err := porcupine.VisualizePath(etcdModel, info, filepath.Join(out, strconv.Itoa(i)+".html")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchmarkEtcdLogs checks each etcd log with a verdict with check, b.N
// times over, and reports the time a log.
func benchmarkEtcdLogs(b *testing.B, check func(i int, c refCase)) {
	cases := etcdVerdicts(b)
	b.ResetTimer()
	for range b.N {
		for i, c := range cases {
			check(i, c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cases)), "ns/log")
}

// porcupineEvents parses a log with porcupine's own test parser.
func porcupineEvents(b *testing.B, c refCase) []porcupine.Event {
	events, err := parseJepsenLog(filepath.Join(refDir, c.file))
	if err != nil {
		b.Fatal(err)
	}
	return events
}

func etcdVerdicts(b *testing.B) []refCase {
	var out []refCase
	for _, c := range refCases(b, "jepsen/") {
		if c.want != "" {
			out = append(out, c)
		}
	}
	return out
}

type etcdInput struct {
	op   uint8 // 0 => read, 1 => write, 2 => cas
	arg1 int   // used for write, or for CAS from argument
	arg2 int   // used for CAS to argument
}

type etcdOutput struct {
	ok      bool // used for CAS
	exists  bool // used for read
	value   int  // used for read
	unknown bool // used when operation times out
}

var etcdModel = porcupine.Model{
	Init: func() any { return -1000000 }, // -1000000 corresponds with nil
	Step: func(state any, input any, output any) (bool, any) {
		st := state.(int)
		inp := input.(etcdInput)
		out := output.(etcdOutput)
		if inp.op == 0 {
			ok := (!out.exists && st == -1000000) || (out.exists && st == out.value) || out.unknown
			return ok, state
		} else if inp.op == 1 {
			return true, inp.arg1
		}
		ok := (inp.arg1 == st && out.ok) || (inp.arg1 != st && !out.ok) || out.unknown
		result := st
		if inp.arg1 == st {
			result = inp.arg2
		}
		return ok, result
	},
}

var (
	invokeRead  = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:invoke\s+:read\s+nil$`)
	invokeWrite = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:invoke\s+:write\s+(\d+)$`)
	invokeCas   = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:invoke\s+:cas\s+\[(\d+)\s+(\d+)\]$`)
	returnRead  = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:ok\s+:read\s+(nil|\d+)$`)
	returnWrite = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:ok\s+:write\s+(\d+)$`)
	returnCas   = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(ok|fail)\s+:cas\s+\[(\d+)\s+(\d+)\]$`)
	timeoutRead = regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:fail\s+:read\s+:timed-out$`)
)

func parseJepsenLog(filename string) ([]porcupine.Event, error) {
	file, err := os.Open(filename)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var events []porcupine.Event
	id := 0
	procIDMap := map[int]int{}
	ret := func(proc int, out etcdOutput) {
		matchID := procIDMap[proc]
		delete(procIDMap, proc)
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: out, Id: matchID})
	}
	call := func(proc int, in etcdInput) {
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.CallEvent, Value: in, Id: id})
		procIDMap[proc] = id
		id++
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case invokeRead.MatchString(line):
			args := invokeRead.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			call(proc, etcdInput{op: 0})
		case invokeWrite.MatchString(line):
			args := invokeWrite.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			value, _ := strconv.Atoi(args[2])
			call(proc, etcdInput{op: 1, arg1: value})
		case invokeCas.MatchString(line):
			args := invokeCas.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			from, _ := strconv.Atoi(args[2])
			to, _ := strconv.Atoi(args[3])
			call(proc, etcdInput{op: 2, arg1: from, arg2: to})
		case returnRead.MatchString(line):
			args := returnRead.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			exists, value := false, 0
			if args[2] != "nil" {
				exists = true
				value, _ = strconv.Atoi(args[2])
			}
			ret(proc, etcdOutput{exists: exists, value: value})
		case returnWrite.MatchString(line):
			args := returnWrite.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			ret(proc, etcdOutput{})
		case returnCas.MatchString(line):
			args := returnCas.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			ret(proc, etcdOutput{ok: args[2] == "ok"})
		case timeoutRead.MatchString(line):
			args := timeoutRead.FindStringSubmatch(line)
			proc, _ := strconv.Atoi(args[1])
			ret(proc, etcdOutput{unknown: true})
		}
	}
	for proc, matchID := range procIDMap {
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: etcdOutput{unknown: true}, Id: matchID})
	}
	return events, sc.Err()
}
