package sql

// TEMPORARY (branch frontend): the API the new parser provides, stubbed so
// the binder compiles before the parser branch is merged. Deleted at the
// merge.

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/sql/ast"
)

type Error struct {
	Msg                  string
	Line, Column, Offset int
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

func ErrorAt(text string, offset int, msg string) *Error { return errAt(text, offset, msg) }

type Interval struct {
	Months, Days int32
	Micros       int64
}

func IntervalOf(lit *ast.IntervalLit) (Interval, error) { panic("shim") }

func (iv Interval) Duration() (time.Duration, error) {
	if iv.Months != 0 {
		return 0, fmt.Errorf("a month has no fixed length")
	}
	return time.Duration(iv.Days)*24*time.Hour + time.Duration(iv.Micros)*time.Microsecond, nil
}

func TypeOf(t *ast.TypeName) (arrow.DataType, error) { panic("shim") }

func Parse(text string) (ast.Statement, error) { panic("shim") }

func ParseExpr(text string) (ast.Expr, error) { panic("shim") }
