package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/expr"
)

// procTimeCall is PROCTIME(): a processing-time attribute. Its value is the
// wall clock when the row is processed; a window over it fires on the wall
// clock (ops.ProcTimeWindowAggregate), a join FOR SYSTEM_TIME AS OF it
// looks the row up as the table is now.
type procTimeCall struct{}

func (procTimeCall) Type() arrow.DataType                { return expr.ProcTimeType }
func (procTimeCall) String() string                      { return "PROCTIME()" }
func (procTimeCall) Compile() expr.Expr                  { return expr.NewProcTime(nil) }
func (procTimeCall) hash() uint64                        { return hashString("proctime()") }
func (procTimeCall) Children() []Expr                    { return nil }
func (p procTimeCall) WithChildren([]Expr) (Expr, error) { return p, nil }

// isProcTime reports whether x, bound over in, is a processing-time
// attribute: PROCTIME() itself, or a column of in that is one.
func isProcTime(x Expr, in *scope) bool {
	switch v := x.(type) {
	case procTimeCall:
		return true
	case *ColRef:
		return in != nil && v.Index < len(in.cols) && in.cols[v.Index].proctime
	}
	return false
}
