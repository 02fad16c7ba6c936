package dispatch

import (
	"html"
	"sort"
	"strings"
	"unicode"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/sql"
)

// function is a function for completion and inspection.
type function struct{ name, signature, doc string }

// functions lists the engine's function registry (built-ins and registered
// UDFs) plus the aggregates and CAST, which the binder handles itself. It
// is read per request, so UDFs registered after start show up.
func functions() []function {
	out := []function{
		{"count", "count(* | x) -> BIGINT", "number of rows (of non-NULL x)"},
		{"sum", "sum(x) -> numeric", "sum of x"},
		{"avg", "avg(x) -> numeric", "mean of x"},
		{"min", "min(x) -> type of x", "smallest x"},
		{"max", "max(x) -> type of x", "largest x"},
		{"stddev_samp", "stddev_samp(x) -> DOUBLE", "sample standard deviation of x (alias stddev)"},
		{"stddev", "stddev(x) -> DOUBLE", "sample standard deviation of x"},
		{"stddev_pop", "stddev_pop(x) -> DOUBLE", "population standard deviation of x"},
		{"var_samp", "var_samp(x) -> DOUBLE", "sample variance of x (alias variance)"},
		{"variance", "variance(x) -> DOUBLE", "sample variance of x"},
		{"var_pop", "var_pop(x) -> DOUBLE", "population variance of x"},
		{"bool_and", "bool_and(b) -> BOOLEAN", "true when every non-NULL b is true (alias every)"},
		{"every", "every(b) -> BOOLEAN", "true when every non-NULL b is true"},
		{"bool_or", "bool_or(b) -> BOOLEAN", "true when some b is true"},
		{"CAST", "CAST(x AS type) -> type", "x converted to type"},
	}
	for _, f := range expr.Functions() {
		out = append(out, function{f.Name, strings.Join(f.Signatures, "; "), f.Description})
		for _, a := range f.Aliases {
			out = append(out, function{a, strings.Join(f.Signatures, "; "), f.Description})
		}
	}
	return out
}

// tableContext are the keywords after which only a table name fits.
var tableContext = map[string]bool{"FROM": true, "JOIN": true, "INTO": true, "TABLE": true, "DESCRIBE": true, "DESC": true, "VIEW": true}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// clampCursor turns a cursor_pos (in code points, as the protocol counts)
// into a valid index of code.
func clampCursor(code []rune, pos *int) int {
	if pos == nil || *pos > len(code) {
		return len(code)
	}
	if *pos < 0 {
		return 0
	}
	return *pos
}

type completion struct {
	matches    []string
	start, end int // code points
}

// completeCode completes the word before cursor: table names after FROM and
// the like, else keywords, functions, tables and columns (of the tables the
// code names, or of every table when it names none). "t.c" completes the
// columns of table t.
func completeCode(code string, cursor *int, tables []engine.TableInfo) completion {
	rs := []rune(code)
	pos := clampCursor(rs, cursor)
	start := pos
	for start > 0 && (isWordRune(rs[start-1]) || rs[start-1] == '.') {
		start--
	}
	word := string(rs[start:pos])
	c := completion{start: start, end: pos, matches: []string{}}
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			c.matches = append(c.matches, s)
		}
	}
	if tbl, prefix, ok := strings.Cut(word, "."); ok {
		for _, t := range tables {
			if strings.EqualFold(t.Name, tbl) && t.Schema != nil {
				for _, f := range t.Schema.Fields() {
					if hasPrefixFold(f.Name, prefix) {
						add(tbl + "." + f.Name)
					}
				}
			}
		}
		return c
	}
	prev := strings.ToUpper(previousWord(rs[:start]))
	for _, t := range tables {
		if hasPrefixFold(t.Name, word) {
			add(t.Name)
		}
	}
	if tableContext[prev] {
		sort.Strings(c.matches)
		return c
	}
	lower := word != "" && word == strings.ToLower(word)
	for _, kw := range sql.Keywords() {
		if hasPrefixFold(kw, word) {
			if lower {
				kw = strings.ToLower(kw)
			}
			add(kw)
		}
	}
	for _, f := range functions() {
		if hasPrefixFold(f.name, word) {
			add(f.name)
		}
	}
	for _, t := range columnsInScope(code, tables) {
		for _, f := range t.Schema.Fields() {
			if hasPrefixFold(f.Name, word) {
				add(f.Name)
			}
		}
	}
	sort.Strings(c.matches)
	return c
}

// columnsInScope are the tables whose columns fit: those the code names,
// or all of them when it names none.
func columnsInScope(code string, tables []engine.TableInfo) []engine.TableInfo {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(code), func(r rune) bool { return !isWordRune(r) }) {
		words[w] = true
	}
	var named, all []engine.TableInfo
	for _, t := range tables {
		if t.Schema == nil {
			continue
		}
		all = append(all, t)
		if words[strings.ToLower(t.Name)] {
			named = append(named, t)
		}
	}
	if len(named) > 0 {
		return named
	}
	return all
}

func previousWord(rs []rune) string {
	end := len(rs)
	for end > 0 && !isWordRune(rs[end-1]) {
		end--
	}
	start := end
	for start > 0 && isWordRune(rs[start-1]) {
		start--
	}
	return string(rs[start:end])
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

type codeRequest struct {
	Code      string `json:"code"`
	CursorPos *int   `json:"cursor_pos"`
}

func (k *Kernel) complete(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	c := completeCode(req.Code, req.CursorPos, k.eng.Tables())
	k.reply(ch, m, map[string]any{"status": "ok", "matches": c.matches,
		"cursor_start": c.start, "cursor_end": c.end, "metadata": map[string]any{}})
}

// wordAt is the word under (or just before) the cursor.
func wordAt(code string, cursor *int) string {
	rs := []rune(code)
	pos := clampCursor(rs, cursor)
	start, end := pos, pos
	for start > 0 && isWordRune(rs[start-1]) {
		start--
	}
	for end < len(rs) && isWordRune(rs[end]) {
		end++
	}
	return string(rs[start:end])
}

// inspectCode describes the table or function under the cursor.
func inspectCode(code string, cursor *int, tables []engine.TableInfo) (map[string]any, bool) {
	word := wordAt(code, cursor)
	if word == "" {
		return nil, false
	}
	for _, t := range tables {
		if !strings.EqualFold(t.Name, word) {
			continue
		}
		kind := t.Kind
		if t.Connector != "" {
			kind += ", connector " + t.Connector
		}
		if t.Bounded {
			kind += ", bounded"
		} else {
			kind += ", unbounded"
		}
		var text, rows strings.Builder
		text.WriteString(t.Name + " (" + kind + ")\n")
		if t.Schema != nil {
			for _, f := range t.Schema.Fields() {
				ts := sql.TypeString(f.Type)
				text.WriteString("  " + f.Name + " " + ts + "\n")
				rows.WriteString("<tr><td>" + html.EscapeString(f.Name) + "</td><td>" + html.EscapeString(ts) + "</td></tr>")
			}
		}
		return map[string]any{
			"text/plain": text.String(),
			"text/html": "<b>" + html.EscapeString(t.Name) + "</b> <small>(" + html.EscapeString(kind) + ")</small>" +
				"<table><tr><th>column</th><th>type</th></tr>" + rows.String() + "</table>",
		}, true
	}
	for _, f := range functions() {
		if strings.EqualFold(f.name, word) {
			return map[string]any{"text/plain": f.signature + "\n  " + f.doc + "\n"}, true
		}
	}
	return nil, false
}

func (k *Kernel) inspect(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	data, found := inspectCode(req.Code, req.CursorPos, k.eng.Tables())
	if data == nil {
		data = map[string]any{}
	}
	k.reply(ch, m, map[string]any{"status": "ok", "found": found, "data": data, "metadata": map[string]any{}})
}

// isComplete: a cell runs when its last statement ends with ';' (or it has
// no statement at all), as in the shell.
func (k *Kernel) isComplete(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	if sql.Complete(req.Code) {
		k.reply(ch, m, map[string]any{"status": "complete"})
		return
	}
	k.reply(ch, m, map[string]any{"status": "incomplete", "indent": ""})
}
