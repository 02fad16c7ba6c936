package sql

import (
	"fmt"

	"github.com/clink-sql/clink/sql/ast"
)

// create reads CREATE [OR REPLACE] [TEMPORARY] TABLE | VIEW, and
// CREATE [UNIQUE] INDEX.
func (p *parser) create() ast.Statement {
	lo := p.peek().start
	p.pos++ // CREATE
	orReplace := false
	if p.at("OR") {
		p.pos++
		p.expect("REPLACE")
		orReplace = true
	}
	temp := p.accept("TEMPORARY") || p.accept("TEMP")
	unique := p.accept("UNIQUE")
	t := p.peek()
	switch {
	case t.is("TABLE") && !unique:
		if orReplace {
			p.fail(lo, "CREATE OR REPLACE TABLE is not supported: DROP the table first")
		}
		return p.createTable(lo, temp)
	case t.is("VIEW") && !unique:
		return p.createView(lo, orReplace, temp)
	case t.is("INDEX") && !orReplace && !temp:
		return p.createIndex(lo, unique)
	case t.is("FUNCTION") || t.is("SYSTEM") && p.peekAt(1).is("FUNCTION"):
		p.fail(t.start, "CREATE FUNCTION is not supported: user-defined functions are not available")
	}
	switch {
	case unique:
		p.errExpected("INDEX")
	case orReplace || temp:
		p.errExpected("TABLE or VIEW")
	}
	p.errExpected("TABLE, VIEW or INDEX")
	return nil
}

func (p *parser) ifNotExists() bool {
	if !p.at("IF") {
		return false
	}
	p.pos++
	p.expect("NOT")
	p.expect("EXISTS")
	return true
}

// createTable reads the rest of
//
//	CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name [(elements)] [COMMENT '...']
//	  [PARTITIONED BY (cols)] [WITH ('k' = 'v', ...)] [AS query]
func (p *parser) createTable(lo int, temp bool) ast.Statement {
	p.pos++ // TABLE
	ct := &ast.CreateTable{Temporary: temp, IfNotExists: p.ifNotExists()}
	ct.Name = p.objectName("a table name")
	if p.atOp("(") {
		p.tableElements(ct)
	}
	if p.accept("COMMENT") {
		ct.Comment = p.stringLit("COMMENT")
	}
	if p.at("PARTITIONED") {
		p.pos++
		p.expect("BY")
		ct.PartitionedBy = p.identList("a column name")
	}
	if p.at("LIKE") {
		p.fail(p.peek().start, "CREATE TABLE ... LIKE is not supported")
	}
	if p.at("WITH") {
		p.pos++
		ct.Options = p.withOptions()
	}
	if p.accept("AS") {
		ct.As = p.query()
	}
	ct.Span = p.span(lo)
	return ct
}

// stringLit reads a string literal after the keyword what.
func (p *parser) stringLit(what string) *ast.StringLit {
	t := p.peek()
	if t.kind != tString {
		p.errExpected("a quoted string")
	}
	p.pos++
	return &ast.StringLit{Span: ast.Span{Lo: t.start, Hi: t.end}, Value: t.text}
}

// tableElements reads (column, ..., WATERMARK FOR c AS expr, [CONSTRAINT
// name] PRIMARY KEY (cols) [NOT ENFORCED]).
func (p *parser) tableElements(ct *ast.CreateTable) {
	open := p.pos
	p.pos++
	ct.Columns = []*ast.ColumnDef{}
	seen := map[string]bool{}
	for {
		t := p.peek()
		switch {
		case t.is("WATERMARK"):
			if ct.Watermark != nil {
				p.fail(t.start, "only one WATERMARK is allowed")
			}
			p.pos++
			p.expect("FOR")
			col := p.ident("a column name")
			p.expect("AS")
			ct.Watermark = &ast.WatermarkDef{Column: col, Expr: p.expr()}
			ct.Watermark.Span = p.span(t.start)
		case t.is("PRIMARY") || t.is("CONSTRAINT"):
			if t.is("CONSTRAINT") {
				// The constraint's name is not kept: nothing refers to it.
				p.pos++
				p.ident("a constraint name")
			}
			klo := p.peek().start
			p.expect("PRIMARY")
			p.expect("KEY")
			if ct.PrimaryKey != nil || p.hasInlineKey(ct) {
				p.fail(klo, "only one PRIMARY KEY is allowed")
			}
			pk := &ast.PrimaryKey{Columns: p.identList("a column name")}
			if p.at("NOT") {
				p.pos++
				p.expect("ENFORCED")
				pk.NotEnforced = true
			}
			pk.Span = p.span(klo)
			ct.PrimaryKey = pk
		default:
			c := p.columnDef()
			if seen[c.Name.Name] {
				p.fail(c.Pos(), fmt.Sprintf("duplicate column %q", c.Name.Name))
			}
			seen[c.Name.Name] = true
			if c.PrimaryKey && (ct.PrimaryKey != nil || p.hasInlineKey(ct)) {
				p.fail(c.Pos(), "only one PRIMARY KEY is allowed")
			}
			ct.Columns = append(ct.Columns, c)
		}
		if !p.acceptOp(",") {
			break
		}
	}
	p.closeList(open)
	if w := ct.Watermark; w != nil && !seen[w.Column.Name] {
		p.fail(w.Column.Pos(), fmt.Sprintf("WATERMARK FOR %q: no such column", w.Column.Name))
	}
}

func (p *parser) hasInlineKey(ct *ast.CreateTable) bool {
	for _, c := range ct.Columns {
		if c.PrimaryKey {
			return true
		}
	}
	return false
}

// columnDef reads name type [constraints] or name AS expr (computed). The
// constraints, in any order: NOT NULL, NULL, PRIMARY KEY [NOT ENFORCED],
// UNIQUE, METADATA [FROM 'key'] [VIRTUAL], COMMENT '...'.
func (p *parser) columnDef() *ast.ColumnDef {
	lo := p.peek().start
	c := &ast.ColumnDef{Name: p.ident("a column name")}
	if p.accept("AS") {
		c.Computed = p.expr()
	} else {
		c.Type = p.typeName(false)
	}
	for {
		t := p.peek()
		switch {
		case t.is("NOT") && p.peekAt(1).is("NULL") && c.Computed == nil:
			p.pos += 2
			c.NotNull = true
		case t.is("NULL") && c.Computed == nil:
			p.pos++
		case t.is("PRIMARY") && c.Computed == nil:
			p.pos++
			p.expect("KEY")
			if p.at("NOT") {
				p.pos++
				p.expect("ENFORCED")
			}
			c.PrimaryKey = true
		case t.is("UNIQUE") && c.Computed == nil:
			p.pos++
			c.Unique = true
		case t.is("METADATA") && c.Computed == nil && c.Metadata == nil:
			p.pos++
			m := &ast.Meta{}
			if p.accept("FROM") {
				m.Key = p.stringLit("METADATA FROM").Value
			}
			m.Virtual = p.accept("VIRTUAL")
			m.Span = p.span(t.start)
			c.Metadata = m
		case t.is("VIRTUAL"):
			p.fail(t.start, "VIRTUAL belongs to a METADATA column: col type METADATA [FROM 'key'] VIRTUAL")
		case t.is("COMMENT") && c.Comment == nil:
			p.pos++
			c.Comment = p.stringLit("COMMENT")
		default:
			c.Span = p.span(lo)
			return c
		}
	}
}

// withOptions reads ('key' = 'value', ...). Keys are quoted; a value may
// also be a number or a bare word, kept as written.
func (p *parser) withOptions() []*ast.Option {
	open := p.pos
	if !p.atOp("(") {
		p.errExpected("'(' and options ('key' = 'value', ...)")
	}
	p.pos++
	opts := []*ast.Option{}
	seen := map[string]bool{}
	for !p.atOp(")") {
		kt := p.peek()
		if kt.kind != tString {
			p.errExpected("a quoted option name")
		}
		p.pos++
		if seen[kt.text] {
			p.fail(kt.start, fmt.Sprintf("option '%s' given twice", kt.text))
		}
		seen[kt.text] = true
		p.expectOp("=")
		vt := p.peek()
		switch vt.kind {
		case tString, tNumber, tWord:
			p.pos++
		default:
			p.errExpected("a quoted value")
		}
		opts = append(opts, &ast.Option{Span: ast.Span{Lo: kt.start, Hi: vt.end}, Key: kt.text, Value: vt.text})
		if !p.acceptOp(",") {
			break
		}
	}
	p.closeList(open)
	return opts
}

// createView reads the rest of CREATE [OR REPLACE] [TEMPORARY] VIEW [IF
// NOT EXISTS] name [(cols)] AS query.
func (p *parser) createView(lo int, orReplace, temp bool) ast.Statement {
	p.pos++ // VIEW
	cv := &ast.CreateView{OrReplace: orReplace, Temporary: temp, IfNotExists: p.ifNotExists()}
	cv.Name = p.objectName("a view name")
	if p.atOp("(") {
		cv.Columns = p.identList("a column name")
	}
	p.expect("AS")
	cv.Query = p.query()
	cv.Span = p.span(lo)
	return cv
}

// createIndex reads the rest of CREATE [UNIQUE] INDEX [IF NOT EXISTS]
// name ON table (cols).
func (p *parser) createIndex(lo int, unique bool) ast.Statement {
	p.pos++ // INDEX
	ci := &ast.CreateIndex{Unique: unique, IfNotExists: p.ifNotExists()}
	ci.Name = p.ident("an index name")
	p.expect("ON")
	ci.Table = p.objectName("a table name")
	open := p.pos
	p.expectOp("(")
	ci.Columns = []*ast.OrderItem{p.orderItem()}
	for p.acceptOp(",") {
		ci.Columns = append(ci.Columns, p.orderItem())
	}
	p.closeList(open)
	ci.Span = p.span(lo)
	return ci
}

// drop reads DROP [TEMPORARY] TABLE|VIEW|INDEX [IF EXISTS] name, ...
func (p *parser) drop() ast.Statement {
	lo := p.peek().start
	p.pos++ // DROP
	d := &ast.Drop{Temporary: p.accept("TEMPORARY") || p.accept("TEMP")}
	t := p.peek()
	switch t.up {
	case "TABLE", "VIEW", "INDEX":
		if t.kind == tWord {
			p.pos++
			d.Kind = t.up
		}
	}
	if d.Kind == "" {
		p.errExpected("TABLE, VIEW or INDEX")
	}
	if p.at("IF") {
		p.pos++
		p.expect("EXISTS")
		d.IfExists = true
	}
	d.Names = []ast.ObjectName{p.objectName("a name")}
	for p.acceptOp(",") {
		d.Names = append(d.Names, p.objectName("a name"))
	}
	d.Span = p.span(lo)
	return d
}

// insert reads INSERT INTO|OVERWRITE table [(cols)] query.
func (p *parser) insert() *ast.Insert {
	lo := p.peek().start
	p.pos++ // INSERT
	ins := &ast.Insert{}
	switch {
	case p.accept("INTO"):
	case p.accept("OVERWRITE"):
		ins.Overwrite = true
	case p.at("OR"):
		p.fail(p.peek().start, "INSERT OR ... (SQLite's conflict clause) is not supported")
	default:
		p.errExpected("INTO or OVERWRITE")
	}
	ins.Table = p.objectName("a table name")
	if p.atOp("(") && !p.isQueryParen(p.pos) {
		ins.Columns = p.identList("a column name")
	}
	ins.Query = p.query()
	ins.Span = p.span(lo)
	return ins
}

// statementSet reads EXECUTE STATEMENT SET BEGIN insert; ... END.
func (p *parser) statementSet() ast.Statement {
	lo := p.peek().start
	p.pos++ // EXECUTE
	p.expect("STATEMENT")
	p.expect("SET")
	p.expect("BEGIN")
	ss := &ast.StatementSet{}
	for !p.at("END") {
		if !p.at("INSERT") {
			p.errExpected("INSERT or END")
		}
		ss.Inserts = append(ss.Inserts, p.insert())
		if !p.acceptOp(";") && !p.at("END") {
			p.errExpected("';'")
		}
	}
	p.pos++ // END
	ss.Span = p.span(lo)
	return ss
}
