package sql

import (
	"fmt"
	"strings"

	"github.com/clink-sql/clink/sql/ast"
)

// Expressions are read by precedence climbing with PostgreSQL's
// precedence (ast.Prec, lowest first): OR; AND; NOT; IS; comparisons;
// BETWEEN, IN, LIKE, ILIKE; ||; + -; * / %; unary - +; ::; [ ]. IS, the
// comparisons and BETWEEN/IN/LIKE are non-associative: a < b = c is an
// error, as in PostgreSQL. The printer (ast/print.go) parenthesises by the
// same table.

func (p *parser) expr() ast.Expr { return p.exprPrec(ast.PrecLowest) }

// exprPrec reads an expression whose operators bind at least as tightly
// as min.
func (p *parser) exprPrec(min ast.Prec) ast.Expr {
	p.enter()
	defer p.leave()
	lo := p.peek().start
	return p.infix(p.prefix(), lo, min)
}

// prefix reads NOT x, -x, +x or a primary. The operand of NOT takes
// everything binding tighter than NOT, wherever the NOT stands (as in
// PostgreSQL's grammar): a = NOT b IS NULL is a = (NOT (b IS NULL)).
func (p *parser) prefix() ast.Expr {
	t := p.peek()
	lo := t.start
	switch {
	case t.is("NOT"):
		p.pos++
		x := p.exprPrec(ast.PrecNot)
		return &ast.Unary{Span: p.span(lo), Op: ast.OpNot, X: x}
	case t.isOp("-"), t.isOp("+"):
		p.pos++
		op := ast.OpNeg
		if t.text == "+" {
			op = ast.OpPlus
		}
		x := p.exprPrec(ast.PrecUnary)
		return &ast.Unary{Span: p.span(lo), Op: op, X: x}
	}
	return p.primary()
}

// binaryOp maps an operator token to its binary operator (a switch: it
// runs for every operator of every expression).
func binaryOp(op string) (ast.BinaryOp, bool) {
	switch op {
	case "=":
		return ast.OpEq, true
	case "<>", "!=":
		return ast.OpNe, true
	case "<":
		return ast.OpLt, true
	case "<=":
		return ast.OpLe, true
	case ">":
		return ast.OpGt, true
	case ">=":
		return ast.OpGe, true
	case "||":
		return ast.OpConcat, true
	case "+":
		return ast.OpAdd, true
	case "-":
		return ast.OpSub, true
	case "*":
		return ast.OpMul, true
	case "/":
		return ast.OpDiv, true
	case "%":
		return ast.OpMod, true
	}
	return 0, false
}

// infixPrec is the precedence of the infix or postfix operator at the
// cursor; ok is false when there is none.
func (p *parser) infixPrec() (ast.Prec, bool) {
	t := p.peek()
	switch t.kind {
	case tWord:
		switch t.up {
		case "OR":
			return ast.PrecOr, true
		case "AND":
			return ast.PrecAnd, true
		case "IS":
			return ast.PrecIs, true
		case "BETWEEN", "IN", "LIKE", "ILIKE":
			return ast.PrecIn, true
		case "NOT":
			switch p.peekAt(1).up {
			case "BETWEEN", "IN", "LIKE", "ILIKE":
				return ast.PrecIn, true
			}
		}
	case tOp:
		if op, ok := binaryOp(t.text); ok {
			return op.Prec(), true
		}
		switch t.text {
		case "::":
			return ast.PrecCast, true
		case "[":
			return ast.PrecSubscript, true
		}
	}
	return 0, false
}

var nonAssoc = map[ast.Prec]string{
	ast.PrecIs:  "IS is non-associative",
	ast.PrecCmp: "comparison operators are non-associative",
	ast.PrecIn:  "BETWEEN, IN, LIKE and ILIKE are non-associative",
}

// infix applies the operators binding at least as tightly as min to left,
// which started at lo. The loop is what keeps a long flat expression
// (a + b + ... or a list of ORs) from nesting the recursion.
func (p *parser) infix(left ast.Expr, lo int, min ast.Prec) ast.Expr {
	last := ast.PrecLowest
	for {
		prec, ok := p.infixPrec()
		if !ok || prec < min {
			return left
		}
		t := p.peek()
		if msg, ok := nonAssoc[prec]; ok && prec == last {
			p.fail(t.start, msg)
		}
		last = prec
		switch prec {
		case ast.PrecOr, ast.PrecAnd:
			p.pos++
			op := ast.OpOr
			if prec == ast.PrecAnd {
				op = ast.OpAnd
			}
			r := p.exprPrec(prec + 1)
			left = &ast.Binary{Span: p.span(lo), Op: op, L: left, R: r}
		case ast.PrecIs:
			left = p.isExpr(left, lo)
		case ast.PrecCmp:
			left = p.comparison(left, lo)
		case ast.PrecIn:
			left = p.predicate(left, lo)
		case ast.PrecCast:
			p.pos++
			typ := p.typeName(false)
			left = &ast.Cast{Span: p.span(lo), X: left, Type: typ, Style: ast.CastColons}
		case ast.PrecSubscript:
			open := p.pos
			p.pos++
			idx := p.expr()
			if !p.acceptOp("]") {
				p.failExpected("']' to close '[' at " + posString(p.text, p.toks[open].start))
			}
			left = &ast.Subscript{Span: p.span(lo), X: left, Index: idx}
		default: // || + - * / %
			p.pos++
			r := p.exprPrec(prec + 1)
			op, _ := binaryOp(t.text)
			left = &ast.Binary{Span: p.span(lo), Op: op, L: left, R: r}
		}
	}
}

// isExpr reads IS [NOT] NULL | TRUE | FALSE | UNKNOWN | DISTINCT FROM y.
func (p *parser) isExpr(x ast.Expr, lo int) ast.Expr {
	p.pos++ // IS
	not := p.accept("NOT")
	t := p.peek()
	switch t.up {
	case "NULL":
		p.pos++
		return &ast.IsNull{Span: p.span(lo), X: x, Not: not}
	case "TRUE", "FALSE", "UNKNOWN":
		p.pos++
		var v *bool
		if t.up != "UNKNOWN" {
			b := t.up == "TRUE"
			v = &b
		}
		return &ast.IsBool{Span: p.span(lo), X: x, Not: not, Value: v}
	case "DISTINCT":
		p.pos++
		p.expect("FROM")
		y := p.exprPrec(ast.PrecIs + 1)
		op := ast.OpIsDistinctFrom
		if not {
			op = ast.OpIsNotDistinctFrom
		}
		return &ast.Binary{Span: p.span(lo), Op: op, L: x, R: y}
	}
	p.errExpected("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM")
	return nil
}

// comparison reads op y or op ANY|SOME|ALL (query).
func (p *parser) comparison(x ast.Expr, lo int) ast.Expr {
	op, _ := binaryOp(p.next().text)
	if t := p.peek(); t.is("ANY") || t.is("SOME") || t.is("ALL") {
		p.pos++
		if !p.atOp("(") || !p.isQueryParen(p.pos) {
			p.needSubquery(fmt.Sprintf("x %s %s (SELECT ...); for a list of values write x IN (...)", op, t.up))
		}
		q := p.parenQuery()
		return &ast.Quantified{Span: p.span(lo), X: x, Op: op, All: t.up == "ALL", Query: q}
	}
	y := p.exprPrec(ast.PrecCmp + 1)
	return &ast.Binary{Span: p.span(lo), Op: op, L: x, R: y}
}

// predicate reads [NOT] BETWEEN, IN, LIKE or ILIKE after x.
func (p *parser) predicate(x ast.Expr, lo int) ast.Expr {
	not := p.accept("NOT")
	t := p.next()
	switch t.up {
	case "BETWEEN":
		sym := p.accept("SYMMETRIC")
		if !sym {
			p.accept("ASYMMETRIC")
		}
		l := p.exprPrec(ast.PrecIn + 1)
		p.expect("AND")
		h := p.exprPrec(ast.PrecIn + 1)
		return &ast.Between{Span: p.span(lo), X: x, Lo: l, Hi: h, Not: not, Symmetric: sym}
	case "IN":
		if !p.atOp("(") {
			p.errExpected("'(' (a list or a subquery)")
		}
		if p.isQueryParen(p.pos) {
			q := p.parenQuery()
			return &ast.InSubquery{Span: p.span(lo), X: x, Query: q, Not: not}
		}
		open := p.pos
		p.pos++
		if p.atOp(")") {
			// x IN (): SQLite's empty list (FALSE; NOT IN () is TRUE),
			// which its corpus tests; the standard has none.
			p.pos++
			return &ast.InList{Span: p.span(lo), X: x, Not: not}
		}
		list := p.exprList()
		p.closeList(open)
		return &ast.InList{Span: p.span(lo), X: x, List: list, Not: not}
	}
	pat := p.exprPrec(ast.PrecIn + 1)
	like := &ast.Like{X: x, Pattern: pat, Not: not, ILike: t.up == "ILIKE"}
	if p.accept("ESCAPE") {
		like.Escape = p.exprPrec(ast.PrecIn + 1)
	}
	like.Span = p.span(lo)
	return like
}

// needSubquery fails where a subquery must be: at a '(' that opens
// something else, or at whatever stands instead of the '('.
func (p *parser) needSubquery(usage string) {
	if p.atOp("(") {
		p.fail(p.peek().start, "expected a subquery here: "+usage)
	}
	p.errExpected("'(' and a subquery (" + usage + ")")
}

// exprList reads e, e, ... (at least one).
func (p *parser) exprList() []ast.Expr {
	list := []ast.Expr{p.expr()}
	for p.acceptOp(",") {
		list = append(list, p.expr())
	}
	return list
}

// ---------------------------------------------------------------------
// Primaries

// primary reads a literal, a name, a call, a parenthesised expression, a
// subquery or one of the keyword forms (CASE, CAST, INTERVAL, EXISTS, ...).
func (p *parser) primary() ast.Expr {
	t := p.peek()
	lo := t.start
	switch t.kind {
	case tNumber:
		p.pos++
		return &ast.NumberLit{Span: p.span(lo), Text: t.text}
	case tString:
		p.pos++
		return &ast.StringLit{Span: p.span(lo), Value: t.text}
	case tQuoted:
		return p.nameExpr()
	case tOp:
		if t.isOp("(") {
			return p.parenExpr()
		}
	case tWord:
		next := p.peekAt(1)
		call := next.isOp("(")
		switch t.up {
		case "NULL":
			p.pos++
			return &ast.NullLit{Span: p.span(lo)}
		case "TRUE", "FALSE":
			p.pos++
			return &ast.BoolLit{Span: p.span(lo), Value: t.up == "TRUE"}
		case "CASE":
			return p.caseExpr()
		case "CAST":
			return p.castExpr(ast.CastCall)
		case "INTERVAL":
			return p.intervalLit()
		case "ARRAY":
			return p.arrayExpr()
		case "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ":
			if next.kind == tString {
				p.pos += 2
				return &ast.TypedLit{Span: p.span(lo), Type: t.up, Value: next.text}
			}
		case "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP":
			if !call {
				p.pos++
				return &ast.FuncCall{Span: p.span(lo), Name: identOf(t), NoParens: true}
			}
			p.pos++
			return p.call(identOf(t), lo)
		case "LEFT", "RIGHT":
			if call {
				p.pos++
				return p.call(identOf(t), lo)
			}
		}
		if call {
			switch t.up {
			case "TRY_CAST":
				return p.castExpr(ast.CastTry)
			case "EXISTS":
				p.pos++
				if !p.isQueryParen(p.pos) {
					p.needSubquery("EXISTS (SELECT ...)")
				}
				q := p.parenQuery()
				return &ast.Exists{Span: p.span(lo), Query: q}
			case "ROW":
				p.pos++
				open := p.pos
				p.pos++
				var items []ast.Expr
				if !p.atOp(")") {
					items = p.exprList()
				}
				p.closeList(open)
				return &ast.Tuple{Span: p.span(lo), Exprs: items, Row: true}
			case "EXTRACT":
				return p.extract()
			case "SUBSTRING":
				return p.substring()
			case "TRIM":
				return p.trim()
			case "POSITION":
				return p.position()
			}
		}
		if t.isName() {
			return p.nameExpr()
		}
	}
	p.errExpected("an expression")
	return nil
}

// nameExpr reads a column reference a[.b[.c]] or a function call f(...).
func (p *parser) nameExpr() ast.Expr {
	lo := p.peek().start
	parts := []ast.Ident{p.ident("a name")}
	for p.atOp(".") {
		p.pos++
		parts = append(parts, p.ident("a name"))
	}
	if p.atOp("(") {
		if len(parts) > 1 {
			p.fail(lo, fmt.Sprintf("qualified function names (%s) are not supported", (&ast.ColumnRef{Parts: parts}).String()))
		}
		return p.call(parts[0], lo)
	}
	return &ast.ColumnRef{Span: p.span(lo), Parts: parts}
}

// parenExpr reads (query), (e) or the tuple (a, b, ...).
func (p *parser) parenExpr() ast.Expr {
	open := p.pos
	lo := p.peek().start
	if p.isQueryParen(open) {
		q := p.parenQuery()
		return &ast.Subquery{Span: p.span(lo), Query: q}
	}
	p.pos++
	e := p.expr()
	if !p.atOp(",") {
		p.closeParen(open)
		return e
	}
	items := []ast.Expr{e}
	for p.acceptOp(",") {
		items = append(items, p.expr())
	}
	p.closeList(open)
	return &ast.Tuple{Span: p.span(lo), Exprs: items}
}

// parenQuery reads (query) at the cursor.
func (p *parser) parenQuery() *ast.Query {
	open := p.pos
	p.expectOp("(")
	q := p.query()
	p.closeParen(open)
	return q
}

func (p *parser) caseExpr() ast.Expr {
	lo := p.peek().start
	p.pos++ // CASE
	c := &ast.Case{}
	if !p.at("WHEN") {
		c.Operand = p.expr()
	}
	for p.at("WHEN") {
		wlo := p.peek().start
		p.pos++
		cond := p.expr()
		p.expect("THEN")
		res := p.expr()
		c.Whens = append(c.Whens, &ast.When{Span: p.span(wlo), Cond: cond, Result: res})
	}
	if len(c.Whens) == 0 {
		p.errExpected("WHEN")
	}
	if p.accept("ELSE") {
		c.Else = p.expr()
	}
	if !p.accept("END") {
		p.failExpected("END to close CASE at " + posString(p.text, lo))
	}
	c.Span = p.span(lo)
	return c
}

// castExpr reads CAST(x AS type) or TRY_CAST(x AS type).
func (p *parser) castExpr(style ast.CastStyle) ast.Expr {
	lo := p.peek().start
	p.pos++
	open := p.pos
	p.expectOp("(")
	x := p.expr()
	p.expect("AS")
	typ := p.typeName(true)
	p.closeParen(open)
	return &ast.Cast{Span: p.span(lo), X: x, Type: typ, Style: style}
}

func (p *parser) arrayExpr() ast.Expr {
	lo := p.peek().start
	p.pos++ // ARRAY
	open := p.pos
	if !p.acceptOp("[") {
		p.errExpected("'[' (ARRAY[a, b, ...])")
	}
	var elems []ast.Expr
	if !p.atOp("]") {
		elems = p.exprList()
	}
	if !p.acceptOp("]") {
		p.failExpected("']' to close '[' at " + posString(p.text, p.toks[open].start))
	}
	return &ast.Array{Span: p.span(lo), Elems: elems}
}

// extractFields are the fields EXTRACT accepts; the binder decides which
// it computes.
var extractFields = map[string]bool{
	"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "DOW": true, "DOY": true,
	"HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true, "MICROSECOND": true, "NANOSECOND": true,
	"EPOCH": true, "ISODOW": true, "ISOYEAR": true, "DECADE": true, "CENTURY": true, "MILLENNIUM": true,
	"DAYOFWEEK": true, "DAYOFYEAR": true, "DAYOFMONTH": true, "TIMEZONE": true, "TIMEZONE_HOUR": true,
	"TIMEZONE_MINUTE": true,
}

// extract reads EXTRACT(field FROM x); the field may be quoted as a string.
func (p *parser) extract() ast.Expr {
	lo := p.peek().start
	p.pos++
	open := p.pos
	p.pos++ // (
	f := p.peek()
	field := f.upper()
	if f.kind == tString {
		field = strings.ToUpper(f.text)
	}
	if (f.kind != tWord && f.kind != tString) || !extractFields[field] {
		p.errExpected("a field (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, EPOCH, ...)")
	}
	p.pos++
	p.expect("FROM")
	x := p.expr()
	p.closeParen(open)
	return &ast.Extract{Span: p.span(lo), Field: field, X: x}
}

// plainCallAhead reports whether the call whose '(' is at the cursor
// starts as only a plain call can: f(), f(*), f(DISTINCT ...), f(ALL ...).
func (p *parser) plainCallAhead() bool {
	t := p.peekAt(1)
	return t.isOp(")") || t.isOp("*") || t.is("DISTINCT") || t.is("ALL")
}

// substring reads SUBSTRING(x FROM a [FOR b]) or the plain call
// SUBSTRING(x, a, b).
func (p *parser) substring() ast.Expr {
	t := p.next()
	lo := t.start
	name := identOf(t)
	if p.plainCallAhead() {
		return p.call(name, lo)
	}
	open := p.pos
	p.pos++
	x := p.expr()
	if !p.at("FROM") && !p.at("FOR") {
		return p.callRest(&ast.FuncCall{Name: name}, lo, open, x)
	}
	s := &ast.Substring{X: x}
	if p.accept("FROM") {
		s.From = p.expr()
	} else {
		// SUBSTRING(x FOR n) starts at the first character.
		s.From = &ast.NumberLit{Span: ast.Span{Lo: p.peek().start, Hi: p.peek().start}, Text: "1"}
	}
	if p.accept("FOR") {
		s.For = p.expr()
	}
	p.closeParen(open)
	s.Span = p.span(lo)
	return s
}

// trim reads TRIM([BOTH|LEADING|TRAILING] [chars] FROM x), TRIM(x) or the
// plain call TRIM(x, chars).
func (p *parser) trim() ast.Expr {
	t := p.next()
	lo := t.start
	name := identOf(t)
	if p.plainCallAhead() && !p.peekAt(1).is("ALL") {
		return p.call(name, lo)
	}
	open := p.pos
	p.pos++
	p.accept("ALL") // TRIM(ALL x) is TRIM(x), as f(ALL x) is f(x)
	tr := &ast.Trim{}
	switch {
	case p.accept("BOTH"):
		tr.Explicit = true
	case p.accept("LEADING"):
		tr.Where = ast.TrimLeading
	case p.accept("TRAILING"):
		tr.Where = ast.TrimTrailing
	}
	where := tr.Where != ast.TrimBoth || tr.Explicit
	if p.accept("FROM") {
		tr.X = p.expr()
	} else {
		e := p.expr()
		switch {
		case p.accept("FROM"):
			tr.Chars, tr.X = e, p.expr()
		case where || p.atOp(")"):
			tr.X = e
		default:
			return p.callRest(&ast.FuncCall{Name: name}, lo, open, e)
		}
	}
	p.closeParen(open)
	tr.Span = p.span(lo)
	return tr
}

// position reads POSITION(sub IN x) or a plain call.
func (p *parser) position() ast.Expr {
	t := p.next()
	lo := t.start
	name := identOf(t)
	if p.plainCallAhead() {
		return p.call(name, lo)
	}
	open := p.pos
	p.pos++
	elo := p.peek().start
	// sub binds tighter than IN, or IN would read as the predicate.
	sub := p.exprPrec(ast.PrecIn + 1)
	if !p.accept("IN") {
		first := p.infix(sub, elo, ast.PrecLowest)
		return p.callRest(&ast.FuncCall{Name: name}, lo, open, first)
	}
	x := p.expr()
	p.closeParen(open)
	return &ast.Position{Span: p.span(lo), Sub: sub, X: x}
}

// ---------------------------------------------------------------------
// Function calls and windows

// call reads the arguments of name(...) with the cursor at '(', then
// FILTER, IGNORE NULLS and OVER.
func (p *parser) call(name ast.Ident, lo int) ast.Expr {
	open := p.pos
	p.pos++
	fc := &ast.FuncCall{Name: name}
	switch {
	case p.atOp(")"):
	case p.atOp("*"):
		p.pos++
		fc.Star = true
	default:
		if p.accept("DISTINCT") {
			fc.Distinct = true
		} else {
			p.accept("ALL")
		}
		return p.callRest(fc, lo, open, nil)
	}
	p.closeParen(open)
	return p.callTail(fc, lo)
}

// callRest reads the rest of a call's arguments (after first, when the
// caller has read it), an ORDER BY inside the call and the ')'.
func (p *parser) callRest(fc *ast.FuncCall, lo, open int, first ast.Expr) ast.Expr {
	if first == nil {
		first = p.expr()
	}
	fc.Args = append(fc.Args, first)
	for p.acceptOp(",") {
		fc.Args = append(fc.Args, p.expr())
	}
	if p.at("ORDER") {
		fc.OrderBy = p.orderBy()
	}
	p.nullTreatment(fc)
	p.closeList(open)
	return p.callTail(fc, lo)
}

// nullTreatment reads IGNORE NULLS or RESPECT NULLS (the default).
func (p *parser) nullTreatment(fc *ast.FuncCall) {
	if (p.at("IGNORE") || p.at("RESPECT")) && p.peekAt(1).is("NULLS") {
		fc.IgnoreNulls = p.next().up == "IGNORE"
		p.pos++
	}
}

func (p *parser) callTail(fc *ast.FuncCall, lo int) ast.Expr {
	if p.at("FILTER") && p.peekAt(1).isOp("(") {
		p.pos++
		open := p.pos
		p.pos++
		p.expect("WHERE")
		fc.Filter = p.expr()
		p.closeParen(open)
	}
	p.nullTreatment(fc)
	if p.at("OVER") && (p.peekAt(1).isOp("(") || p.peekAt(1).isName()) {
		p.pos++
		fc.Over = p.over()
	}
	fc.Span = p.span(lo)
	return fc
}

// over reads the window after OVER: a name or (spec).
func (p *parser) over() *ast.WindowSpec {
	lo := p.peek().start
	if !p.atOp("(") {
		name := p.ident("a window name or '('")
		return &ast.WindowSpec{Span: p.span(lo), Base: &name}
	}
	open := p.pos
	p.pos++
	w := p.windowSpec()
	p.closeParen(open)
	w.Span = p.span(lo)
	return w
}

// windowSpec reads [base] [PARTITION BY ...] [ORDER BY ...] [frame].
func (p *parser) windowSpec() *ast.WindowSpec {
	lo := p.peek().start
	w := &ast.WindowSpec{}
	if t := p.peek(); t.isName() && !(t.kind == tWord && frameStart[t.up]) {
		name := p.ident("a window name")
		w.Base = &name
	}
	if p.at("PARTITION") {
		p.pos++
		p.expect("BY")
		w.PartitionBy = p.exprList()
	}
	if p.at("ORDER") {
		w.OrderBy = p.orderBy()
	}
	if t := p.peek(); t.kind == tWord && frameUnits[t.up] {
		w.Frame = p.frame()
	}
	w.Span = p.span(lo)
	return w
}

// frameStart are the words that start a window specification's clauses
// (so are no base window name).
var frameStart = map[string]bool{"PARTITION": true, "ORDER": true, "ROWS": true, "RANGE": true, "GROUPS": true}

var frameUnits = map[string]bool{"ROWS": true, "RANGE": true, "GROUPS": true}

func (p *parser) frame() *ast.Frame {
	lo := p.peek().start
	f := &ast.Frame{}
	switch p.next().up {
	case "RANGE":
		f.Unit = ast.FrameRange
	case "GROUPS":
		f.Unit = ast.FrameGroups
	}
	if p.accept("BETWEEN") {
		f.Start = p.frameBound()
		p.expect("AND")
		f.End = p.frameBound()
	} else {
		f.Start = p.frameBound()
	}
	f.Span = p.span(lo)
	return f
}

func (p *parser) frameBound() *ast.FrameBound {
	lo := p.peek().start
	b := &ast.FrameBound{}
	switch {
	case p.at("UNBOUNDED"):
		p.pos++
		switch {
		case p.accept("PRECEDING"):
			b.Kind = ast.UnboundedPreceding
		case p.accept("FOLLOWING"):
			b.Kind = ast.UnboundedFollowing
		default:
			p.errExpected("PRECEDING or FOLLOWING")
		}
	case p.at("CURRENT") && p.peekAt(1).is("ROW"):
		p.pos += 2
		b.Kind = ast.CurrentRow
	default:
		b.Offset = p.expr()
		switch {
		case p.accept("PRECEDING"):
			b.Kind = ast.Preceding
		case p.accept("FOLLOWING"):
			b.Kind = ast.Following
		default:
			p.errExpected("PRECEDING or FOLLOWING")
		}
	}
	b.Span = p.span(lo)
	return b
}

// orderBy reads ORDER BY item, ...
func (p *parser) orderBy() []*ast.OrderItem {
	p.pos++ // ORDER
	p.expect("BY")
	items := []*ast.OrderItem{p.orderItem()}
	for p.acceptOp(",") {
		items = append(items, p.orderItem())
	}
	return items
}

// orderItem reads expr [ASC|DESC] [NULLS FIRST|LAST].
func (p *parser) orderItem() *ast.OrderItem {
	lo := p.peek().start
	o := &ast.OrderItem{Expr: p.expr()}
	if p.accept("DESC") {
		o.Desc = true
	} else {
		p.accept("ASC")
	}
	if p.at("NULLS") {
		p.pos++
		switch {
		case p.accept("FIRST"):
			o.Nulls = ast.NullsFirst
		case p.accept("LAST"):
			o.Nulls = ast.NullsLast
		default:
			p.errExpected("FIRST or LAST")
		}
	}
	o.Span = p.span(lo)
	return o
}
