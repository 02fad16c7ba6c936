package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Error is an error in a statement with its position: Offset is a byte
// offset into the statement text, Line and Column are 1-based (Column
// counts characters) and 0 when unknown. Every error of Parse, ParseExpr
// and ParseType is an *Error; TypeOf and IntervalOf, which have no text,
// set only Offset (ErrorAt places it in the text).
type Error struct {
	Msg          string
	Line, Column int
	Offset       int
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

// ErrorAt is an *Error at byte offset off of text, for a caller that
// reports an error at a node's Span (the binder) or places an error of
// TypeOf or IntervalOf: ErrorAt(text, err.Offset, err.Msg).
func ErrorAt(text string, offset int, msg string) *Error {
	l, c := lineCol(text, offset)
	return &Error{Msg: msg, Line: l, Column: c, Offset: offset}
}

// lineCol converts a byte offset of text into a 1-based line and a
// 1-based column counted in characters.
func lineCol(text string, off int) (line, col int) {
	off = min(max(off, 0), len(text))
	line = 1 + strings.Count(text[:off], "\n")
	lineStart := strings.LastIndexByte(text[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(text[lineStart:off])
}

// posString is "line L, column C" of offset off in text, for messages
// that point at a second place (the '(' an unclosed ')' belongs to).
func posString(text string, off int) string {
	l, c := lineCol(text, off)
	return fmt.Sprintf("line %d, column %d", l, c)
}
