package plans

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exitOf is the exit code of `chaos run` that an expectation promises,
// or "" when the verdict varies with the seed.
var exitOf = map[string]string{"valid": "exit 0", "invalid": "exit 1", "varies": ""}

// measuredRate is how a plan whose verdict varies states what was seen:
// "in 7 of 10 seeds".
var measuredRate = regexp.MustCompile(`in \d+ of \d+ seeds`)

// TestExpectationsAgree: every shipped plan (but a comparison) says what it
// is expected to give in its expect field, and its header and its
// backend's page (docs/backends/) say the same: the exit code for plans expected
// valid or invalid, a measured rate over seeds for plans whose verdict
// varies. scripts/plan-rates measures them.
func TestExpectationsAgree(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "docs", "backends", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no backend pages: %v", err)
	}
	var docs []byte
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b...)
	}
	rows := map[string]string{}  // plan file -> the table row that names it
	soaks := map[string]string{} // soak plan file -> the line that names it
	for _, l := range strings.Split(string(docs), "\n") {
		for _, m := range regexp.MustCompile("`plans/([a-z0-9-]+\\.yaml)`").FindAllStringSubmatch(l, -1) {
			if strings.HasPrefix(l, "|") {
				rows[m[1]] = l
			} else if strings.Contains(m[1], "-soak") {
				soaks[m[1]] = l
			}
		}
	}
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if p.Compare != nil {
			continue
		}
		t.Run(f, func(t *testing.T) {
			want, ok := exitOf[p.Expect]
			if !ok {
				t.Fatalf("expect %q: every shipped plan says valid, invalid or varies", p.Expect)
			}
			b, _ := os.ReadFile(f)
			header := strings.Join(headerLines(string(b)), " ")
			expected := header[max(0, strings.Index(header, "Expected:")):]
			switch {
			case !strings.Contains(header, "Expected:"):
				t.Errorf("the header has no \"Expected:\" sentence")
			case want != "" && !strings.Contains(expected, want):
				t.Errorf("expect %s, but the header's %q does not say %s", p.Expect, cut(expected), want)
			case want == "" && !measuredRate.MatchString(expected):
				t.Errorf("expect varies, but the header's %q gives no rate (\"in N of M seeds\")", cut(expected))
			}
			row, listed := rows[f]
			if strings.Contains(f, "-soak") {
				row, listed = soaks[f] // soaks are listed with scripts/soak, not in the table
			}
			switch {
			case !listed:
				t.Errorf("docs/backends lists plans/%s nowhere (a plan table, or the soaks)", f)
			case want != "" && !strings.Contains(row, want):
				t.Errorf("expect %s, but its row in docs/backends does not say %s: %s", p.Expect, want, row)
			case want == "" && !measuredRate.MatchString(row):
				t.Errorf("expect varies, but its row in docs/backends gives no rate: %s", row)
			}
		})
	}
}

// headerLines are the comment lines a plan file starts with, without "# ".
func headerLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		out = append(out, strings.TrimSpace(strings.TrimPrefix(l, "#")))
	}
	return out
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
