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
//
// A suite the host has no entry for is served by the mirrors of its own
// Debian release; MirrorVariable, when set, names the mirror instead.
func Sources(suite string) ([]string, error) {
	if m := mirrorFromEnv(suite); m != nil {
		return m, nil
	}
	return sourcesIn(aptDir, suite)
}

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
		lines = mirrorLines(retarget(all, suite), suite)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no Debian package source on this machine (read %d files in %s): set %s to a Debian mirror's URL, or give the plan a target.image to pull", len(files), dir, MirrorVariable)
	}
	return lines, nil
}

// MirrorVariable names the Debian mirror to build images from, for a
// machine whose own apt sources are not Debian's (Ubuntu, say): its URL,
// as in a sources.list line.
const MirrorVariable = "CHAOS_DEBIAN_MIRROR"

// mirrorFromEnv is the source entries for suite from MirrorVariable, or
// nil when it is not set.
func mirrorFromEnv(suite string) []string {
	u := strings.TrimSpace(os.Getenv(MirrorVariable))
	if u == "" {
		return nil
	}
	return []string{"deb " + u + " " + suite + " main"}
}

// debianSuites are the names of Debian releases, which tell a Debian
// source apart from a third party's.
var debianSuites = []string{"buster", "bullseye", "bookworm", "trixie", "forky", "sid",
	"oldoldstable", "oldstable", "stable", "testing", "unstable"}

// unsupported are the suites whose security support has ended: their
// -security index may name packages its pool no longer serves (measured:
// bullseye-security's redis 6.0.16-1+deb11u9 gave 404), so they are built
// from the suite and its -updates alone.
var unsupported = []string{"buster", "bullseye"}

// retarget is the host's Debian sources moved to suite: a mirror that
// serves the host's release serves the others too (measured: bullseye to
// sid), so a node image can be built from any of them without naming a
// mirror. The -updates and -security companions go along, except for sid,
// which has neither, and -security for an unsupported suite.
//
// The host's release is the first Debian suite its sources name; entries
// for other releases (a bullseye line left on a bookworm host) stay out.
func retarget(srcs []source, suite string) []source {
	host := ""
	for _, s := range srcs {
		for _, su := range s.suites {
			if host == "" && s.enabled && slices.Contains(debianSuites, su) {
				host = su
			}
		}
	}
	var out []source
	for _, s := range srcs {
		var suites []string
		for _, su := range s.suites {
			base, suffix, _ := strings.Cut(su, "-")
			if base != host || (suffix != "" && suffix != "updates" && suffix != "security") {
				continue
			}
			switch {
			case suffix == "":
				suites = append(suites, suite)
			case suite == "sid" || suite == "unstable":
			case suffix == "security" && slices.Contains(unsupported, suite):
			default:
				suites = append(suites, suite+"-"+suffix)
			}
		}
		if len(suites) > 0 {
			s.suites = slices.Compact(suites)
			out = append(out, s)
		}
	}
	return out
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
