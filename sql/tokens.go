package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind classifies a token of the dialect layer's scanner.
type tokKind int

const (
	tkWord    tokKind = iota // bare identifier or keyword
	tkQuoted                 // `backticked identifier`
	tkString                 // 'single-quoted string'
	tkDString                // "double-quoted" (left as is, see rewrite.go)
	tkNumber                 // 12, 1.5, 1e3, .5, 0x1f
	tkOp                     // punctuation and operators: ( ) , . ; = <> || ...
)

// token is one lexeme with its byte span in the statement text. Offsets are
// always into the original text, so every error can name a line and column
// the user typed.
type token struct {
	kind       tokKind
	text       string // raw text, quotes included
	start, end int
}

// is reports whether t is the bare word kw (case-insensitive).
func (t token) is(kw string) bool {
	return t.kind == tkWord && strings.EqualFold(t.text, kw)
}

// isOp reports whether t is the operator op.
func (t token) isOp(op string) bool { return t.kind == tkOp && t.text == op }

// name returns an identifier's name: backticks removed (a doubled backtick
// is one), bare words as written.
func (t token) name() string {
	if t.kind == tkQuoted {
		return strings.ReplaceAll(t.text[1:len(t.text)-1], "``", "`")
	}
	return t.text
}

// stringValue decodes a single-quoted string with the same escapes the
// statement splitter and sqlparser honour: a doubled quote and backslash
// escapes.
func (t token) stringValue() string {
	body := t.text[1 : len(t.text)-1]
	if !strings.ContainsAny(body, `'\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\'' && i+1 < len(body) && body[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\\' && i+1 < len(body):
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			default:
				b.WriteByte(body[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// quoteString renders s as a single-quoted literal sqlparser reads back as s.
func quoteString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteIdent renders s as a backticked identifier.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// multi-character operators, longest first.
var multiOps = []string{"<=>", "->>", "<>", "!=", "<=", ">=", "||", "&&", "<<", ">>", "->", ":=", "=>"}

// lex splits text into tokens, dropping whitespace and comments (-- and
// /* */). Its quoting rules match the statement splitter's (split.go) so a
// statement Split delimits is tokenised the same way here.
func lex(text string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return nil, errAt(text, i, "unterminated comment")
			}
			i += end + 4
		case c == '\'':
			j := i + 1
			for {
				if j >= len(text) {
					return nil, errAt(text, i, "unterminated string literal")
				}
				if text[j] == '\\' && j+1 < len(text) {
					j += 2
					continue
				}
				if text[j] == '\'' {
					if j+1 < len(text) && text[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, token{tkString, text[i : j+1], i, j + 1})
			i = j + 1
		case c == '"' || c == '`':
			kind := tkDString
			what := "double-quoted string"
			if c == '`' {
				kind, what = tkQuoted, "quoted identifier"
			}
			j := i + 1
			for {
				if j >= len(text) {
					return nil, errAt(text, i, "unterminated "+what)
				}
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if kind == tkQuoted && j == i+1 {
				return nil, errAt(text, i, "empty quoted identifier")
			}
			toks = append(toks, token{kind, text[i : j+1], i, j + 1})
			i = j + 1
		case isDigit(c) || (c == '.' && i+1 < len(text) && isDigit(text[i+1])):
			j := scanNumber(text, i)
			toks = append(toks, token{tkNumber, text[i:j], i, j})
			i = j
		case isWordStart(c):
			j := i
			for j < len(text) && isWordByte(text[j]) {
				j++
			}
			toks = append(toks, token{tkWord, text[i:j], i, j})
			i = j
		default:
			op := ""
			for _, m := range multiOps {
				if strings.HasPrefix(text[i:], m) {
					op = m
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("()[],.;=<>+-*/%^~!&|:?{}", rune(c)) {
					r, _ := utf8.DecodeRuneInString(text[i:])
					return nil, errAt(text, i, fmt.Sprintf("unexpected character %q", r))
				}
				op = text[i : i+1]
			}
			toks = append(toks, token{tkOp, op, i, i + len(op)})
			i += len(op)
		}
	}
	return toks, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordStart accepts letters, '_' and any non-ASCII byte (identifiers in
// other scripts); '$' and '@' as sqlparser does.
func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '@' || c >= 0x80
}

func isWordByte(c byte) bool { return isWordStart(c) || isDigit(c) || c == '$' }

func scanNumber(text string, i int) int {
	j := i
	if strings.HasPrefix(text[i:], "0x") || strings.HasPrefix(text[i:], "0X") {
		j += 2
		for j < len(text) && strings.IndexByte("0123456789abcdefABCDEF", text[j]) >= 0 {
			j++
		}
		return j
	}
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

// matchParens returns, for every '(' and ')' token, the index of its
// partner; an unbalanced parenthesis is an error at its position.
func matchParens(text string, toks []token) ([]int, error) {
	match := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		match[i] = -1
		switch {
		case t.isOp("("):
			stack = append(stack, i)
		case t.isOp(")"):
			if len(stack) == 0 {
				return nil, errAt(text, t.start, "unmatched ')'")
			}
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			match[open], match[i] = i, open
		}
	}
	if len(stack) > 0 {
		return nil, errAt(text, toks[stack[len(stack)-1]].start, "unclosed '('")
	}
	return match, nil
}

// lineCol converts a byte offset of text into a 1-based line and a 1-based
// column counted in characters.
func lineCol(text string, off int) (line, col int) {
	if off > len(text) {
		off = len(text)
	}
	if off < 0 {
		off = 0
	}
	line = 1 + strings.Count(text[:off], "\n")
	lineStart := strings.LastIndexByte(text[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(text[lineStart:off])
}

// errAt is an *Error at byte offset off of text.
func errAt(text string, off int, msg string) *Error {
	l, c := lineCol(text, off)
	return &Error{Msg: msg, Line: l, Column: c}
}
