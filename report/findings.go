package report

// The findings as the report lists them: numbered once (finding-1,
// finding-2, ... in the order shown, grouped by kind within a checker), so
// that the timeline can mark the operations of each and the listing can
// point at them, both ways.

import (
	"fmt"
	"html"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// checkerView is one checker's result as the report lists it.
type checkerView struct {
	analysis.Result
	Groups []kindGroup
	Stats  template.HTML // the checker's Stats as tables
}

// kindGroup is the findings of one kind: Total counts them all (the
// checker's Kinds), Findings those listed.
type kindGroup struct {
	Kind     string
	Total    int
	Findings []findingView
}

type findingView struct {
	N             int // finding-N
	Kind          string
	Explanation   template.HTML // #N references linked to their operations
	Ops           []opLine
	Cycle         []analysis.CycleStep
	ResourceLines []int
	Show          string // where its operations are drawn: #finding-N, or a further timeline page
}

type opLine struct {
	Href  string // "" when the operation is drawn on no page
	Index int
	Rest  string // the op's line after "#N"
}

// marks maps a history index (an invocation's or a completion's) to the
// findings whose operations include it, by number.
type marks map[int][]findingRef

type findingRef struct {
	N    int
	Kind string
}

// opPlace says where the timeline draws the operation holding a history
// index: which page (1 is report.html; 0 none drawn).
type opPlace func(index int) int

// listFindings numbers the findings of rep in the order they are shown
// (each checker's grouped by kind, kinds in the order of their first
// finding) and says which operations belong to which.
func listFindings(rep analysis.Report, place opPlace) ([]checkerView, marks) {
	m := marks{}
	var out []checkerView
	n := 0
	for _, r := range rep.Results {
		cv := checkerView{Result: r, Stats: statsTables(r.Stats)}
		for _, f := range r.Findings {
			i := slices.IndexFunc(cv.Groups, func(g kindGroup) bool { return g.Kind == f.Kind })
			if i < 0 {
				i = len(cv.Groups)
				cv.Groups = append(cv.Groups, kindGroup{Kind: f.Kind, Total: r.Kinds[f.Kind]})
			}
			cv.Groups[i].Findings = append(cv.Groups[i].Findings, findingView{Kind: f.Kind, Cycle: f.Cycle, ResourceLines: f.ResourceLines})
		}
		// Number them in the order shown, each kind's in the checker's order.
		next := map[string]int{}
		for gi := range cv.Groups {
			g := &cv.Groups[gi]
			g.Total = max(g.Total, len(g.Findings))
			for fi := range g.Findings {
				f := nthOfKind(r.Findings, g.Kind, next[g.Kind])
				next[g.Kind]++
				n++
				fv := &g.Findings[fi]
				fv.N = n
				fv.Explanation = linkRefs(f.Explanation, place)
				first := 0
				for _, op := range f.Ops {
					m[op.Index] = appendRef(m[op.Index], findingRef{n, f.Kind})
					href := opHref(op.Index, place)
					fv.Ops = append(fv.Ops, opLine{Href: href, Index: op.Index, Rest: strings.TrimPrefix(op.String(), "#"+strconv.Itoa(op.Index))})
					if p := place(op.Index); p > 0 && (first == 0 || p < first) {
						first = p
					}
				}
				fv.Show = findingHref(n, first)
			}
		}
		out = append(out, cv)
	}
	return out, m
}

// nthOfKind is the i-th finding of kind in fs.
func nthOfKind(fs []analysis.Finding, kind string, i int) analysis.Finding {
	for _, f := range fs {
		if f.Kind == kind {
			if i == 0 {
				return f
			}
			i--
		}
	}
	return analysis.Finding{}
}

func appendRef(refs []findingRef, r findingRef) []findingRef {
	if len(refs) > 0 && refs[len(refs)-1].N == r.N {
		return refs // an op listed twice in one finding
	}
	return append(refs, r)
}

// opHref is the link to the operation holding a history index: on this
// page, or on the further page of the timeline that draws it.
func opHref(index int, place opPlace) string {
	switch p := place(index); p {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("#op-%d", index)
	default:
		return fmt.Sprintf("timeline/page-%d.html#op-%d", p, index)
	}
}

func findingHref(n, page int) string {
	if page > 1 {
		return fmt.Sprintf("timeline/page-%d.html#finding-%d", page, n)
	}
	return fmt.Sprintf("#finding-%d", n)
}

// ref is a history index in a checker's words: "(#84)".
var ref = regexp.MustCompile(`#(\d+)\b`)

// linkRefs escapes s and makes each #N in it a link to operation N. The
// references are found before escaping, which writes ' as &#39;.
func linkRefs(s string, place opPlace) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range ref.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(html.EscapeString(s[last:m[0]]))
		n, _ := strconv.Atoi(s[m[2]:m[3]])
		if href := opHref(n, place); href != "" {
			fmt.Fprintf(&b, `<a href="%s">#%d</a>`, href, n)
		} else {
			fmt.Fprintf(&b, `#%d`, n)
		}
		last = m[1]
	}
	b.WriteString(html.EscapeString(s[last:]))
	return template.HTML(b.String())
}

// placeOps says, for the history indices the findings name, which drawn
// page holds their operation; an index on no drawn page is 0.
func placeOps(pages []page, drawn map[int]bool, rep analysis.Report) opPlace {
	want := map[int]bool{}
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			for _, op := range f.Ops {
				want[op.Index] = true
			}
			for _, m := range ref.FindAllStringSubmatch(f.Explanation, -1) {
				n, _ := strconv.Atoi(m[1])
				want[n] = true
			}
		}
	}
	at := map[int]int{}
	if len(want) > 0 {
		for i, p := range pages {
			if !drawn[i] {
				continue
			}
			for _, o := range p.ops {
				for _, e := range []*history.Op{o.Inv, o.Done} {
					if e != nil && want[e.Index] {
						at[e.Index] = i + 1
					}
				}
			}
		}
	}
	return func(index int) int { return at[index] }
}

// withFindingOps adds to a sample of the history (a run too long to draw
// whole) the entries every finding names that the sample left out, so
// that every finding is drawn and its #N links lead somewhere. The sample
// stays in history order.
func withFindingOps(sample []history.Op, rep analysis.Report) []history.Op {
	have := map[int]bool{}
	for _, op := range sample {
		have[op.Index] = true
	}
	out := sample
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			for _, op := range f.Ops {
				if !have[op.Index] {
					have[op.Index] = true
					out = append(out, op)
				}
			}
		}
	}
	if len(out) > len(sample) {
		out = slices.Clone(out)
		slices.SortStableFunc(out, func(a, b history.Op) int { return a.Index - b.Index })
	}
	return out
}
