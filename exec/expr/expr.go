// Package expr holds typed scalar expressions with two evaluation paths: a
// row path over exec.Row values (authoritative) and a vectorised path over
// the columns of an Arrow record. Both must give the same answer, SQL NULL
// semantics included; tests run every expression both ways.
package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Expr is a bound, typed scalar expression. Column references are by
// position in the input schema.
type Expr interface {
	// Type is the result's Arrow type (see exec.Row for the row-form values).
	Type() arrow.DataType
	// String renders the expression in SQL terms, for EXPLAIN.
	String() string
	// EvalRow evaluates over one row; nil is SQL NULL.
	EvalRow(r exec.Row) (any, error)
	// EvalColumnar evaluates over every row of rec and returns a new array
	// of rec.NumRows() values that the caller releases.
	EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error)
}
