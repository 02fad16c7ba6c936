package main

import (
	"strconv"
	"strings"
)

// A small SQL scanner: enough to split a script into statements and to
// find the outermost query's select list, ORDER BY, LIMIT and OFFSET, so
// that a result can be checked the way its query defines it. It knows
// strings, quoted identifiers, comments and parentheses, nothing more.

type token struct {
	text  string // as written
	upper string // upper-cased, for keywords
	depth int    // parenthesis depth at the token
}

// scanSQL tokenizes s, dropping whitespace and comments.
func scanSQL(s string) []token {
	var out []token
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 4
			}
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(s))
			out = append(out, token{text: s[i:j], upper: s[i:j], depth: depth})
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.') {
				j++
			}
			out = append(out, token{text: s[i:j], upper: strings.ToUpper(s[i:j]), depth: depth})
			i = j
		default:
			if c == ')' {
				depth--
			}
			out = append(out, token{text: s[i : i+1], upper: s[i : i+1], depth: depth})
			if c == '(' {
				depth++
			}
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// splitStatements cuts a script at its top-level semicolons, dropping the
// comment lines that open each statement and statements that are only
// comments. The statements' text is otherwise as written.
func splitStatements(script string) []string {
	var out []string
	start := 0
	inStr := byte(0)
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case inStr != 0:
			if c == inStr {
				inStr = 0
			}
		case c == '\'' || c == '"':
			inStr = c
		case c == '-' && i+1 < len(script) && script[i+1] == '-':
			for i < len(script) && script[i] != '\n' {
				i++
			}
		case c == ';':
			out = appendStatement(out, script[start:i])
			start = i + 1
		}
	}
	return appendStatement(out, script[start:])
}

func appendStatement(out []string, s string) []string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 {
		l := strings.TrimSpace(lines[0])
		if l != "" && !strings.HasPrefix(l, "--") {
			break
		}
		lines = lines[1:]
	}
	s = strings.TrimSpace(strings.Join(lines, "\n"))
	if s == "" {
		return out
	}
	return append(out, s)
}

// returnsRows says whether a statement is a query (SELECT, WITH, VALUES)
// rather than DDL.
func returnsRows(stmt string) bool {
	toks := scanSQL(stmt)
	for len(toks) > 0 && toks[0].text == "(" {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return false
	}
	switch toks[0].upper {
	case "SELECT", "WITH", "VALUES", "FROM", "TABLE":
		return true
	}
	return false
}

// orderSpec is what a query says about the order and extent of its rows.
type orderSpec struct {
	ordered bool // an outermost ORDER BY
	// keys are the output columns the ORDER BY items are (0-based); nil
	// when an item is not an output column (ORDER BY EventTime while
	// selecting SearchPhrase), then the order cannot be checked.
	keys   []int
	limit  int64 // -1: none
	offset int64 // 0: none
}

// parseOrder reads the outermost ORDER BY / LIMIT / OFFSET of query, whose
// result has the given column names (used for SELECT * and for names).
func parseOrder(query string, names []string) orderSpec {
	spec := orderSpec{limit: -1}
	toks := scanSQL(query)
	orderAt := -1
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.depth != 0 {
			continue
		}
		switch t.upper {
		case "ORDER":
			if toks[i+1].upper == "BY" {
				orderAt = i
			}
		case "LIMIT":
			if n, err := strconv.ParseInt(toks[i+1].text, 10, 64); err == nil {
				spec.limit = n
			} else {
				spec.limit = 1 << 62 // not a literal: treat as cutting
			}
		case "OFFSET":
			if n, err := strconv.ParseInt(toks[i+1].text, 10, 64); err == nil {
				spec.offset = n
			}
		}
	}
	if orderAt < 0 {
		return spec
	}
	spec.ordered = true
	var items [][]token
	var cur []token
	for _, t := range toks[orderAt+2:] {
		if t.depth == 0 && (t.upper == "LIMIT" || t.upper == "OFFSET" || t.upper == "FETCH" || t.text == ";") {
			break
		}
		if t.depth == 0 && t.text == "," {
			items = append(items, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	items = append(items, cur)
	selects := selectList(toks[:orderAt])
	for _, it := range items {
		it = trimOrderModifiers(it)
		col := resolveOrderItem(it, selects, names)
		if col < 0 {
			spec.keys = nil
			return spec
		}
		spec.keys = append(spec.keys, col)
	}
	return spec
}

// trimOrderModifiers drops ASC, DESC and NULLS FIRST/LAST.
func trimOrderModifiers(it []token) []token {
	for len(it) > 0 {
		switch it[len(it)-1].upper {
		case "ASC", "DESC", "FIRST", "LAST", "NULLS":
			it = it[:len(it)-1]
			continue
		}
		break
	}
	return it
}

// selectItem is one item of a select list: its expression and its name
// (the alias, or the column's name when the item is a bare column).
type selectItem struct {
	expr string
	name string
	star bool
}

// selectList finds the outermost SELECT before the ORDER BY (the last one
// at depth 0) and splits its list.
func selectList(toks []token) []selectItem {
	at := -1
	for i, t := range toks {
		if t.depth == 0 && t.upper == "SELECT" {
			at = i
		}
	}
	if at < 0 {
		return nil
	}
	var items []selectItem
	var cur []token
	flush := func() {
		if len(cur) > 0 {
			items = append(items, newSelectItem(cur))
		}
		cur = nil
	}
	for i := at + 1; i < len(toks); i++ {
		t := toks[i]
		if t.depth == 0 && (t.upper == "FROM" || t.upper == "WHERE" || t.upper == "GROUP") {
			break
		}
		if t.depth == 0 && t.text == "," {
			flush()
			continue
		}
		if len(cur) == 0 && t.depth == 0 && t.upper == "DISTINCT" {
			continue
		}
		cur = append(cur, t)
	}
	flush()
	return items
}

func newSelectItem(toks []token) selectItem {
	if len(toks) == 1 && toks[0].text == "*" {
		return selectItem{star: true}
	}
	n := len(toks)
	if n >= 3 && toks[n-2].upper == "AS" {
		return selectItem{expr: normalize(toks[:n-2]), name: unquote(toks[n-1].text)}
	}
	// "expr alias": an identifier after a complete expression.
	if n >= 2 && isIdent(toks[n-1]) && (toks[n-2].text == ")" || isIdent(toks[n-2]) || isLiteral(toks[n-2])) && toks[n-2].upper != "END" {
		return selectItem{expr: normalize(toks[:n-1]), name: unquote(toks[n-1].text)}
	}
	it := selectItem{expr: normalize(toks)}
	if n == 1 && isIdent(toks[0]) {
		name := toks[0].text
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		it.name = unquote(name)
	}
	return it
}

// resolveOrderItem maps an ORDER BY item to an output column: an ordinal,
// a select item's name, or a select item's expression; -1 when it is none.
func resolveOrderItem(it []token, selects []selectItem, names []string) int {
	if len(it) == 1 {
		if n, err := strconv.Atoi(it[0].text); err == nil {
			if n >= 1 && n <= len(names) {
				return n - 1
			}
			return -1
		}
	}
	star := false
	for _, s := range selects {
		star = star || s.star
	}
	if len(it) == 1 && isIdent(it[0]) {
		name := unquote(it[0].text)
		if i := strings.LastIndexByte(name, '.'); i >= 0 && !strings.HasPrefix(it[0].text, `"`) {
			name = name[i+1:]
		}
		if !star {
			for i, s := range selects {
				if strings.EqualFold(s.name, name) {
					return i
				}
			}
		}
		for i, n := range names {
			if strings.EqualFold(n, name) {
				return i
			}
		}
	}
	if star {
		return -1
	}
	expr := normalize(it)
	for i, s := range selects {
		if s.expr == expr {
			return i
		}
	}
	return -1
}

func normalize(toks []token) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = strings.ToLower(t.text)
	}
	return strings.Join(parts, " ")
}

func isIdent(t token) bool {
	if strings.HasPrefix(t.text, `"`) {
		return true
	}
	if t.text == "" || !isWordByte(t.text[0]) || t.text[0] >= '0' && t.text[0] <= '9' {
		return false
	}
	switch t.upper {
	case "AS", "END", "AND", "OR", "NOT", "CASE", "WHEN", "THEN", "ELSE", "NULL", "TRUE", "FALSE", "DISTINCT":
		return false
	}
	return true
}

func isLiteral(t token) bool {
	return strings.HasPrefix(t.text, "'") || t.text != "" && t.text[0] >= '0' && t.text[0] <= '9'
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}
