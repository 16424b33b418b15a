package report

// A checker's Stats as tables: the map may hold anything a checker put
// there (numbers, maps of maps, slices, typed Go values before a round
// trip through analysis.json), and fmt would print Go's map syntax
// (map[fail:18 info:0 ok:108]), which reads as noise.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// statsTables renders stats as a key/value table, a nested map as a
// sub-table, and a map of like maps (f -> outcome -> count) as one table
// with a row per key and a column per inner key.
func statsTables(stats map[string]any) template.HTML {
	if len(stats) == 0 {
		return ""
	}
	// One shape for all: what analysis.json would hold.
	var v any
	if b, err := json.Marshal(stats); err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(&v) != nil {
			v = nil
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return template.HTML("<p>statistics unreadable</p>")
	}
	var b strings.Builder
	statsTable(&b, m)
	return template.HTML(b.String())
}

func statsTable(b *strings.Builder, m map[string]any) {
	keys := slices.Sorted(maps.Keys(m))
	if cols := matrixColumns(m); cols != nil {
		b.WriteString(`<table class="stats"><tr><th></th>`)
		for _, c := range cols {
			fmt.Fprintf(b, `<th>%s</th>`, html.EscapeString(c))
		}
		b.WriteString(`</tr>`)
		for _, k := range keys {
			row := m[k].(map[string]any)
			fmt.Fprintf(b, `<tr><th>%s</th>`, html.EscapeString(k))
			for _, c := range cols {
				b.WriteString(`<td class="num">`)
				if x, ok := row[c]; ok {
					statValue(b, x)
				}
				b.WriteString(`</td>`)
			}
			b.WriteString(`</tr>`)
		}
		b.WriteString(`</table>`)
		return
	}
	b.WriteString(`<table class="stats">`)
	for _, k := range keys {
		fmt.Fprintf(b, `<tr><th>%s</th><td>`, html.EscapeString(k))
		statValue(b, m[k])
		b.WriteString(`</td></tr>`)
	}
	b.WriteString(`</table>`)
}

// matrixColumns is the inner keys of m when m has two or more values and
// every one is a map of plain values (a table of counts by f and
// outcome); nil otherwise.
func matrixColumns(m map[string]any) []string {
	if len(m) < 2 {
		return nil
	}
	cols := map[string]bool{}
	for _, v := range m {
		row, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for c, x := range row {
			switch x.(type) {
			case map[string]any, []any:
				return nil
			}
			cols[c] = true
		}
	}
	if len(cols) > 8 {
		return nil // too wide: a sub-table each reads better
	}
	return slices.Sorted(maps.Keys(cols))
}

func statValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		statsTable(b, v)
	case []any:
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			statValue(b, x)
		}
	case json.Number:
		b.WriteString(number(v))
	case nil:
		b.WriteString("–")
	default:
		b.WriteString(html.EscapeString(fmt.Sprint(v)))
	}
}

// number shows an integer whole and a fraction to four significant
// figures: 3.8383357350000002 is 3.838.
func number(n json.Number) string {
	if i, err := n.Int64(); err == nil {
		return strconv.FormatInt(i, 10)
	}
	f, err := n.Float64()
	if err != nil {
		return html.EscapeString(n.String())
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}
