package plan

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec/expr"
)

// pushableFilters picks the WHERE conjuncts a scan can use to skip data
// (row groups): column op constant, where the constant converts to the
// column's type without changing its value. Skipping is only an
// optimisation: the full predicate still runs above the scan.
func pushableFilters(where sqlparser.Expr, sc *scope, scan *Scan) []connectors.ColumnFilter {
	var out []connectors.ColumnFilter
	for _, c := range conjuncts(where) {
		switch x := c.(type) {
		case *sqlparser.ComparisonExpr:
			op := x.Operator
			col, lit := x.Left, x.Right
			if _, ok := col.(*sqlparser.ColName); !ok {
				col, lit = x.Right, x.Left
				op = flip(op)
			}
			if op == "" {
				continue
			}
			cn, ok := col.(*sqlparser.ColName)
			if !ok {
				continue
			}
			idx, typ, ok := scanColumn(cn, sc, scan)
			if !ok {
				continue
			}
			v, ok := constantAs(lit, typ)
			if !ok {
				continue
			}
			out = append(out, connectors.ColumnFilter{Column: idx, Op: op, Value: v})
		case *sqlparser.IsExpr:
			cn, ok := x.Expr.(*sqlparser.ColName)
			if !ok {
				continue
			}
			idx, _, ok := scanColumn(cn, sc, scan)
			if !ok {
				continue
			}
			switch x.Operator {
			case sqlparser.IsNullStr:
				out = append(out, connectors.ColumnFilter{Column: idx, Op: "IS NULL"})
			case sqlparser.IsNotNullStr:
				out = append(out, connectors.ColumnFilter{Column: idx, Op: "IS NOT NULL"})
			}
		}
	}
	return out
}

// flip mirrors a comparison for constant-op-column; "" when not pushable.
func flip(op string) string {
	switch op {
	case "=":
		return "="
	case "<":
		return ">"
	case ">":
		return "<"
	case "<=":
		return ">="
	case ">=":
		return "<="
	}
	return ""
}

// scanColumn maps a column reference in the scan's scope to the table's
// column index.
func scanColumn(cn *sqlparser.ColName, sc *scope, scan *Scan) (int, arrow.DataType, bool) {
	qual := cn.Qualifier.Name.String()
	i, err := sc.resolve(qual, cn.Name.String())
	if err != nil || i >= len(scan.Columns) {
		return 0, nil, false
	}
	return scan.Columns[i], sc.cols[i].typ, true
}

// constantAs evaluates a literal and converts it to typ, only when the
// conversion is exact (5.5 is not pushed against a BIGINT column).
func constantAs(e sqlparser.Expr, typ arrow.DataType) (any, bool) {
	var lit expr.Expr
	var err error
	switch v := e.(type) {
	case *sqlparser.SQLVal:
		lit, err = bindLiteral(v)
	case *sqlparser.UnaryExpr:
		if v.Operator != sqlparser.UMinusStr {
			return nil, false
		}
		sv, ok := v.Expr.(*sqlparser.SQLVal)
		if !ok {
			return nil, false
		}
		inner, ierr := bindLiteral(sv)
		if ierr != nil {
			return nil, false
		}
		lit, err = expr.NewNeg(inner)
	default:
		return nil, false
	}
	if err != nil {
		return nil, false
	}
	cast, err := expr.NewCast(lit, typ)
	if err != nil {
		return nil, false
	}
	v, err := cast.EvalRow(nil)
	if err != nil || v == nil {
		return nil, false
	}
	// Exact: converting back compares equal to the literal.
	eq, err := expr.NewBinary("=", expr.Lit(v, typ), lit)
	if err != nil {
		return nil, false
	}
	ok, err := eq.EvalRow(nil)
	if err != nil || ok != true {
		return nil, false
	}
	return v, true
}
