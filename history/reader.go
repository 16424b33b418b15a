package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Truncated reports that a file's last line was cut off mid-entry, as when a
// run is killed while writing; the entries before it are intact.
type Truncated struct {
	File string
	Line int
}

func (t *Truncated) Error() string {
	return fmt.Sprintf("%s:%d: last line is cut off (the run was interrupted while writing it); it was skipped", t.File, t.Line)
}

// ReadJSONLines decodes a JSON-lines file into values of type T, calling
// check on each to validate it. A malformed line is an error naming file and
// line, except a last line without its newline: that is a cut-off write,
// reported as *Truncated next to the entries before it.
func ReadJSONLines[T any](path string, check func(*T) error) ([]T, *Truncated, error) {
	return readJSONLines(path, check, nil)
}

// readJSONLines is ReadJSONLines, telling progress (if not nil) how many
// bytes it has read as it goes.
func readJSONLines[T any](path string, check func(*T) error, progress func(read int64)) ([]T, *Truncated, error) {
	var out []T
	trunc, err := eachJSONLine(path, check, progress, func(v T) error {
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, trunc, nil
}

// eachJSONLine decodes a JSON-lines file as readJSONLines does, giving
// each value to each as it is read rather than keeping them: a file too
// large to hold in memory is read in constant memory. An error from each
// stops the reading and is returned as it is.
func eachJSONLine[T any](path string, check func(*T) error, progress func(read int64), each func(T) error) (*Truncated, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var src io.Reader = f
	if progress != nil {
		src = &counter{r: f, progress: progress}
	}
	r := bufio.NewReaderSize(src, 1<<20)
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(b)) == 0 {
				return nil, nil
			}
			var v T
			if json.Unmarshal(b, &v) != nil {
				return &Truncated{File: path, Line: line}, nil
			}
			// A complete entry that only lacks its newline.
			if err := validText(b); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			if err := check(&v); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			return nil, each(v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, fmt.Errorf("%s:%d: empty line; expected one JSON object per line", path, line)
		}
		if err := validText(b); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: expected a JSON object: %w", path, line, err)
		}
		if rest := bytes.TrimSpace(b[dec.InputOffset():]); len(rest) > 0 {
			return nil, fmt.Errorf("%s:%d: %q after the JSON object; expected one object per line", path, line, rest[:min(len(rest), 20)])
		}
		if err := check(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if err := each(v); err != nil {
			return nil, err
		}
	}
}

// validText refuses a line whose text encoding/json would quietly change:
// bytes that are not UTF-8, and \u escapes of half a UTF-16 surrogate
// pair, all become U+FFFD, which would merge distinct keys and values.
func validText(b []byte) error {
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("column %d: bytes that are not UTF-8 (%q); chaos refuses them rather than read them as U+FFFD", utf8.RuneCount(b[:i])+1, b[i:min(i+4, len(b))])
	}
	if !bytes.Contains(b, []byte(`\u`)) {
		return nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hexEscape(b, i)
		if !ok || !utf16.IsSurrogate(r) {
			i++ // the escaped byte: "\\u0041" escapes a backslash, not u
			continue
		}
		if low, ok := hexEscape(b, i+6); r < 0xDC00 && ok && utf16.DecodeRune(r, low) != utf8.RuneError {
			i += 11
			continue
		}
		return fmt.Errorf("column %d: %s is half a UTF-16 surrogate pair without its other half; chaos refuses it rather than read it as U+FFFD", utf8.RuneCount(b[:i])+1, b[i:i+6])
	}
	return nil
}

// hexEscape reads the \uXXXX escape at b[i:], if there is one.
func hexEscape(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
	return rune(n), err == nil
}

// counter tells how many bytes have been read through it.
type counter struct {
	r        io.Reader
	n        int64
	progress func(int64)
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.progress(c.n)
	return n, err
}

// Read loads a history file. Entries get Index = their 0-based line number.
func Read(path string) ([]Op, *Truncated, error) { return ReadProgress(path, nil) }

// ReadProgress is Read, telling progress (if not nil) how many bytes it
// has read as it goes: reading a long history takes seconds.
func ReadProgress(path string, progress func(read int64)) ([]Op, *Truncated, error) {
	var ops []Op
	trunc, err := Each(path, progress, func(op Op) error {
		ops = append(ops, op)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ops, trunc, nil
}

// Each reads a history file as ReadProgress does, giving each entry to
// each, with its Index, as it is read rather than keeping them: a history
// too long to hold in memory is read in constant memory. An error from
// each stops the reading and is returned as it is.
func Each(path string, progress func(read int64), each func(Op) error) (*Truncated, error) {
	i := 0
	return eachJSONLine(path, checkOp, progress, func(op Op) error {
		op.Index = i
		i++
		return each(op)
	})
}

func checkOp(o *Op) error {
	if !o.Type.Valid() {
		return fmt.Errorf("type %q: expected one of invoke, ok, fail, info", o.Type)
	}
	if o.F == "" {
		return errors.New(`missing "f": every entry names its operation`)
	}
	if o.Process < Observer {
		return fmt.Errorf("process %d: expected -1 (nemesis), -2 (observer) or a client number >= 0", o.Process)
	}
	return nil
}
