package sql

import (
	"fmt"
	"strings"

	"github.com/clink-sql/clink/sql/ast"
)

// statement dispatches on the first word.
func (p *parser) statement() ast.Statement {
	t := p.peek()
	switch {
	case t.is("SELECT"), t.is("WITH"), t.is("VALUES"), t.isOp("(") && p.isQueryParen(p.pos):
		return p.query()
	case t.is("CREATE"):
		return p.create()
	case t.is("DROP"):
		return p.drop()
	case t.is("INSERT"):
		return p.insert()
	case t.is("EXPLAIN"):
		return p.explain()
	case t.is("SET"):
		return p.set()
	case t.is("RESET"):
		return p.reset()
	case t.is("SHOW"):
		return p.show()
	case t.is("DESCRIBE"), t.is("DESC"):
		return p.describe()
	case t.is("EXECUTE"):
		return p.statementSet()
	case t.is("BEGIN"):
		p.pos++
		p.expect("STATEMENT")
		p.expect("SET")
		return &ast.BeginStatementSet{Span: p.span(t.start)}
	case t.is("END"):
		p.pos++
		return &ast.EndStatementSet{Span: p.span(t.start)}
	case t.is("UPDATE"), t.is("DELETE"), t.is("MERGE"), t.is("ALTER"), t.is("TRUNCATE"), t.is("USE"):
		p.fail(t.start, t.up+" is not supported")
	}
	what := describe(t)
	if t.kind == tWord {
		what = strings.ToUpper(t.text)
	}
	p.fail(t.start, fmt.Sprintf("unknown statement %s: expected SELECT, WITH, VALUES, INSERT, CREATE, DROP, "+
		"EXPLAIN, SET, RESET, SHOW, DESCRIBE or EXECUTE STATEMENT SET", what))
	return nil
}

// explain reads EXPLAIN [PLAN FOR] then, in any order, ANALYZE, VERBOSE,
// FORMAT x and (option [value], ...), then the statement.
func (p *parser) explain() ast.Statement {
	lo := p.peek().start
	p.pos++ // EXPLAIN
	ex := &ast.Explain{}
	if p.at("PLAN") && p.peekAt(1).is("FOR") {
		p.pos += 2
	}
	for {
		switch {
		case p.accept("ANALYZE"):
			ex.Analyze = true
			continue
		case p.accept("VERBOSE"):
			ex.Verbose = true
			continue
		case p.at("FORMAT"):
			p.pos++
			p.acceptOp("=")
			ex.Format = p.explainFormat()
			continue
		case p.atOp("(") && !p.isQueryParen(p.pos):
			p.explainOptions(ex)
			continue
		}
		break
	}
	switch t := p.peek(); {
	case t.is("EXPLAIN"):
		p.fail(t.start, "EXPLAIN cannot explain EXPLAIN")
	case t.kind == tEOF:
		p.errExpected("a statement")
	}
	ex.Stmt = p.statement()
	ex.Span = p.span(lo)
	return ex
}

// explainFormat reads the word after FORMAT (TEXT, JSON), upper-cased;
// the engine decides which it knows.
func (p *parser) explainFormat() string {
	t := p.peek()
	v := t.upper()
	if t.kind == tString {
		v = strings.ToUpper(t.text)
	}
	if t.kind != tWord && t.kind != tString || !isPlainWord(v) {
		p.errExpected("a format (TEXT or JSON)")
	}
	p.pos++
	return v
}

// isPlainWord reports whether s is ASCII letters, digits and '_',
// starting with a letter: what prints back bare as a format.
func isPlainWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

// explainOptions reads (KEY [=] [value], ...). ANALYZE, VERBOSE and
// FORMAT set their fields; the others are kept as options, a key without
// a value being 'true'.
func (p *parser) explainOptions(ex *ast.Explain) {
	open := p.pos
	p.pos++
	for {
		kt := p.peek()
		if kt.kind != tWord {
			p.errExpected("an EXPLAIN option (ANALYZE, VERBOSE, FORMAT, DURATION, ...)")
		}
		p.pos++
		key := kt.upper()
		p.acceptOp("=")
		hasValue := !p.atOp(",") && !p.atOp(")")
		switch key {
		case "ANALYZE", "VERBOSE":
			v := true
			if hasValue {
				v = p.boolValue(key)
			}
			if key == "ANALYZE" {
				ex.Analyze = v
			} else {
				ex.Verbose = v
			}
		case "FORMAT":
			if !hasValue {
				p.errExpected("a format (TEXT or JSON)")
			}
			ex.Format = p.explainFormat()
		default:
			for _, o := range ex.Options {
				if o.Key == key {
					p.fail(kt.start, "EXPLAIN option "+key+" given twice")
				}
			}
			val := "true"
			if hasValue {
				val = p.optionValue(key)
			}
			ex.Options = append(ex.Options, &ast.Option{Span: p.span(kt.start), Key: key, Value: val})
		}
		if !p.acceptOp(",") {
			break
		}
	}
	p.closeList(open)
}

// boolValue reads TRUE|FALSE|ON|OFF|1|0 as an option's value.
func (p *parser) boolValue(key string) bool {
	t := p.peek()
	v := t.upper()
	if t.kind != tWord {
		v = strings.ToUpper(t.text)
	}
	switch v {
	case "TRUE", "ON", "1":
		p.pos++
		return true
	case "FALSE", "OFF", "0":
		p.pos++
		return false
	}
	p.errExpected("TRUE or FALSE for " + key)
	return false
}

// optionValue reads one EXPLAIN option value: a string (as is), a number,
// or a word (upper-cased: duration -> DURATION).
func (p *parser) optionValue(key string) string {
	t := p.peek()
	switch t.kind {
	case tString, tNumber, tQuoted:
		p.pos++
		return t.text
	case tWord:
		p.pos++
		return t.upper()
	}
	p.errExpected("a value for " + key)
	return ""
}

// set reads SET, SET 'k' = 'v', SET k = v or SET k TO v. An unquoted key
// is a dotted, hyphenated name (table.exec.mini-batch.enabled); an
// unquoted value is the rest of the statement as written.
func (p *parser) set() ast.Statement {
	lo := p.peek().start
	p.pos++ // SET
	if p.peek().kind == tEOF {
		return &ast.Set{Span: p.span(lo)}
	}
	key := p.settingKey()
	if !p.acceptOp("=") && !p.accept("TO") {
		p.errExpected("'=' or TO")
	}
	s := &ast.Set{Key: key}
	switch t := p.peek(); {
	case t.kind == tEOF:
		p.errExpected("a value")
	case t.kind == tString && p.peekAt(1).kind == tEOF:
		p.pos++
		s.Value = t.text
	default:
		last := len(p.toks) - 2 // the token before tEOF
		for i := p.pos; i <= last; i++ {
			if p.toks[i].isOp(";") {
				p.pos = i
				p.expectEnd()
			}
		}
		s.Value = p.text[t.start:p.toks[last].end]
		p.pos = last + 1
	}
	s.Span = p.span(lo)
	return s
}

// settingKey reads a quoted key, or a name of words joined by '.' and '-'
// with nothing between them.
func (p *parser) settingKey() string {
	t := p.peek()
	if t.kind == tString {
		if t.text == "" {
			p.fail(t.start, "a setting name cannot be empty")
		}
		p.pos++
		return t.text
	}
	if t.kind != tWord {
		p.errExpected("a setting name")
	}
	start := p.pos
	p.pos++
	for {
		n := p.peek()
		if n.start != p.toks[p.pos-1].end || !(n.kind == tWord || n.kind == tNumber || n.isOp(".") || n.isOp("-")) {
			break
		}
		p.pos++
	}
	return p.text[p.toks[start].start:p.prevEnd()]
}

// reset reads RESET or RESET key.
func (p *parser) reset() ast.Statement {
	lo := p.peek().start
	p.pos++ // RESET
	r := &ast.Reset{}
	if p.peek().kind != tEOF {
		r.Key = p.settingKey()
	}
	r.Span = p.span(lo)
	return r
}

// show reads SHOW TABLES [LIKE 'x'] | VIEWS | FUNCTIONS | CONNECTORS |
// COLUMNS FROM t | CREATE TABLE t | CREATE VIEW v.
func (p *parser) show() ast.Statement {
	lo := p.peek().start
	p.pos++ // SHOW
	s := &ast.Show{}
	t := p.peek()
	switch {
	case t.is("TABLES"), t.is("VIEWS"), t.is("FUNCTIONS"), t.is("CONNECTORS"):
		p.pos++
		s.What = t.up
		if t.up != "CONNECTORS" && p.accept("LIKE") {
			s.Like = p.stringLit("LIKE")
		}
	case t.is("COLUMNS"):
		p.pos++
		s.What = t.up
		if !p.accept("FROM") && !p.accept("IN") {
			p.errExpected("FROM")
		}
		n := p.objectName("a table name")
		s.Name = &n
	case t.is("CREATE"):
		p.pos++
		k := p.peek()
		if !k.is("TABLE") && !k.is("VIEW") {
			p.errExpected("TABLE or VIEW")
		}
		p.pos++
		s.What = "CREATE " + k.up
		n := p.objectName("a name")
		s.Name = &n
	default:
		p.errExpected("TABLES, VIEWS, FUNCTIONS, CONNECTORS, COLUMNS FROM or CREATE TABLE|VIEW")
	}
	s.Span = p.span(lo)
	return s
}

// describe reads DESCRIBE|DESC name | 'path' | query.
func (p *parser) describe() ast.Statement {
	lo := p.peek().start
	p.pos++
	d := &ast.Describe{}
	switch t := p.peek(); {
	case t.kind == tString:
		d.Path = p.stringLit("DESCRIBE")
	case t.is("SELECT"), t.is("WITH"), t.is("VALUES"), t.isOp("(") && p.isQueryParen(p.pos):
		d.Query = p.query()
	default:
		n := p.objectName("a table or view name, a quoted path or a query")
		d.Name = &n
	}
	d.Span = p.span(lo)
	return d
}
