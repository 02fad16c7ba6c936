package sql

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clink-sql/clink/sql/ast"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tWord           // bare word: a keyword or an unquoted identifier
	tQuoted         // "identifier" or `identifier`
	tString         // 'string' or E'string'
	tNumber         // 12, 1.5, 1e3, .5, 1.
	tOp             // punctuation and operators
)

// token is one lexeme with its byte span in the statement text: every
// error points at what the user typed.
type token struct {
	kind       tokKind
	start, end int
	// text is a word as written, a quoted identifier's or string's
	// decoded value, a number or an operator as written.
	text string
	// up is a word's keyword, upper-case ("" for a word that is none:
	// upper() spells any word upper-case).
	up string
}

// twoCharOps are the operators of two characters.
var twoCharOps = [...]string{"::", "||", "<>", "!=", "<=", ">=", "=>", "->"}

// lex splits text into tokens, dropping whitespace and comments, and ends
// the list with a tEOF token. The quoting rules are the statement
// splitter's (split.go): a statement Split delimits lexes the same here.
//
//	'it''s'        a string; a backslash is an ordinary character
//	E'a\tb'        a string with C escapes (\n \t \\ \' \xHH \uXXXX ...)
//	"x", `x`       identifiers; a doubled quote stands for itself
//	-- ..., /* */  comments (block comments do not nest)
func lex(text string) ([]token, *Error) {
	// About a token per four bytes of SQL; growing by doubling (append
	// grows a long slice by a quarter) keeps a dense 400 KB expression from
	// being copied a dozen times.
	toks := make([]token, 0, len(text)/4+16)
	push := func(t token) {
		if len(toks) == cap(toks) {
			grown := make([]token, len(toks), 2*cap(toks))
			copy(grown, toks)
			toks = grown
		}
		toks = append(toks, t)
	}
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return nil, ErrorAt(text, i, "unterminated comment: /* has no */")
			}
			i += end + 4
		case c == '\'':
			j, val, err := lexString(text, i)
			if err != nil {
				return nil, err
			}
			push(token{kind: tString, start: i, end: j, text: val})
			i = j
		case (c == 'e' || c == 'E') && i+1 < len(text) && text[i+1] == '\'' && (i == 0 || !ast.IsWordByte(text[i-1])):
			// E'...', unless the E ends a word or number (as the splitter
			// sees it too)
			j, val, err := lexEString(text, i)
			if err != nil {
				return nil, err
			}
			push(token{kind: tString, start: i, end: j, text: val})
			i = j
		case (c == 'x' || c == 'X' || c == 'b' || c == 'B') && i+1 < len(text) && text[i+1] == '\'' && (i == 0 || !ast.IsWordByte(text[i-1])):
			return nil, ErrorAt(text, i, fmt.Sprintf("binary string literals (%c'...') are not supported", c))
		case c == '"' || c == '`':
			j, name, err := lexQuoted(text, i)
			if err != nil {
				return nil, err
			}
			push(token{kind: tQuoted, start: i, end: j, text: name})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(text) && isDigit(text[i+1]):
			j := scanNumber(text, i)
			push(token{kind: tNumber, start: i, end: j, text: text[i:j]})
			i = j
		case ast.IsWordStart(c):
			j := i + 1
			for j < len(text) && ast.IsWordByte(text[j]) {
				j++
			}
			w := text[i:j]
			push(token{kind: tWord, start: i, end: j, text: w, up: keywordOf(w)})
			i = j
		case c == '?':
			return nil, ErrorAt(text, i, "placeholders (?) are not supported: write the value")
		case c == '$' && i+1 < len(text) && isDigit(text[i+1]):
			return nil, ErrorAt(text, i, "placeholders ($1) are not supported: write the value")
		default:
			op := ""
			if i+1 < len(text) {
				for _, o := range twoCharOps {
					if text[i] == o[0] && text[i+1] == o[1] {
						op = o
						break
					}
				}
			}
			if op == "" {
				if !strings.ContainsRune("()[],.;=<>+-*/%:^&|~!", rune(c)) {
					r, _ := utf8.DecodeRuneInString(text[i:])
					return nil, ErrorAt(text, i, fmt.Sprintf("unexpected character %q", r))
				}
				op = text[i : i+1]
			}
			push(token{kind: tOp, start: i, end: i + len(op), text: op})
			i += len(op)
		}
	}
	push(token{kind: tEOF, start: len(text), end: len(text)})
	return toks, nil
}

// lexString reads '...' starting at the quote at i; it returns the offset
// past the closing quote and the value (” is one quote).
func lexString(text string, i int) (int, string, *Error) {
	j := i + 1
	var b strings.Builder
	seg := j
	for {
		k := strings.IndexByte(text[j:], '\'')
		if k < 0 {
			return 0, "", ErrorAt(text, i, "unterminated string literal: ' has no closing '")
		}
		j += k
		if j+1 < len(text) && text[j+1] == '\'' {
			b.WriteString(text[seg : j+1])
			j += 2
			seg = j
			continue
		}
		if b.Len() == 0 {
			return j + 1, text[seg:j], nil
		}
		b.WriteString(text[seg:j])
		return j + 1, b.String(), nil
	}
}

// lexEString reads E'...' starting at the E at i, decoding C escapes as
// PostgreSQL does.
func lexEString(text string, i int) (int, string, *Error) {
	var b strings.Builder
	j := i + 2
	for {
		if j >= len(text) {
			return 0, "", ErrorAt(text, i, "unterminated string literal: E' has no closing '")
		}
		c := text[j]
		switch {
		case c == '\'':
			if j+1 < len(text) && text[j+1] == '\'' {
				b.WriteByte('\'')
				j += 2
				continue
			}
			return j + 1, b.String(), nil
		case c == '\\' && j+1 < len(text):
			n, err := decodeEscape(text, j, &b)
			if err != nil {
				return 0, "", err
			}
			j += n
		default:
			b.WriteByte(c)
			j++
		}
	}
}

var simpleEscapes = map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// decodeEscape decodes the backslash escape at text[j] into b and returns
// its length.
func decodeEscape(text string, j int, b *strings.Builder) (int, *Error) {
	c := text[j+1]
	if r, ok := simpleEscapes[c]; ok {
		b.WriteByte(r)
		return 2, nil
	}
	digits := func(start, max int, ok func(byte) bool) string {
		k := start
		for k < len(text) && k-start < max && ok(text[k]) {
			k++
		}
		return text[start:k]
	}
	switch {
	case c >= '0' && c <= '7':
		d := digits(j+1, 3, func(c byte) bool { return c >= '0' && c <= '7' })
		v, _ := strconv.ParseUint(d, 8, 16)
		b.WriteByte(byte(v))
		return 1 + len(d), nil
	case c == 'x':
		d := digits(j+2, 2, isHex)
		if d == "" {
			b.WriteByte('x')
			return 2, nil
		}
		v, _ := strconv.ParseUint(d, 16, 8)
		b.WriteByte(byte(v))
		return 2 + len(d), nil
	case c == 'u' || c == 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		d := digits(j+2, n, isHex)
		if len(d) != n {
			return 0, ErrorAt(text, j, fmt.Sprintf("invalid Unicode escape: \\%c needs %d hex digits", c, n))
		}
		v, _ := strconv.ParseUint(d, 16, 32)
		if v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
			return 0, ErrorAt(text, j, fmt.Sprintf("invalid Unicode escape \\%c%s", c, d))
		}
		b.WriteRune(rune(v))
		return 2 + n, nil
	}
	b.WriteByte(c) // \\ \' \" and any other character stand for themselves
	return 2, nil
}

// lexQuoted reads "..." or `...` starting at the quote at i.
func lexQuoted(text string, i int) (int, string, *Error) {
	q := text[i]
	j := i + 1
	var b strings.Builder
	for {
		k := strings.IndexByte(text[j:], q)
		if k < 0 {
			return 0, "", ErrorAt(text, i, fmt.Sprintf("unterminated quoted identifier: %c has no closing %c", q, q))
		}
		b.WriteString(text[j : j+k])
		j += k
		if j+1 < len(text) && text[j+1] == q {
			b.WriteByte(q)
			j += 2
			continue
		}
		if b.Len() == 0 {
			return 0, "", ErrorAt(text, i, "zero-length quoted identifier")
		}
		return j + 1, b.String(), nil
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// scanNumber returns the end of the number starting at i: digits, an
// optional fraction (1.5, 1., .5) and an optional exponent (1e3, 2.5E-2).
func scanNumber(text string, i int) int {
	j := i
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	if j < len(text) && text[j] == '.' {
		j++
		for j < len(text) && isDigit(text[j]) {
			j++
		}
	}
	if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
		k := j + 1
		if k < len(text) && (text[k] == '+' || text[k] == '-') {
			k++
		}
		if k < len(text) && isDigit(text[k]) {
			j = k
			for j < len(text) && isDigit(text[j]) {
				j++
			}
		}
	}
	return j
}
