package images

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// aptDir is where the host's apt configuration lives. Mirrors are taken from
// there rather than hard-coded so the build uses whatever mirror (or caching
// proxy) the machine is already set up with, and works offline from a local one.
const aptDir = "/etc/apt"

// source is one apt source entry, in either on-disk format.
type source struct {
	types, uris, suites, components []string
	signedBy                        string // a keyring path, or "" when absent or inline
	enabled                         bool
}

// Sources returns the host's apt sources for suite as one-line "deb" entries,
// one per URI and suite, suitable as mmdebstrap mirror arguments. Only entries
// for suite, suite-updates and suite-security are kept, so third-party
// repositories configured on the host (cloud SDKs, node, ...) never leak into
// the image.
func Sources(suite string) ([]string, error) { return sourcesIn(aptDir, suite) }

// sourcesIn is Sources reading the apt configuration under dir.
func sourcesIn(dir, suite string) ([]string, error) {
	var files []string
	if _, err := os.Stat(filepath.Join(dir, "sources.list")); err == nil {
		files = append(files, filepath.Join(dir, "sources.list"))
	}
	// Other names (*.disabled, *.save, ...) are ignored, as apt does.
	for _, pat := range []string{"*.list", "*.sources"} {
		m, _ := filepath.Glob(filepath.Join(dir, "sources.list.d", pat))
		files = append(files, m...)
	}
	var all []source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading apt sources: %w", err)
		}
		parse := parseOneLine
		if strings.HasSuffix(f, ".sources") {
			parse = parseDeb822
		}
		s, err := parse(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", f, err)
		}
		all = append(all, s...)
	}
	lines := mirrorLines(all, suite)
	if len(lines) == 0 {
		return nil, fmt.Errorf("no deb source for suite %q in %s (read %d files)", suite, dir, len(files))
	}
	return lines, nil
}

// mirrorLines filters entries to deb sources of suite (and its -updates and
// -security companions) and renders them one per URI and suite, since the
// one-line format allows a single suite per line.
func mirrorLines(srcs []source, suite string) []string {
	want := map[string]bool{suite: true, suite + "-updates": true, suite + "-security": true}
	seen := map[string]bool{}
	var out []string
	for _, s := range srcs {
		if !s.enabled || !slices.Contains(s.types, "deb") || len(s.components) == 0 {
			continue
		}
		opt := ""
		if s.signedBy != "" {
			opt = "[signed-by=" + s.signedBy + "] "
		}
		for _, u := range s.uris {
			for _, su := range s.suites {
				if !want[su] {
					continue
				}
				l := "deb " + opt + u + " " + su + " " + strings.Join(s.components, " ")
				if !seen[l] {
					seen[l] = true
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// parseOneLine parses the classic sources.list format:
//
//	deb [opt=val ...] uri suite component...
func parseOneLine(r io.Reader) ([]source, error) {
	var out []source
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		s := source{types: f[:1], enabled: true}
		f = f[1:]
		if len(f) > 0 && strings.HasPrefix(f[0], "[") {
			// Options may be written "[a=b c=d]" or "[ a=b ]"; gather up to "]".
			var opts []string
			for len(f) > 0 {
				o := f[0]
				f = f[1:]
				end := strings.HasSuffix(o, "]")
				opts = append(opts, strings.Trim(o, "[]"))
				if end {
					break
				}
			}
			for _, o := range opts {
				if k, v, ok := strings.Cut(o, "="); ok && strings.EqualFold(k, "signed-by") {
					s.signedBy = keyringPath(v)
				}
			}
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: want \"type uri suite [component...]\", got %q", n, sc.Text())
		}
		s.uris, s.suites, s.components = f[:1], f[1:2], f[2:]
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseDeb822 parses the deb822 ".sources" format: stanzas of "Key: value"
// fields separated by blank lines, with indented continuation lines.
func parseDeb822(r io.Reader) ([]source, error) {
	var out []source
	fields := map[string]string{}
	last := ""
	flush := func() {
		if len(fields) > 0 {
			out = append(out, source{
				types:      strings.Fields(fields["types"]),
				uris:       strings.Fields(fields["uris"]),
				suites:     strings.Fields(fields["suites"]),
				components: strings.Fields(fields["components"]),
				signedBy:   keyringPath(fields["signed-by"]),
				enabled:    !strings.EqualFold(strings.TrimSpace(fields["enabled"]), "no"),
			})
		}
		fields, last = map[string]string{}, ""
	}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			// Comments do not end a stanza.
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("line %d: continuation line outside a field", n)
			}
			fields[last] += "\n" + strings.TrimSpace(line)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("line %d: want \"Field: value\", got %q", n, line)
			}
			last = strings.ToLower(strings.TrimSpace(k))
			fields[last] = strings.TrimSpace(v)
		}
	}
	flush()
	return out, sc.Err()
}

// keyringPath keeps a Signed-By value only if it is a single absolute path:
// an inline armored key cannot be expressed in a one-line mirror argument, and
// mmdebstrap finds the right keyring itself when none is given.
func keyringPath(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \t\n,") {
		return v
	}
	return ""
}
