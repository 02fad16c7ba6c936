// Package complete is the SQL completer the shell (Tab) and the kernel
// (complete_request, inspect_request) share: keywords, functions, the
// tables and views of a catalog, their columns, and file paths inside a
// quoted string.
package complete

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/sql"
)

// Result is what replaces code[Start:End] (in code points, as the Jupyter
// protocol counts): one of Matches. Matches is never nil.
type Result struct {
	Matches    []string
	Start, End int
}

// tableContext are the keywords after which only a table name fits.
var tableContext = map[string]bool{"FROM": true, "JOIN": true, "INTO": true, "TABLE": true, "DESCRIBE": true, "DESC": true, "VIEW": true}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// clamp makes cursor a valid code-point index of rs; a negative cursor
// means the end.
func clamp(rs []rune, cursor int) int {
	if cursor < 0 || cursor > len(rs) {
		return len(rs)
	}
	return cursor
}

// Complete completes what is before cursor (a code-point index of code;
// negative means the end). Inside a string literal it offers file paths
// (the text from the opening quote is the path typed so far); inside a
// quoted identifier or a comment nothing. Elsewhere it offers table names
// after FROM and the like, else keywords, functions, tables and columns
// (of the tables the code names, or of every table when it names none);
// "t.c" completes the columns of table t.
func Complete(code string, cursor int, tables []engine.TableInfo) Result {
	rs := []rune(code)
	pos := clamp(rs, cursor)
	before := string(rs[:pos])
	switch enc, open := sql.Trailing(before); enc {
	case sql.InString:
		start := utf8.RuneCountInString(before[:open])
		return Result{Matches: Paths(before[open:]), Start: start, End: pos}
	case sql.InIdentifier, sql.InComment:
		return Result{Matches: []string{}, Start: pos, End: pos}
	}
	start := pos
	for start > 0 && (isWordRune(rs[start-1]) || rs[start-1] == '.') {
		start--
	}
	word := string(rs[start:pos])
	c := Result{Start: start, End: pos, Matches: []string{}}
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			c.Matches = append(c.Matches, s)
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
		sort.Strings(c.Matches)
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
	for _, f := range Functions() {
		if hasPrefixFold(f.Name, word) {
			add(f.Name)
		}
	}
	for _, t := range TablesInScope(code, tables) {
		for _, f := range t.Schema.Fields() {
			if hasPrefixFold(f.Name, word) {
				add(f.Name)
			}
		}
	}
	sort.Strings(c.Matches)
	return c
}

// TablesInScope are the tables whose columns fit: those the code names,
// or all of them when it names none.
func TablesInScope(code string, tables []engine.TableInfo) []engine.TableInfo {
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

// WordAt is the word under (or just before) cursor (a code-point index;
// negative means the end): what inspection describes.
func WordAt(code string, cursor int) string {
	_, name := NameAt(code, cursor)
	return name
}

// NameAt is the possibly qualified name under (or just before) cursor:
// "bid.price" gives ("bid", "price"), "price" gives ("", "price"). With the
// cursor on the qualifier ("b|id.price") the qualifier is the name.
func NameAt(code string, cursor int) (qualifier, name string) {
	rs := []rune(code)
	pos := clamp(rs, cursor)
	start, end := pos, pos
	for start > 0 && isWordRune(rs[start-1]) {
		start--
	}
	for end < len(rs) && isWordRune(rs[end]) {
		end++
	}
	name = string(rs[start:end])
	if start > 1 && rs[start-1] == '.' && isWordRune(rs[start-2]) {
		q := start - 1
		for q > 0 && isWordRune(rs[q-1]) {
			q--
		}
		if !unicode.IsDigit(rs[q]) { // not a number's digits: 1.5
			qualifier = string(rs[q : start-1])
		}
	}
	return qualifier, name
}
