package history

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"time"
)

// Follow reads the history at path as other processes append to it, calling
// fn for each complete entry, until ctx ends. It is how the harness watches a
// run live (status line, choosing whom to pause) without being the only writer.
func Follow(ctx context.Context, path string, fn func(Op)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var partial []byte
	index := 0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := r.ReadBytes('\n')
		partial = append(partial, b...)
		if err == io.EOF {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			continue
		}
		if err != nil {
			return err
		}
		var op Op
		if json.Unmarshal(partial, &op) == nil {
			op.Index = index
			fn(op)
		}
		index++
		partial = partial[:0]
	}
}
