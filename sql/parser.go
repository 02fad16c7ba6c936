package sql

import (
	"fmt"
	"strings"
)

// parser is a cursor over the tokens of one statement, shared by the
// statement, DDL and type grammars of the dialect layer. Every error it
// makes carries the position in text, the user's statement.
type parser struct {
	text  string
	toks  []token
	match []int // partner of each parenthesis token (see matchParens)
	pos   int
	end   int // exclusive bound of the tokens this parser may read

	// pendingGT is the unread half of a ">>" that closed a nested type.
	pendingGT bool
}

func newParser(text string) (*parser, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	match, err := matchParens(text, toks)
	if err != nil {
		return nil, err
	}
	return &parser{text: text, toks: toks, match: match, end: len(toks)}, nil
}

func (p *parser) atEnd() bool { return p.pos >= p.end }

// peek returns the current token; past the end it is an empty operator at
// the end of the text, so callers can report "at end of statement".
func (p *parser) peek() token { return p.peekAt(0) }

func (p *parser) peekAt(k int) token {
	if p.pos+k >= p.end {
		off := len(p.text)
		if p.end < len(p.toks) {
			off = p.toks[p.end].start
		}
		return token{kind: tkOp, start: off, end: off}
	}
	return p.toks[p.pos+k]
}

func (p *parser) next() token {
	t := p.peek()
	if !p.atEnd() {
		p.pos++
	}
	return t
}

// accept consumes the bare word kw if it is next.
func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.pos++
		return true
	}
	return false
}

// acceptOp consumes the operator op if it is next.
func (p *parser) acceptOp(op string) bool {
	if p.peek().isOp(op) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(kw string, context string) error {
	if p.accept(kw) {
		return nil
	}
	return p.errExpected(kw, context)
}

func (p *parser) expectOp(op string, context string) error {
	if p.acceptOp(op) {
		return nil
	}
	return p.errExpected("'"+op+"'", context)
}

// errExpected reports what was expected where, and what was found.
func (p *parser) errExpected(what, context string) *Error {
	t := p.peek()
	return p.errAt(t.start, fmt.Sprintf("expected %s %s, found %s", what, context, describe(t)))
}

func (p *parser) errAt(off int, msg string) *Error { return errAt(p.text, off, msg) }

// describe names a token for an error message.
func describe(t token) string {
	if t.text == "" {
		return "end of statement"
	}
	return fmt.Sprintf("%q", t.text)
}

// ident reads an identifier (bare or backticked); bare keywords are allowed
// where the grammar is unambiguous.
func (p *parser) ident(context string) (string, error) {
	t := p.peek()
	if t.kind == tkWord || t.kind == tkQuoted {
		p.pos++
		return t.name(), nil
	}
	return "", p.errExpected("a name", context)
}

// qualifiedName reads name[.name...] and joins the parts with '.'.
func (p *parser) qualifiedName(context string) (string, error) {
	first, err := p.ident(context)
	if err != nil {
		return "", err
	}
	parts := []string{first}
	for p.peek().isOp(".") {
		p.pos++
		n, err := p.ident(context)
		if err != nil {
			return "", err
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, "."), nil
}

// expectEnd fails unless every token was consumed.
func (p *parser) expectEnd(context string) error {
	if p.atEnd() {
		return nil
	}
	t := p.peek()
	return p.errAt(t.start, fmt.Sprintf("unexpected %s after %s", describe(t), context))
}

// rawUntil returns the original text of tokens from the cursor up to (not
// including) the first token at paren depth 0 for which stop is true, and
// advances past them. The text is sliced from the statement, so spacing and
// quoting stay as the user wrote them.
func (p *parser) rawUntil(stop func(token) bool) (string, int, int) {
	lo := p.pos
	for !p.atEnd() {
		t := p.peek()
		if stop(t) {
			break
		}
		if t.isOp("(") && p.match[p.pos] >= 0 {
			p.pos = p.match[p.pos] + 1
			continue
		}
		p.pos++
	}
	if p.pos == lo {
		return "", lo, lo
	}
	return p.text[p.toks[lo].start:p.toks[p.pos-1].end], lo, p.pos
}

// closeOf returns the index of the ')' matching the '(' at index i.
func (p *parser) closeOf(i int) int { return p.match[i] }
