package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A chaos executable that needs a dynamic loader is refused before a run
// starts, saying how to build one that is not; so is a file that is not
// an executable. (Every integration test's run passes the check with the
// static binary testenv builds.)
func TestCheckStatic(t *testing.T) {
	dynamic := "/bin/sh"
	if err := checkStatic(dynamic); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("checkStatic(%s) = %v, want a refusal that says how to build chaos", dynamic, err)
	}
	text := filepath.Join(t.TempDir(), "chaos")
	if err := os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(text); err == nil {
		t.Error("checkStatic(a script) = nil")
	}
}
