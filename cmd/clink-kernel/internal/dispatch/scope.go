package dispatch

import (
	"regexp"
	"strings"

	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// fromItem is one table a cell reads in FROM or JOIN: a catalog name or a
// quoted path, and the alias it goes by there ("" when none).
type fromItem struct {
	name  string
	path  bool
	alias string
}

// fromItems lists what the cell's statements read, so inspection can
// resolve `b.price` (FROM bid b) and the columns of `FROM 'x.parquet'`.
// Statements that parse are walked; one being typed (not yet valid SQL)
// is scanned for FROM/JOIN lists instead.
func fromItems(code string) []fromItem {
	var items []fromItem
	for _, p := range sql.Split(code) {
		st, err := sql.Parse(p.Text)
		if err != nil {
			items = append(items, scanFromItems(p.Text)...)
			continue
		}
		v := &fromVisitor{}
		ast.Walk(v, st)
		items = append(items, v.items...)
	}
	return items
}

type fromVisitor struct{ items []fromItem }

func aliasName(a *ast.TableAlias) string {
	if a == nil {
		return ""
	}
	return a.Name.Name
}

func (v *fromVisitor) Visit(n ast.Node) ast.Visitor {
	switch t := n.(type) {
	case *ast.TableName:
		if len(t.Name.Parts) > 0 {
			v.items = append(v.items, fromItem{name: t.Name.Parts[len(t.Name.Parts)-1].Name, alias: aliasName(t.Alias)})
		}
	case *ast.PathTable:
		v.items = append(v.items, fromItem{name: t.Path, path: true, alias: aliasName(t.Alias)})
	case *ast.TableFunc:
		// read_parquet('glob') and its kin name a path as their argument.
		switch strings.ToLower(t.Name.Name) {
		case "read_parquet", "parquet_scan", "read_json", "read_ndjson", "read_json_auto":
			if len(t.Args) == 1 {
				if lit, ok := t.Args[0].(*ast.StringLit); ok {
					v.items = append(v.items, fromItem{name: lit.Value, path: true, alias: aliasName(t.Alias)})
				}
			}
		}
	}
	return v
}

var (
	fromKeyword = regexp.MustCompile(`(?i)\b(?:from|join)\s`)
	fromEntry   = regexp.MustCompile(`^\s*(?:'([^'\n]*)'|"([^"\n]+)"|([\p{L}_][\p{L}\p{N}_.$]*))(?:\s+(?i:as\s+)?([\p{L}_][\p{L}\p{N}_$]*))?`)
	nextEntry   = regexp.MustCompile(`^\s*,`)
)

// scanFromItems reads `FROM a [AS] x, 'p.parquet' y JOIN b ...` off text
// that does not parse yet. A word after a table is its alias unless it is
// a keyword (WHERE, JOIN, ON, ...).
func scanFromItems(text string) []fromItem {
	var items []fromItem
	for _, loc := range fromKeyword.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		for {
			m := fromEntry.FindStringSubmatchIndex(rest)
			if m == nil {
				break
			}
			group := func(i int) string {
				if m[2*i] < 0 {
					return ""
				}
				return rest[m[2*i]:m[2*i+1]]
			}
			it := fromItem{name: group(3)}
			switch {
			case m[2] >= 0:
				it = fromItem{name: group(1), path: true}
			case m[4] >= 0:
				it.name = group(2)
			}
			if dot := strings.LastIndexByte(it.name, '.'); !it.path && m[6] >= 0 && dot >= 0 {
				it.name = it.name[dot+1:] // catalog.db.table: the table
			}
			end := m[1]
			if a := group(4); a != "" {
				if isKeyword(a) {
					end = m[8] // the keyword starts the next clause
				} else {
					it.alias = a
				}
			}
			if it.name != "" && !(m[6] >= 0 && isKeyword(it.name)) {
				items = append(items, it)
			}
			rest = rest[end:]
			c := nextEntry.FindStringIndex(rest)
			if c == nil {
				break
			}
			rest = rest[c[1]:]
		}
	}
	return items
}

var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range sql.Keywords() {
		m[strings.ToLower(k)] = true
	}
	return m
}()

func isKeyword(w string) bool { return keywords[strings.ToLower(w)] }
