package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Text that encoding/json would quietly turn into U+FFFD is refused with
// file, line and column: two keys that differ only there would otherwise
// become one register.
func TestReadRefusesWhatJSONWouldReplace(t *testing.T) {
	entry := func(key string) string {
		return `{"time":1,"type":"invoke","process":0,"f":"write","value":{"key":"` + key + `","value":1}}` + "\n"
	}
	good := entry("k")
	for _, tc := range []struct{ name, content, want string }{
		{"bytes that are not UTF-8", good + entry("a\xff"), "FILE:2: column 68: bytes that are not UTF-8"},
		{"in the last line, without its newline", good + strings.TrimSuffix(entry("a\xfe"), "\n"), "FILE:2: column 68: bytes that are not UTF-8"},
		{"a lone high surrogate", good + entry(`a\ud800`), `FILE:2: column 68: \ud800 is half a UTF-16 surrogate pair`},
		{"a lone low surrogate", good + entry(`\uDC00`), `FILE:2: column 67: \uDC00 is half a UTF-16 surrogate pair`},
		{"a high surrogate before another escape", good + entry(`\ud83d\u0041`), `column 67: \ud83d is half`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Read(path)
			if want := strings.ReplaceAll(tc.want, "FILE", path); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want one containing %q", err, want)
			}
		})
	}
	// What is valid stays: a surrogate pair, an escaped backslash before u,
	// and U+FFFD itself.
	path := filepath.Join(t.TempDir(), "history.jsonl")
	content := good + entry(`\ud83d\ude00`) + entry(`\\ud800`) + entry("\ufffd") + entry(`\ufffd`)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if ops, _, err := Read(path); err != nil || len(ops) != 5 {
		t.Fatalf("%d entries, %v; expected 5 and no error", len(ops), err)
	}
}
