// Command simrun writes a simulated run folder (run.json, history.jsonl,
// and resource.jsonl for a lock run) for measuring the analysis of long
// histories: scripts/analysis-memory checks it with chaos check.
//
//	go run ./internal/simhistory/simrun -kind register -entries 10000000 -out DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/simhistory"
	"github.com/chaos-testing/chaos/ops/lockop"
	"github.com/chaos-testing/chaos/runfolder"
)

func main() {
	kind := flag.String("kind", "register", "register (etcd-register, cas-register) or lock (etcd-lock, unfenced resource)")
	entries := flag.Int("entries", 1_000_000, "history entries to write")
	stale := flag.Int("stale-every", 0, "register: answer every Nth read with the value before the last write (0: never)")
	out := flag.String("out", "", "run folder to write (must not exist)")
	flag.Parse()
	if err := write(*kind, *entries, *stale, *out); err != nil {
		fmt.Fprintln(os.Stderr, "simrun:", err)
		os.Exit(1)
	}
}

func write(kind string, entries, stale int, out string) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	f := runfolder.Folder(out)
	info := runfolder.Info{Plan: "simulated-" + kind, Started: time.Now(), Target: "simulated", End: &runfolder.End{At: time.Now()}}
	lines, err := history.OpenLines(f.Path(runfolder.HistoryFile))
	if err != nil {
		return err
	}
	defer lines.Close()
	var werr error
	emit := func(op history.Op) {
		if werr == nil {
			werr = lines.Write(op)
		}
	}
	switch kind {
	case "register":
		info.Workload = "etcd-register"
		// 1,000 operations a key, keys rotating as the workload's do.
		ops := entries / 2
		simhistory.Register(ops, max(1, ops/1000), 10, stale, emit)
	case "lock":
		info.Workload, info.Resource = "etcd-lock", "unfenced"
		res, err := history.OpenLines(filepath.Join(out, runfolder.ResourceFile))
		if err != nil {
			return err
		}
		defer res.Close()
		pauses := simhistory.Lock(entries, emit, func(e lockop.ResourceEntry) {
			if werr == nil {
				werr = res.Write(e)
			}
		})
		fmt.Printf("%d pauses: expect %d mutual-exclusion violations and %d stale writes\n", pauses, pauses, pauses)
	default:
		return fmt.Errorf("-kind %q: expected register or lock", kind)
	}
	if werr != nil {
		return werr
	}
	return f.WriteInfo(info)
}
