// Package sql is clink's SQL front end: the statement splitter (Split,
// Complete), the parser from text to the syntax tree of package sql/ast
// (Parse, ParseExpr), and the meaning of its literal types and intervals
// (TypeOf, ParseType, IntervalOf). The dialect is Flink's SQL with
// PostgreSQL's expression grammar: standard quoting ('...' strings,
// "..." or `...` names), PostgreSQL's operator precedence, Flink's DDL,
// window table functions and statement sets.
package sql

import (
	"fmt"
	"strings"

	"github.com/clink-sql/clink/sql/ast"
)

// The parser is hand-written recursive descent over the token list, with
// precedence climbing for expressions (expr.go). Its files:
//
//	lexer.go      tokens
//	parser.go     this cursor, errors, entry points
//	expr.go       expressions, function calls, windows
//	interval.go   INTERVAL literals and their values
//	query.go      queries: WITH, SELECT, set operations, FROM, ORDER BY, LIMIT
//	ddl.go        CREATE, DROP, INSERT, statement sets
//	statement.go  statement dispatch, EXPLAIN, SET, RESET, SHOW, DESCRIBE
//	types.go      type names and their Arrow types
//
// A syntax error unwinds the descent by panicking with a bailout, which
// the entry points recover into the *Error they return (as go/parser
// does); any other panic is a bug in the parser, reported as an internal
// error rather than taking the session down.

// maxDepth bounds the nesting of expressions, queries, joins and types:
// deep beyond any real statement, shallow enough that the recursion stays
// far from Go's stack limit.
const maxDepth = 1000

type parser struct {
	text  string
	toks  []token // ends with a tEOF token
	pos   int
	depth int
	// match is the index of the ')' closing each '(' (-1: none, or not a
	// '('); parenKind caches isQueryParen (0 unknown, 1 query, 2 not).
	match     []int32
	parenKind []int8
}

// bailout carries a syntax error up the descent to the entry point.
type bailout struct{ err *Error }

// run parses text with f behind the recover boundary.
func run[T any](text string, f func(p *parser) T) (res T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			res = zero
			if b, ok := r.(bailout); ok {
				err = b.err
				return
			}
			err = &Error{Msg: fmt.Sprintf("internal error in the SQL parser: %v", r)}
		}
	}()
	p, perr := newParser(text)
	if perr != nil {
		return res, perr
	}
	return f(p), nil
}

// Parse parses one statement; a trailing ';' is allowed. Every error is an
// *Error positioned in text.
func Parse(text string) (ast.Statement, error) {
	return run(text, func(p *parser) ast.Statement {
		if p.peek().kind == tEOF {
			panic(bailout{&Error{Msg: "empty statement"}})
		}
		st := p.statement()
		p.expectEnd()
		return st
	})
}

// ParseExpr parses one scalar expression: the text of a computed column
// or a WATERMARK, which the catalog stores and re-reads.
func ParseExpr(text string) (ast.Expr, error) {
	return run(text, func(p *parser) ast.Expr {
		if p.peek().kind == tEOF {
			panic(bailout{&Error{Msg: "empty expression"}})
		}
		e := p.expr()
		p.expectEnd()
		return e
	})
}

func newParser(text string) (*parser, *Error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	// Trailing ';' are no part of the statement; the end of the statement
	// is where its last token ends, so "unexpected end" points there.
	n := len(toks) - 1
	for n > 0 && toks[n-1].isOp(";") {
		n--
	}
	eof := 0
	if n > 0 {
		eof = toks[n-1].end
	}
	toks = append(toks[:n], token{kind: tEOF, start: eof, end: eof})
	match := make([]int32, len(toks))
	var stack []int32
	for i := range toks {
		match[i] = -1
		switch {
		case toks[i].isOp("("):
			stack = append(stack, int32(i))
		case toks[i].isOp(")") && len(stack) > 0:
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			match[open] = int32(i)
		}
	}
	return &parser{text: text, toks: toks, match: match}, nil
}

// ---------------------------------------------------------------------
// Cursor

func (p *parser) peek() *token { return &p.toks[p.pos] }

func (p *parser) peekAt(k int) *token {
	return &p.toks[min(p.pos+k, len(p.toks)-1)]
}

func (p *parser) next() *token {
	t := &p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

// prevEnd is the end of the last token consumed: where a node ends.
func (p *parser) prevEnd() int {
	if p.pos == 0 {
		return 0
	}
	return p.toks[p.pos-1].end
}

// span is the span from lo to the end of the last token consumed.
func (p *parser) span(lo int) ast.Span { return ast.Span{Lo: lo, Hi: p.prevEnd()} }

// is reports whether t is the keyword kw (upper-case; a word of
// keywords.go, which TestGrammarWordsAreKeywords checks).
func (t *token) is(kw string) bool { return t.kind == tWord && t.up == kw }

// upper is a word upper-cased, keyword or not.
func (t *token) upper() string {
	if t.up != "" || t.kind != tWord {
		return t.up
	}
	return strings.ToUpper(t.text)
}

func (t *token) isOp(op string) bool  { return t.kind == tOp && t.text == op }
func (p *parser) at(kw string) bool   { return p.toks[p.pos].is(kw) }
func (p *parser) atOp(op string) bool { return p.toks[p.pos].isOp(op) }

// isName reports whether t can be a name: a quoted identifier, or a bare
// word that is not reserved.
func (t *token) isName() bool {
	return t.kind == tQuoted || t.kind == tWord && !ast.IsReserved(t.up)
}

func (p *parser) accept(kw string) bool {
	if p.at(kw) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) acceptOp(op string) bool {
	if p.atOp(op) {
		p.pos++
		return true
	}
	return false
}

// expect consumes the keyword kw or fails naming it.
func (p *parser) expect(kw string) {
	if !p.accept(kw) {
		p.errExpected(kw)
	}
}

func (p *parser) expectOp(op string) {
	if !p.acceptOp(op) {
		p.errExpected("'" + op + "'")
	}
}

// ident reads a name: a quoted identifier or a bare word that is not
// reserved. what says what the name is for the error ("a column name").
func (p *parser) ident(what string) ast.Ident {
	t := p.peek()
	if !t.isName() {
		if t.kind == tWord {
			p.fail(t.start, fmt.Sprintf("expected %s%s, found %s (a reserved word: write %s to use it as a name)",
				what, p.afterPrev(), t.up, `"`+strings.ToLower(t.text)+`"`))
		}
		p.errExpected(what)
	}
	p.pos++
	return identOf(t)
}

func identOf(t *token) ast.Ident {
	return ast.Ident{Span: ast.Span{Lo: t.start, Hi: t.end}, Name: t.text, Quoted: t.kind == tQuoted}
}

// identList reads (a, b, ...) at the cursor.
func (p *parser) identList(what string) []ast.Ident {
	open := p.pos
	p.expectOp("(")
	var ids []ast.Ident
	for {
		ids = append(ids, p.ident(what))
		if !p.acceptOp(",") {
			break
		}
	}
	p.closeList(open)
	return ids
}

// objectName reads name[.name...].
func (p *parser) objectName(what string) ast.ObjectName {
	lo := p.peek().start
	parts := []ast.Ident{p.ident(what)}
	for p.atOp(".") {
		p.pos++
		parts = append(parts, p.ident("a name"))
	}
	return ast.ObjectName{Span: p.span(lo), Parts: parts}
}

// ---------------------------------------------------------------------
// Nesting

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.peek().start, fmt.Sprintf("expression nested too deeply (more than %d levels)", maxDepth))
	}
}

func (p *parser) leave() { p.depth-- }

// isQueryParen reports whether the '(' at token i opens a query (a
// subquery, a derived table, a parenthesised set operand) rather than an
// expression or a parenthesised join. The innermost of a run of '(' holds
// a query when SELECT, WITH or VALUES follows it; an outer one when the
// group inside it is a query followed by ')' or by a set operator,
// ORDER BY, LIMIT, OFFSET or FETCH: ((SELECT 1) UNION (SELECT 2)) is a
// query, ((SELECT 1) + 1) an expression. The run is walked once, without
// recursion, and cached.
func (p *parser) isQueryParen(i int) bool {
	if p.parenKind == nil {
		p.parenKind = make([]int8, len(p.toks))
	}
	if k := p.parenKind[i]; k != 0 {
		return k == 1
	}
	j := i
	for p.toks[j+1].isOp("(") {
		j++
	}
	first := &p.toks[j+1]
	q := first.is("SELECT") || first.is("WITH") || first.is("VALUES")
	for k := j; k >= i; k-- {
		if k < j && q {
			m := p.match[k+1]
			q = m >= 0 && followsQuery(&p.toks[m+1])
		}
		p.parenKind[k] = 2
		if q {
			p.parenKind[k] = 1
		}
	}
	return q
}

func followsQuery(t *token) bool {
	if t.isOp(")") {
		return true
	}
	switch t.up {
	case "UNION", "EXCEPT", "INTERSECT", "ORDER", "LIMIT", "OFFSET", "FETCH":
		return t.kind == tWord
	}
	return false
}

// ---------------------------------------------------------------------
// Errors

func (p *parser) fail(off int, msg string) {
	panic(bailout{ErrorAt(p.text, off, msg)})
}

// errExpected fails at the cursor: "expected <what> after <previous
// token>, found <token>", or at the end of the text "unexpected end of
// statement: expected <what> after <previous token>".
func (p *parser) errExpected(what string) {
	p.failExpected(what + p.afterPrev())
}

// failExpected is errExpected with the context written by the caller.
func (p *parser) failExpected(what string) {
	t := p.peek()
	if t.kind == tEOF {
		p.fail(t.start, "unexpected end of statement: expected "+what)
	}
	p.fail(t.start, "expected "+what+", found "+describe(t))
}

func (p *parser) afterPrev() string {
	if p.pos == 0 {
		return ""
	}
	return " after " + describe(&p.toks[p.pos-1])
}

// closeParen consumes the ')' that closes the '(' at token open.
func (p *parser) closeParen(open int) {
	if !p.acceptOp(")") {
		p.failExpected("')' to close '(' at " + posString(p.text, p.toks[open].start))
	}
}

// closeList consumes the ')' that ends a comma-separated list opened at
// token open.
func (p *parser) closeList(open int) {
	if p.acceptOp(")") {
		return
	}
	if p.peek().kind == tEOF {
		p.failExpected("')' to close '(' at " + posString(p.text, p.toks[open].start))
	}
	p.errExpected("',' or ')'")
}

// expectEnd fails unless the statement is over.
func (p *parser) expectEnd() {
	t := p.peek()
	switch {
	case t.kind == tEOF:
	case t.isOp(";"):
		p.fail(t.start, "only one statement is allowed here, found ';' before the end")
	case t.isOp(")"):
		p.fail(t.start, "unexpected ')': no '(' is open here")
	default:
		p.errExpected("end of statement")
	}
}

// describe names a token for an error message: keywords upper-case,
// names and strings quoted, operators in single quotes.
func describe(t *token) string {
	switch t.kind {
	case tEOF:
		return "end of statement"
	case tWord:
		if isKeyword(t.up) {
			return t.up
		}
		return `"` + t.text + `"`
	case tQuoted:
		return `"` + strings.ReplaceAll(t.text, `"`, `""`) + `"`
	case tString:
		v := t.text
		if r := []rune(v); len(r) > 40 {
			v = string(r[:37]) + "..."
		}
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case tNumber:
		return t.text
	}
	return "'" + t.text + "'"
}
