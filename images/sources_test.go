package images

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const deb822Sample = `Types: deb deb-src
# a comment inside a stanza does not end it
URIs: http://mirror.example.invalid/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.example.invalid/debian-security
Suites: bookworm-security
Components: main

# Third-party repository: suite does not match, must be dropped.
Types: deb
URIs: https://node.example.invalid/node_20.x
Suites: nodistro
Components: main
Signed-By: /usr/share/keyrings/nodesource.gpg

Types: deb
URIs: http://disabled.example.invalid/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb-src
URIs: http://src.example.invalid/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://inline.example.invalid/debian
Suites: bookworm-backports trixie bookworm
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 xsFNBF...
 -----END PGP PUBLIC KEY BLOCK-----
`

const oneLineSample = `# comment line
deb http://mirror.example.invalid/debian bookworm main non-free-firmware
deb [arch=amd64 signed-by=/etc/apt/keyrings/x.gpg] http://opt.example.invalid/debian bookworm-updates main # trailing
deb [ signed-by=/k.gpg ] http://spaced.example.invalid/debian bookworm-security main
deb-src http://mirror.example.invalid/debian bookworm main
deb https://cloud.example.invalid/apt cloud-sdk-bookworm main
deb http://mirror.example.invalid/debian bullseye main

`

func TestParseDeb822(t *testing.T) {
	srcs, err := parseDeb822(strings.NewReader(deb822Sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 6 {
		t.Fatalf("got %d stanzas, want 6: %+v", len(srcs), srcs)
	}
	got := mirrorLines(srcs, "bookworm")
	want := []string{
		"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.invalid/debian bookworm main contrib",
		"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.invalid/debian bookworm-updates main contrib",
		"deb http://security.example.invalid/debian-security bookworm-security main",
		// Inline keys cannot go in a one-line entry, so signed-by is dropped.
		"deb http://inline.example.invalid/debian bookworm main",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mirrorLines:\ngot  %q\nwant %q", got, want)
	}
}

func TestParseOneLine(t *testing.T) {
	srcs, err := parseOneLine(strings.NewReader(oneLineSample))
	if err != nil {
		t.Fatal(err)
	}
	got := mirrorLines(srcs, "bookworm")
	want := []string{
		"deb http://mirror.example.invalid/debian bookworm main non-free-firmware",
		"deb [signed-by=/etc/apt/keyrings/x.gpg] http://opt.example.invalid/debian bookworm-updates main",
		"deb [signed-by=/k.gpg] http://spaced.example.invalid/debian bookworm-security main",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mirrorLines:\ngot  %q\nwant %q", got, want)
	}
	if got := mirrorLines(srcs, "bullseye"); !slices.Equal(got, []string{"deb http://mirror.example.invalid/debian bullseye main"}) {
		t.Errorf("bullseye: got %q", got)
	}
}

func TestExactSuiteMatch(t *testing.T) {
	srcs, err := parseDeb822(strings.NewReader(deb822Sample))
	if err != nil {
		t.Fatal(err)
	}
	// trixie shares an entry with bookworm-backports; only exact names count.
	if got := mirrorLines(srcs, "trixie"); !slices.Equal(got, []string{"deb http://inline.example.invalid/debian trixie main"}) {
		t.Errorf("trixie: got %q", got)
	}
}

func TestSourcesIn(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sources.list", "# only comments here\n")
	write("sources.list.d/debian.sources", deb822Sample)
	write("sources.list.d/extra.list", oneLineSample)
	// Files apt ignores must be ignored here too.
	write("sources.list.d/old.list.disabled", "deb http://ignored.example.invalid/debian bookworm main\n")

	got, err := sourcesIn(dir, "bookworm")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Errorf("got %d lines, want 7: %q", len(got), got)
	}
	for _, l := range got {
		if strings.Contains(l, "ignored.example.invalid") || strings.Contains(l, "node.example") || strings.Contains(l, "cloud.example") {
			t.Errorf("unwanted source %q", l)
		}
	}
	if got, err := sourcesIn(dir, "sid"); err != nil || len(got) == 0 {
		t.Errorf("sid, from the bookworm entries: %q, %v", got, err)
	}
	if _, err := sourcesIn(t.TempDir(), "bookworm"); err == nil {
		t.Error("empty apt dir: want error")
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := parseOneLine(strings.NewReader("deb http://x.example.invalid/\n")); err == nil {
		t.Error("one-line entry without suite: want error")
	}
	if _, err := parseDeb822(strings.NewReader(" continuation first\n")); err == nil {
		t.Error("deb822 continuation without field: want error")
	}
	if _, err := parseDeb822(strings.NewReader("no colon here\n")); err == nil {
		t.Error("deb822 line without colon: want error")
	}
}

func TestHostSources(t *testing.T) {
	lines, err := Sources("bookworm")
	if err != nil {
		t.Skipf("host has no bookworm apt sources: %v", err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "deb ") {
			t.Errorf("bad line %q", l)
		}
	}
	// The other releases come from the same mirrors.
	other, err := Sources("trixie")
	if err != nil || !strings.Contains(strings.Join(other, "\n"), " trixie ") {
		t.Errorf("trixie: %q, %v", other, err)
	}
}

func TestTag(t *testing.T) {
	a := Recipe{Suite: "bookworm", Packages: []string{"b", "a"}}
	b := Recipe{Suite: "bookworm", Packages: []string{"a", "b", "a"}}
	c := Recipe{Suite: "bookworm", Packages: []string{"a", "b", "c"}}
	if a.Tag() != b.Tag() {
		t.Errorf("order/duplicates changed the tag: %s vs %s", a.Tag(), b.Tag())
	}
	if a.Tag() == c.Tag() {
		t.Errorf("different packages gave the same tag %s", a.Tag())
	}
	if tag := Node.Tag(); !strings.HasPrefix(tag, "chaos/node:") || len(tag) != len("chaos/node:")+12 {
		t.Errorf("bad tag %q", tag)
	}
}

// TestOtherSuites: a suite the host has no entry for is built from the
// mirrors of the host's Debian release, third parties left out; sid has no
// -updates or -security.
func TestOtherSuites(t *testing.T) {
	srcs, err := parseOneLine(strings.NewReader(oneLineSample))
	if err != nil {
		t.Fatal(err)
	}
	got := mirrorLines(retarget(srcs, "trixie"), "trixie")
	want := []string{
		"deb http://mirror.example.invalid/debian trixie main non-free-firmware",
		"deb [signed-by=/etc/apt/keyrings/x.gpg] http://opt.example.invalid/debian trixie-updates main",
		"deb [signed-by=/k.gpg] http://spaced.example.invalid/debian trixie-security main",
	}
	if !slices.Equal(got, want) {
		t.Errorf("trixie:\ngot  %q\nwant %q", got, want)
	}
	got = mirrorLines(retarget(srcs, "bullseye"), "bullseye")
	if len(got) != 2 || strings.Contains(strings.Join(got, "\n"), "security") {
		t.Errorf("bullseye, whose security support has ended: got %q", got)
	}
	got = mirrorLines(retarget(srcs, "sid"), "sid")
	if !slices.Equal(got, []string{"deb http://mirror.example.invalid/debian sid main non-free-firmware"}) {
		t.Errorf("sid: got %q", got)
	}
}

// TestNoDebianSource: a machine whose apt sources are not Debian's (an
// Ubuntu runner) is told in one line what to set; the variable, once set,
// is the only source.
func TestNoDebianSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sources.list"), []byte("deb http://archive.example.invalid/ubuntu noble main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sourcesIn(dir, "bookworm")
	if err == nil || !strings.Contains(err.Error(), MirrorVariable) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v; want one line naming %s", err, MirrorVariable)
	}
	t.Setenv(MirrorVariable, "http://mirror.example.invalid/debian")
	got, err := Sources("bullseye")
	if err != nil || !slices.Equal(got, []string{"deb http://mirror.example.invalid/debian bullseye main"}) {
		t.Errorf("with %s: %q, %v", MirrorVariable, got, err)
	}
}
