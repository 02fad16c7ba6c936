package sql

import (
	"fmt"
	"strings"
)

// create reads CREATE [TEMPORARY] TABLE|VIEW ...
func (p *parser) create() (Statement, error) {
	p.pos++ // CREATE
	p.accept("TEMPORARY")
	t := p.next()
	switch {
	case t.is("TABLE"):
		return p.createTable()
	case t.is("VIEW"):
		return p.createView()
	case t.is("FUNCTION"):
		return nil, p.errAt(t.start, "CREATE FUNCTION is not supported: user-defined functions are not available")
	case t.is("OR"):
		return nil, p.errAt(t.start, "CREATE OR REPLACE is not supported: DROP the table or view first")
	}
	return nil, p.errAt(t.start, "expected TABLE or VIEW after CREATE, found "+describe(t))
}

func (p *parser) ifNotExists() (bool, error) {
	if !p.peek().is("IF") {
		return false, nil
	}
	p.pos++
	if err := p.expect("NOT", "in IF NOT EXISTS"); err != nil {
		return false, err
	}
	return true, p.expect("EXISTS", "in IF NOT EXISTS")
}

// createTable reads the rest of CREATE TABLE [IF NOT EXISTS] name
// [(column, ..., WATERMARK FOR c AS expr, PRIMARY KEY (...) NOT ENFORCED)]
// [COMMENT '...'] WITH ('k' = 'v', ...).
func (p *parser) createTable() (Statement, error) {
	ct := &CreateTable{}
	var err error
	if ct.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if ct.Name, err = p.qualifiedName("after CREATE TABLE"); err != nil {
		return nil, err
	}
	if p.peek().isOp("(") {
		if err := p.tableElements(ct); err != nil {
			return nil, err
		}
	}
	if p.accept("COMMENT") {
		if t := p.next(); t.kind != tkString {
			return nil, p.errAt(t.start, "expected a string after COMMENT, found "+describe(t))
		}
	}
	switch t := p.peek(); {
	case t.is("PARTITIONED"):
		return nil, p.errAt(t.start, "PARTITIONED BY is not supported")
	case t.is("LIKE"):
		return nil, p.errAt(t.start, "CREATE TABLE ... LIKE is not supported")
	case t.is("AS"):
		return nil, p.errAt(t.start, "CREATE TABLE ... AS SELECT is not supported: CREATE TABLE, then INSERT INTO")
	}
	if !p.peek().is("WITH") {
		return nil, p.errExpected("WITH ('connector' = '...', ...)", "after CREATE TABLE "+ct.Name)
	}
	p.pos++
	if ct.Options, err = p.withOptions(); err != nil {
		return nil, err
	}
	return ct, p.expectEnd("the WITH options")
}

// tableElements reads the parenthesised column list of CREATE TABLE.
func (p *parser) tableElements(ct *CreateTable) error {
	open := p.pos
	closeIdx := p.match[open]
	saved := p.end
	p.pos, p.end = open+1, closeIdx
	seen := map[string]bool{}
	ct.Columns = []ColumnDef{}
	var wmTok token
	for {
		t := p.peek()
		switch {
		case p.atEnd():
			return p.errExpected("a column", "in CREATE TABLE")
		case t.is("WATERMARK"):
			if ct.Watermark != nil {
				return p.errAt(t.start, "only one WATERMARK is allowed")
			}
			p.pos++
			wmTok = t
			if err := p.expect("FOR", "after WATERMARK"); err != nil {
				return err
			}
			col, err := p.ident("after WATERMARK FOR")
			if err != nil {
				return err
			}
			if err := p.expect("AS", "after WATERMARK FOR "+col); err != nil {
				return err
			}
			e, err := p.exprUntilComma("WATERMARK FOR " + col + " AS")
			if err != nil {
				return err
			}
			ct.Watermark = &WatermarkDef{Column: col, Expr: e}
		case t.is("PRIMARY") || t.is("CONSTRAINT"):
			// Keys are not enforced in a streaming engine (Flink demands
			// NOT ENFORCED too); accepted so Flink DDL runs as is.
			p.rawUntil(func(t token) bool { return t.isOp(",") })
		default:
			c, err := p.columnDef()
			if err != nil {
				return err
			}
			if seen[c.Name] {
				return p.errAt(t.start, fmt.Sprintf("duplicate column %q", c.Name))
			}
			seen[c.Name] = true
			ct.Columns = append(ct.Columns, c)
		}
		if p.atEnd() {
			break
		}
		if err := p.expectOp(",", "between columns"); err != nil {
			return err
		}
	}
	if ct.Watermark != nil && !seen[ct.Watermark.Column] {
		return p.errAt(wmTok.start, fmt.Sprintf("WATERMARK FOR %q: no such column", ct.Watermark.Column))
	}
	p.pos, p.end = closeIdx+1, saved
	return nil
}

// columnDef reads name TYPE [NOT NULL] [METADATA [FROM 'key'] [VIRTUAL]]
// [COMMENT '...'] [PRIMARY KEY NOT ENFORCED], or name AS expr (computed).
func (p *parser) columnDef() (ColumnDef, error) {
	var c ColumnDef
	var err error
	if c.Name, err = p.ident("of a column"); err != nil {
		return c, err
	}
	if p.accept("AS") {
		c.Computed, err = p.exprUntilComma("computed column " + c.Name + " AS")
		return c, err
	}
	if p.atEnd() || p.peek().isOp(",") {
		return c, p.errExpected("a type", "for column "+c.Name)
	}
	if c.Type, err = p.parseType(); err != nil {
		return c, err
	}
	if p.pendingGT {
		return c, p.errAt(p.toks[p.pos-1].start+1, "unexpected '>' after the type of "+c.Name)
	}
	c.NotNull = p.nullability()
	for !p.atEnd() && !p.peek().isOp(",") {
		t := p.next()
		switch {
		case t.is("METADATA"):
			c.Metadata = c.Name
			if p.accept("FROM") {
				k := p.next()
				if k.kind != tkString {
					return c, p.errAt(k.start, "expected a quoted key after METADATA FROM, found "+describe(k))
				}
				c.Metadata = k.stringValue()
			}
		case t.is("VIRTUAL") && c.Metadata != "":
		case t.is("COMMENT"):
			if k := p.next(); k.kind != tkString {
				return c, p.errAt(k.start, "expected a string after COMMENT, found "+describe(k))
			}
		case t.is("PRIMARY"):
			if err := p.expect("KEY", "after PRIMARY"); err != nil {
				return c, err
			}
			p.accept("NOT")
			p.accept("ENFORCED")
		default:
			return c, p.errAt(t.start, fmt.Sprintf("unexpected %s in the definition of column %s", describe(t), c.Name))
		}
	}
	return c, nil
}

// exprUntilComma takes the expression text up to the next top-level comma,
// checks that it parses, and returns it as the user wrote it.
func (p *parser) exprUntilComma(context string) (string, error) {
	text, lo, hi := p.rawUntil(func(t token) bool { return t.isOp(",") })
	if text == "" {
		return "", p.errExpected("an expression", "after "+context)
	}
	if _, err := p.expr(lo, hi); err != nil {
		return "", err
	}
	p.pos = hi
	return text, nil
}

// withOptions reads ('k' = 'v', ...). Keys and values are string literals;
// bare words and numbers are accepted as values for convenience.
func (p *parser) withOptions() (map[string]string, error) {
	if !p.peek().isOp("(") {
		return nil, p.errExpected("'('", "after WITH")
	}
	open := p.pos
	closeIdx := p.match[open]
	saved := p.end
	p.pos, p.end = open+1, closeIdx
	opts := map[string]string{}
	for !p.atEnd() {
		kt := p.next()
		if kt.kind != tkString {
			return nil, p.errAt(kt.start, "expected a quoted option name in WITH, found "+describe(kt))
		}
		key := kt.stringValue()
		if _, dup := opts[key]; dup {
			return nil, p.errAt(kt.start, fmt.Sprintf("option '%s' given twice", key))
		}
		if err := p.expectOp("=", "after option '"+key+"'"); err != nil {
			return nil, err
		}
		vt := p.next()
		switch vt.kind {
		case tkString:
			opts[key] = vt.stringValue()
		case tkNumber, tkWord:
			opts[key] = vt.text
		default:
			return nil, p.errAt(vt.start, fmt.Sprintf("expected a quoted value for option '%s', found %s", key, describe(vt)))
		}
		if !p.atEnd() {
			if err := p.expectOp(",", "between WITH options"); err != nil {
				return nil, err
			}
		}
	}
	p.pos, p.end = closeIdx+1, saved
	return opts, nil
}

// createView reads the rest of CREATE VIEW [IF NOT EXISTS] name AS <query>.
func (p *parser) createView() (Statement, error) {
	cv := &CreateView{}
	var err error
	if cv.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if cv.Name, err = p.qualifiedName("after CREATE VIEW"); err != nil {
		return nil, err
	}
	if t := p.peek(); t.isOp("(") {
		return nil, p.errAt(t.start, "column lists in CREATE VIEW are not supported: alias the columns in the query")
	}
	if err := p.expect("AS", "after CREATE VIEW "+cv.Name); err != nil {
		return nil, err
	}
	if cv.Query, err = p.query(p.pos, p.end); err != nil {
		return nil, err
	}
	return cv, nil
}

// drop reads DROP [TEMPORARY] TABLE|VIEW [IF EXISTS] name.
func (p *parser) drop() (Statement, error) {
	p.pos++
	p.accept("TEMPORARY")
	t := p.next()
	if !t.is("TABLE") && !t.is("VIEW") {
		return nil, p.errAt(t.start, "expected TABLE or VIEW after DROP, found "+describe(t))
	}
	d := &Drop{Kind: strings.ToUpper(t.text)}
	if p.accept("IF") {
		if err := p.expect("EXISTS", "after DROP "+d.Kind+" IF"); err != nil {
			return nil, err
		}
		d.IfExists = true
	}
	var err error
	if d.Name, err = p.qualifiedName("after DROP " + d.Kind); err != nil {
		return nil, err
	}
	return d, p.expectEnd("DROP " + d.Kind + " " + d.Name)
}
