package expr

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Conditional built-ins, all generic over a type T (the common type of
// their value arguments, by CommonType: INT and BIGINT give BIGINT, a
// DECIMAL meeting an integer a DECIMAL holding both, TIMESTAMPs the finer
// precision, a logical type such as JSON only itself or NULL):
//
//	coalesce(a, ...)        the first non-NULL argument
//	if(cond, a, b)          a where cond is TRUE, else b (NULL cond: b)
//	nullif(a, b)            NULL where a = b, else a; of a's type
//	greatest(a, ...)        the largest argument; NULL if any is NULL (Flink)
//	least(a, ...)           the smallest; NULL if any is NULL
//
// CASE is not a function call (NewCase) but unifies its THEN and ELSE
// values by the same rule.
func init() {
	mustAdd(&funcDef{name: "coalesce", desc: "the first non-NULL argument",
		sigs: []sig{sgVar("T", p(kT))}, rule: unify(),
		build: func(_ string, args []Expr, _ arrow.DataType) (Expr, error) { return newCoalesce(args) }})
	mustAdd(&funcDef{name: "if", desc: "a where cond is TRUE, else b",
		sigs: []sig{sg("T", p(kBool), p(kT), p(kT))}, rule: unify(1, 2),
		build: func(name string, args []Expr, _ arrow.DataType) (Expr, error) {
			c, err := NewCase(nil, []When{{Cond: args[0], Then: args[1]}}, args[2])
			if err != nil {
				return nil, fmt.Errorf("if: %w", err)
			}
			return &renamed{Expr: c, text: name + "(" + joinExprs(args) + ")"}, nil
		}})
	mustAdd(&funcDef{name: "nullif", desc: "NULL where a = b, else a",
		sigs: []sig{sg("T", p(kT), p(kAny))}, rule: sameAs(0),
		build: func(name string, args []Expr, _ arrow.DataType) (Expr, error) {
			eq, err := newCompare("=", args[0], args[1])
			if err != nil {
				return nil, fmt.Errorf("nullif: %w", err)
			}
			c, err := NewCase(nil, []When{{Cond: eq, Then: Lit(nil, arrow.Null)}}, args[0])
			if err != nil {
				return nil, fmt.Errorf("nullif: %w", err)
			}
			return &renamed{Expr: c, text: name + "(" + joinExprs(args) + ")"}, nil
		}})
	for _, n := range []string{"greatest", "least"} {
		mustAdd(&funcDef{name: n, desc: map[string]string{"greatest": "the largest argument", "least": "the smallest argument"}[n] + "; NULL if any is NULL",
			sigs: []sig{sgVar("T", p(kT))}, rule: unify(), build: buildExtreme})
	}
}

// renamed is an expression built from others (IF as a CASE) that prints
// as the user wrote it.
type renamed struct {
	Expr
	text string
}

func (r *renamed) String() string { return r.text }

func buildExtreme(name string, args []Expr, t arrow.DataType) (Expr, error) {
	if isNull(t) {
		return Lit(nil, arrow.Null), nil
	}
	cargs := make([]Expr, len(args))
	for i, a := range args {
		c, err := Coerce(a, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cargs[i] = c
	}
	big := name == "greatest"
	var row rowFn
	var col colFn
	switch StorageType(t).ID() {
	case arrow.INT32:
		row, col = kernelN(extreme[int32](big, cmp.Compare[int32]))
	case arrow.INT64:
		row, col = kernelN(extreme[int64](big, cmp.Compare[int64]))
	case arrow.FLOAT32:
		row, col = kernelN(extreme[float32](big, cmp.Compare[float32]))
	case arrow.FLOAT64:
		row, col = kernelN(extreme[float64](big, cmp.Compare[float64]))
	case arrow.DECIMAL128:
		row, col = kernelN(extreme[decimal128.Num](big, cmp128))
	case arrow.STRING:
		row, col = kernelN(extreme[string](big, strings.Compare))
	case arrow.TIMESTAMP:
		row, col = kernelN(extreme[arrow.Timestamp](big, cmp.Compare[arrow.Timestamp]))
	case arrow.DATE32:
		row, col = kernelN(extreme[arrow.Date32](big, cmp.Compare[arrow.Date32]))
	case arrow.TIME32, arrow.TIME64:
		row, col = kernelN(extreme[arrow.Time64](big, cmp.Compare[arrow.Time64]))
	case arrow.BOOL:
		row, col = kernelN(extreme[bool](big, boolCmp))
	case arrow.INTERVAL_MONTH_DAY_NANO:
		row, col = kernelN(extreme[arrow.MonthDayNanoInterval](big, intervalCmp))
	default:
		return nil, fmt.Errorf("%s: cannot order %s values", name, typeName(t))
	}
	return newCall(name, cargs, t, row, col)
}

// extreme picks the largest (big) or smallest value; NaN orders below
// every number (cmp.Compare).
func extreme[T Scalar](big bool, c func(a, b T) int) func([]T) (T, bool, error) {
	return func(xs []T) (T, bool, error) {
		best := xs[0]
		for _, x := range xs[1:] {
			if d := c(x, best); (big && d > 0) || (!big && d < 0) {
				best = x
			}
		}
		return best, true, nil
	}
}
