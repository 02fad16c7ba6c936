package sql

import (
	"fmt"

	"github.com/clink-sql/clink/sql/ast"
)

// query reads [WITH ...] body [ORDER BY ...] [LIMIT|OFFSET|FETCH ...].
// A parenthesised query with no clauses of its own around it is returned
// as the query inside: ((SELECT 1 LIMIT 1)) is the query SELECT 1 LIMIT 1.
func (p *parser) query() *ast.Query {
	p.enter()
	defer p.leave()
	lo := p.peek().start
	q := &ast.Query{}
	if p.at("WITH") {
		q.With = p.with()
	}
	q.Body = p.setExpr()
	p.orderLimit(q)
	q.Span = p.span(lo)
	if inner, ok := q.Body.(*ast.Query); ok && q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
		return inner
	}
	return q
}

func (p *parser) with() *ast.With {
	lo := p.peek().start
	p.pos++ // WITH
	w := &ast.With{Recursive: p.accept("RECURSIVE")}
	for {
		clo := p.peek().start
		c := &ast.CTE{Name: p.ident("a name for the WITH query")}
		if p.atOp("(") {
			c.Columns = p.identList("a column name")
		}
		p.expect("AS")
		if !p.atOp("(") || !p.isQueryParen(p.pos) {
			p.errExpected("'(' and a query")
		}
		c.Query = p.parenQuery()
		c.Span = p.span(clo)
		w.CTEs = append(w.CTEs, c)
		if !p.acceptOp(",") {
			break
		}
	}
	w.Span = p.span(lo)
	return w
}

// setExpr reads operands joined by UNION and EXCEPT, left to right;
// INTERSECT binds tighter (intersectTerm).
func (p *parser) setExpr() ast.QueryBody {
	lo := p.peek().start
	left := p.intersectTerm()
	for p.at("UNION") || p.at("EXCEPT") {
		op := ast.Union
		if p.next().up == "EXCEPT" {
			op = ast.Except
		}
		all := p.setQuantifier()
		right := p.intersectTerm()
		left = &ast.SetOp{Span: p.span(lo), Op: op, All: all, Left: left, Right: right}
	}
	return left
}

func (p *parser) intersectTerm() ast.QueryBody {
	lo := p.peek().start
	left := p.setOperand()
	for p.at("INTERSECT") {
		p.pos++
		all := p.setQuantifier()
		right := p.setOperand()
		left = &ast.SetOp{Span: p.span(lo), Op: ast.Intersect, All: all, Left: left, Right: right}
	}
	return left
}

// setQuantifier reads ALL (true) or DISTINCT (false, the default).
func (p *parser) setQuantifier() bool {
	if p.accept("ALL") {
		return true
	}
	p.accept("DISTINCT")
	return false
}

// setOperand reads SELECT ..., VALUES ... or (query). A parenthesised
// query without WITH, ORDER BY, LIMIT or OFFSET is its body: the printer
// adds the parentheses precedence needs.
func (p *parser) setOperand() ast.QueryBody {
	switch t := p.peek(); {
	case t.is("SELECT"):
		return p.selectBlock()
	case t.is("VALUES"):
		return p.values()
	case t.isOp("(") && p.isQueryParen(p.pos):
		q := p.parenQuery()
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body
		}
		return q
	}
	p.errExpected("a query (SELECT, VALUES or a query in parentheses)")
	return nil
}

// orderLimit reads ORDER BY, then LIMIT, OFFSET and FETCH in any order.
func (p *parser) orderLimit(q *ast.Query) {
	if p.at("ORDER") {
		q.OrderBy = p.orderBy()
	}
	limit, offset := false, false
	for {
		t := p.peek()
		switch {
		case t.is("LIMIT"):
			if limit {
				p.fail(t.start, "LIMIT given twice")
			}
			limit = true
			p.pos++
			if p.accept("ALL") {
				continue
			}
			q.Limit = p.expr()
			if p.atOp(",") {
				p.pos++
				count := p.expr()
				p.fail(t.start, fmt.Sprintf("LIMIT %s, %s is MySQL's syntax: write LIMIT %s OFFSET %s", q.Limit, count, count, q.Limit))
			}
		case t.is("OFFSET"):
			if offset {
				p.fail(t.start, "OFFSET given twice")
			}
			offset = true
			p.pos++
			q.Offset = p.expr()
			if !p.accept("ROWS") {
				p.accept("ROW")
			}
		case t.is("FETCH"):
			if limit {
				p.fail(t.start, "LIMIT given twice (FETCH FIRST is a LIMIT)")
			}
			limit = true
			p.pos++
			if !p.accept("FIRST") && !p.accept("NEXT") {
				p.errExpected("FIRST or NEXT")
			}
			if p.at("ROW") || p.at("ROWS") {
				q.Limit = &ast.NumberLit{Span: ast.Span{Lo: t.start, Hi: p.prevEnd()}, Text: "1"}
			} else {
				q.Limit = p.expr()
			}
			if !p.accept("ROWS") && !p.accept("ROW") {
				p.errExpected("ROWS")
			}
			p.expect("ONLY")
		default:
			return
		}
	}
}

// values reads VALUES (a, b), (c, d), ...
func (p *parser) values() *ast.Values {
	lo := p.peek().start
	p.pos++ // VALUES
	v := &ast.Values{}
	for {
		open := p.pos
		if !p.atOp("(") {
			p.errExpected("'(' and a row of values")
		}
		p.pos++
		row := p.exprList()
		p.closeList(open)
		if len(v.Rows) > 0 && len(row) != len(v.Rows[0]) {
			p.fail(p.toks[open].start, fmt.Sprintf("VALUES rows must have the same number of values: row %d has %d, row 1 has %d",
				len(v.Rows)+1, len(row), len(v.Rows[0])))
		}
		v.Rows = append(v.Rows, row)
		if !p.acceptOp(",") {
			break
		}
	}
	v.Span = p.span(lo)
	return v
}

// selectBlock reads SELECT [ALL|DISTINCT] items [FROM ...] [WHERE ...]
// [GROUP BY ...] [HAVING ...] [WINDOW ...] [QUALIFY ...].
func (p *parser) selectBlock() *ast.Select {
	lo := p.peek().start
	p.pos++ // SELECT
	s := &ast.Select{}
	if p.accept("DISTINCT") {
		s.Distinct = true
	} else {
		p.accept("ALL")
	}
	s.Items = []ast.SelectItem{p.selectItem()}
	for p.acceptOp(",") {
		s.Items = append(s.Items, p.selectItem())
	}
	if p.accept("FROM") {
		s.From = []ast.TableExpr{p.tableRef()}
		for p.acceptOp(",") {
			s.From = append(s.From, p.tableRef())
		}
	}
	if p.accept("WHERE") {
		s.Where = p.expr()
	}
	if p.at("GROUP") {
		p.pos++
		p.expect("BY")
		s.GroupBy = []ast.Expr{p.groupItem()}
		for p.acceptOp(",") {
			s.GroupBy = append(s.GroupBy, p.groupItem())
		}
	}
	if p.accept("HAVING") {
		s.Having = p.expr()
	}
	if p.accept("WINDOW") {
		for {
			wlo := p.peek().start
			name := p.ident("a window name")
			p.expect("AS")
			open := p.pos
			p.expectOp("(")
			spec := p.windowSpec()
			p.closeParen(open)
			s.Windows = append(s.Windows, &ast.NamedWindow{Span: p.span(wlo), Name: name, Spec: spec})
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.accept("QUALIFY") {
		s.Qualify = p.expr()
	}
	s.Span = p.span(lo)
	return s
}

// selectItem reads *, t.*, or expr [[AS] alias].
func (p *parser) selectItem() ast.SelectItem {
	lo := p.peek().start
	if p.acceptOp("*") {
		return &ast.Star{Span: p.span(lo)}
	}
	if p.starAhead() {
		var parts []ast.Ident
		for !p.atOp("*") {
			parts = append(parts, p.ident("a name"))
			p.pos++ // .
		}
		tn := &ast.ObjectName{Span: ast.Span{Lo: lo, Hi: p.toks[p.pos-2].end}, Parts: parts}
		p.pos++ // *
		return &ast.Star{Span: p.span(lo), Table: tn}
	}
	e := &ast.SelectExpr{Expr: p.expr()}
	if p.accept("AS") {
		a := p.ident("an alias")
		e.Alias = &a
	} else if p.peek().isName() {
		a := p.ident("an alias")
		e.Alias = &a
	}
	e.Span = p.span(lo)
	return e
}

// starAhead reports whether name.name...* starts at the cursor.
func (p *parser) starAhead() bool {
	for k := p.pos; ; k += 2 {
		if !p.toks[k].isName() || !p.toks[k+1].isOp(".") {
			return false
		}
		if p.toks[k+2].isOp("*") {
			return true
		}
	}
}

// groupItem reads an expression, GROUPING SETS (...), ROLLUP (...),
// CUBE (...) or () (the grand total).
func (p *parser) groupItem() ast.Expr {
	t := p.peek()
	lo := t.start
	switch {
	case t.is("GROUPING") && p.peekAt(1).is("SETS"):
		p.pos += 2
		open := p.pos
		p.expectOp("(")
		gs := &ast.GroupingSets{Sets: [][]ast.Expr{p.groupingSet()}}
		for p.acceptOp(",") {
			gs.Sets = append(gs.Sets, p.groupingSet())
		}
		p.closeList(open)
		gs.Span = p.span(lo)
		return gs
	case (t.is("ROLLUP") || t.is("CUBE")) && p.peekAt(1).isOp("("):
		p.pos++
		open := p.pos
		p.pos++
		exprs := p.exprList()
		p.closeList(open)
		if t.up == "CUBE" {
			return &ast.Cube{Span: p.span(lo), Exprs: exprs}
		}
		return &ast.Rollup{Span: p.span(lo), Exprs: exprs}
	case t.isOp("(") && p.peekAt(1).isOp(")"):
		p.pos += 2
		return &ast.GroupingSets{Span: p.span(lo), Sets: [][]ast.Expr{nil}}
	}
	return p.expr()
}

// groupingSet reads one set of GROUPING SETS: (a, b), (), or a.
func (p *parser) groupingSet() []ast.Expr {
	if !p.atOp("(") || p.isQueryParen(p.pos) {
		return []ast.Expr{p.expr()}
	}
	open := p.pos
	p.pos++
	if p.acceptOp(")") {
		return nil
	}
	set := p.exprList()
	p.closeList(open)
	return set
}

// ---------------------------------------------------------------------
// FROM

// tableRef reads a FROM item and the joins that follow it.
func (p *parser) tableRef() ast.TableExpr {
	lo := p.peek().start
	t := p.tablePrimary()
	for p.atJoin() {
		t = p.joinStep(t, lo)
	}
	return t
}

func (p *parser) atJoin() bool {
	switch t := p.peek(); t.up {
	case "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL":
		return t.kind == tWord
	}
	return false
}

// joinStep reads one join onto left. A join that needs ON or USING takes
// the joins written before its condition on its right side (a JOIN b
// JOIN c ON x ON y is a JOIN (b JOIN c ON x) ON y, as in PostgreSQL);
// otherwise joins associate to the left.
func (p *parser) joinStep(left ast.TableExpr, lo int) ast.TableExpr {
	p.enter()
	defer p.leave()
	j := &ast.Join{Left: left, Natural: p.accept("NATURAL")}
	switch {
	case p.accept("INNER"):
	case p.accept("LEFT"):
		j.Kind = ast.LeftJoin
		p.accept("OUTER")
	case p.accept("RIGHT"):
		j.Kind = ast.RightJoin
		p.accept("OUTER")
	case p.accept("FULL"):
		j.Kind = ast.FullJoin
		p.accept("OUTER")
	case p.at("CROSS"):
		if j.Natural {
			p.fail(p.peek().start, "NATURAL CROSS JOIN is not a join: write CROSS JOIN or NATURAL JOIN")
		}
		p.pos++
		j.Kind = ast.CrossJoin
	}
	p.expect("JOIN")
	rlo := p.peek().start
	j.Right = p.tablePrimary()
	if j.Kind != ast.CrossJoin && !j.Natural {
		for p.atJoin() {
			j.Right = p.joinStep(j.Right, rlo)
		}
		switch {
		case p.accept("ON"):
			j.On = p.expr()
		case p.accept("USING"):
			j.Using = p.identList("a column name")
		default:
			p.errExpected("ON or USING")
		}
	}
	j.Span = p.span(lo)
	return j
}

// tablePrimary reads one FROM item: a table, a path, a derived table, a
// table function or a parenthesised join.
func (p *parser) tablePrimary() ast.TableExpr {
	t := p.peek()
	lo := t.start
	switch {
	case t.isOp("("):
		if p.isQueryParen(p.pos) {
			d := &ast.Derived{Query: p.parenQuery(), Alias: p.tableAlias()}
			d.Span = p.span(lo)
			return d
		}
		p.enter()
		defer p.leave()
		open := p.pos
		p.pos++
		inner := p.tableRef()
		p.closeParen(open)
		if p.at("AS") || p.peek().isName() {
			p.fail(p.peek().start, "a parenthesised FROM item takes no alias: alias the tables inside it")
		}
		return inner
	case t.is("LATERAL"):
		p.pos++
		switch n := p.peek(); {
		case n.isOp("(") && p.isQueryParen(p.pos):
			d := &ast.Derived{Lateral: true, Query: p.parenQuery(), Alias: p.tableAlias()}
			d.Span = p.span(lo)
			return d
		case n.is("TABLE") && p.peekAt(1).isOp("("):
			return p.tableFunc(lo, true)
		case n.isName() && p.peekAt(1).isOp("("):
			return p.tableFunc(lo, true)
		}
		p.errExpected("a subquery or a table function")
	case t.is("TABLE") && p.peekAt(1).isOp("("):
		return p.tableFunc(lo, false)
	case t.kind == tString:
		p.pos++
		pt := &ast.PathTable{Path: t.text, Alias: p.tableAlias()}
		pt.Span = p.span(lo)
		return pt
	case t.isName():
		if p.peekAt(1).isOp("(") {
			return p.tableFunc(lo, false)
		}
		tn := &ast.TableName{Name: p.objectName("a table name")}
		if p.atOp("(") {
			p.fail(lo, fmt.Sprintf("qualified table function names (%s) are not supported", tn.Name.String()))
		}
		if p.at("FOR") && p.peekAt(1).is("SYSTEM_TIME") {
			p.pos += 2
			p.expect("AS")
			p.expect("OF")
			tn.AsOf = p.expr()
		}
		tn.Alias = p.tableAlias()
		tn.Span = p.span(lo)
		return tn
	}
	p.errExpected("a table, a quoted path, a subquery or TABLE(...)")
	return nil
}

// tableFunc reads [TABLE(]f(args)[)] and its alias; LATERAL, when given,
// is already read.
func (p *parser) tableFunc(lo int, lateral bool) ast.TableExpr {
	tf := &ast.TableFunc{Lateral: lateral}
	wrapOpen := -1
	if p.at("TABLE") {
		p.pos++
		wrapOpen = p.pos
		p.pos++ // (
		tf.Wrapped = true
		if !p.peek().isName() || !p.peekAt(1).isOp("(") {
			p.failExpected("a function call in TABLE(...), such as TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)")
		}
	}
	tf.Name = p.ident("a function name")
	open := p.pos
	p.pos++ // (
	if !p.atOp(")") {
		tf.Args = []ast.Expr{p.tableFuncArg()}
		for p.acceptOp(",") {
			tf.Args = append(tf.Args, p.tableFuncArg())
		}
	}
	p.closeList(open)
	if tf.Wrapped {
		p.closeParen(wrapOpen)
	}
	tf.Alias = p.tableAlias()
	tf.Span = p.span(lo)
	return tf
}

// tableFuncArg reads an argument of a table function: TABLE t [PARTITION
// BY ...], DESCRIPTOR(cols), name => value, or an expression.
func (p *parser) tableFuncArg() ast.Expr {
	t := p.peek()
	lo := t.start
	switch {
	case t.is("TABLE") && p.peekAt(1).isName():
		p.pos++
		ta := &ast.TableArg{Name: p.objectName("a table name")}
		if p.at("PARTITION") {
			p.pos++
			p.expect("BY")
			ta.PartitionBy = p.partitionKeys()
		}
		ta.Span = p.span(lo)
		return ta
	case t.is("DESCRIPTOR") && p.peekAt(1).isOp("("):
		p.pos++
		cols := p.identList("a column name")
		return &ast.Descriptor{Span: p.span(lo), Columns: cols}
	case t.isName() && p.peekAt(1).isOp("=>"):
		name := p.ident("a parameter name")
		p.pos++ // =>
		v := p.tableFuncArg()
		return &ast.NamedArg{Span: p.span(lo), Name: name, Value: v}
	}
	return p.expr()
}

// partitionKeys reads the keys after PARTITION BY in a table argument:
// (a, b), or a, b up to the next argument (DESCRIPTOR, TABLE, INTERVAL or
// name =>), since a bare list shares its commas with the arguments.
func (p *parser) partitionKeys() []ast.Expr {
	if p.atOp("(") && !p.isQueryParen(p.pos) {
		open := p.pos
		p.pos++
		keys := p.exprList()
		p.closeList(open)
		return keys
	}
	keys := []ast.Expr{p.expr()}
	for p.atOp(",") && !p.argStartsAt(p.pos+1) {
		p.pos++
		keys = append(keys, p.expr())
	}
	return keys
}

func (p *parser) argStartsAt(i int) bool {
	t, next := &p.toks[i], &p.toks[min(i+1, len(p.toks)-1)]
	return t.is("DESCRIPTOR") && next.isOp("(") || t.is("TABLE") || t.is("INTERVAL") ||
		t.isName() && next.isOp("=>")
}

// tableAlias reads [AS] name [(col, ...)].
func (p *parser) tableAlias() *ast.TableAlias {
	lo := p.peek().start
	if !p.accept("AS") && !p.peek().isName() {
		return nil
	}
	a := &ast.TableAlias{Name: p.ident("an alias")}
	if p.atOp("(") {
		a.Columns = p.identList("a column alias")
	}
	a.Span = p.span(lo)
	return a
}
