package expr

import "github.com/apache/arrow-go/v18/arrow"

// TEMPORARY (branch frontend): NewTryCast comes with the funcs branch.
func NewTryCast(e Expr, to arrow.DataType) (Expr, error) { return newCast(e, to, false) }
