package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/sql"
)

// bindExprIn binds e over sc. With ac set, e sits above an aggregate: GROUP
// BY expressions and aggregate calls resolve to the aggregate's output, and
// any other column reference is an error.
func (b *binder) bindExprIn(e sqlparser.Expr, sc *scope, ac *aggContext) (expr.Expr, error) {
	if ac != nil {
		key := sqlparser.String(e)
		if idx, ok := ac.groups[key]; ok {
			c := ac.out.cols[idx]
			return expr.Col(idx, c.typ, c.name), nil
		}
		if f, ok := e.(*sqlparser.FuncExpr); ok && isAggregate(f.Name.String()) {
			idx, ok := ac.aggs[key]
			if !ok {
				return nil, fmt.Errorf("aggregate %s was not planned", key)
			}
			c := ac.out.cols[idx]
			return expr.Col(idx, c.typ, c.name), nil
		}
		if cn, ok := e.(*sqlparser.ColName); ok {
			i, err := sc.resolve(cn.Qualifier.Name.String(), cn.Name.String())
			if err != nil {
				return nil, err
			}
			if idx, ok := ac.groupCols[i]; ok {
				c := ac.out.cols[idx]
				return expr.Col(idx, c.typ, c.name), nil
			}
			return nil, fmt.Errorf("column '%s' must appear in the GROUP BY clause or be used in an aggregate function", sqlparser.String(cn))
		}
	} else if f, ok := e.(*sqlparser.FuncExpr); ok && isAggregate(f.Name.String()) {
		return nil, fmt.Errorf("aggregate function %s is not allowed here", strings.ToUpper(f.Name.String()))
	}
	sub := func(x sqlparser.Expr) (expr.Expr, error) { return b.bindExprIn(x, sc, ac) }

	switch x := e.(type) {
	case *sqlparser.ColName:
		return b.bindColumn(x, sc)
	case *sqlparser.SQLVal:
		return bindLiteral(x)
	case *sqlparser.NullVal:
		return expr.Lit(nil, arrow.Null), nil
	case sqlparser.BoolVal:
		return expr.Lit(bool(x), arrow.FixedWidthTypes.Boolean), nil
	case *sqlparser.ParenExpr:
		return sub(x.Expr)
	case *sqlparser.AndExpr:
		return binary("AND", x.Left, x.Right, sub)
	case *sqlparser.OrExpr:
		return binary("OR", x.Left, x.Right, sub)
	case *sqlparser.NotExpr:
		v, err := sub(x.Expr)
		if err != nil {
			return nil, err
		}
		return expr.NewNot(v)
	case *sqlparser.ComparisonExpr:
		return b.bindComparison(x, sub)
	case *sqlparser.RangeCond:
		v, err := sub(x.Left)
		if err != nil {
			return nil, err
		}
		lo, err := sub(x.From)
		if err != nil {
			return nil, err
		}
		hi, err := sub(x.To)
		if err != nil {
			return nil, err
		}
		return expr.NewBetween(v, lo, hi, x.Operator == sqlparser.NotBetweenStr)
	case *sqlparser.IsExpr:
		v, err := sub(x.Expr)
		if err != nil {
			return nil, err
		}
		switch x.Operator {
		case sqlparser.IsNullStr:
			return expr.NewIsNull(v, false), nil
		case sqlparser.IsNotNullStr:
			return expr.NewIsNull(v, true), nil
		}
		return nil, fmt.Errorf("%s is not supported", strings.ToUpper(x.Operator))
	case *sqlparser.BinaryExpr:
		op := x.Operator
		switch op {
		case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr, sqlparser.DivStr, sqlparser.ModStr:
		default:
			return nil, fmt.Errorf("operator %s is not supported", op)
		}
		return binary(op, x.Left, x.Right, sub)
	case *sqlparser.UnaryExpr:
		v, err := sub(x.Expr)
		if err != nil {
			return nil, err
		}
		switch x.Operator {
		case sqlparser.UMinusStr:
			return expr.NewNeg(v)
		case sqlparser.UPlusStr:
			return v, nil
		}
		return nil, fmt.Errorf("unary operator %s is not supported", x.Operator)
	case *sqlparser.CaseExpr:
		var operand, els expr.Expr
		var err error
		if x.Expr != nil {
			if operand, err = sub(x.Expr); err != nil {
				return nil, err
			}
		}
		var whens []expr.When
		for _, w := range x.Whens {
			c, err := sub(w.Cond)
			if err != nil {
				return nil, err
			}
			t, err := sub(w.Val)
			if err != nil {
				return nil, err
			}
			whens = append(whens, expr.When{Cond: c, Then: t})
		}
		if x.Else != nil {
			if els, err = sub(x.Else); err != nil {
				return nil, err
			}
		}
		return expr.NewCase(operand, whens, els)
	case *sqlparser.SubstrExpr:
		s, err := b.bindColumn(x.Name, sc)
		if err != nil {
			return nil, err
		}
		args := []expr.Expr{s}
		for _, a := range []sqlparser.Expr{x.From, x.To} {
			if a == nil {
				continue
			}
			v, err := sub(a)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		return expr.NewFunc("substring", args)
	case *sqlparser.FuncExpr:
		return b.bindFunc(x, sub)
	case *sqlparser.Subquery:
		return nil, fmt.Errorf("subqueries in expressions are not supported yet: %s", sqlparser.String(x))
	case *sqlparser.ExistsExpr:
		return nil, fmt.Errorf("EXISTS is not supported yet")
	case *sqlparser.ConvertExpr:
		return nil, fmt.Errorf("CONVERT is not supported: use CAST(x AS type)")
	case *sqlparser.IntervalExpr:
		return nil, fmt.Errorf("INTERVAL expressions are not supported yet")
	}
	return nil, fmt.Errorf("unsupported expression %s", sqlparser.String(e))
}

func binary(op string, l, r sqlparser.Expr, sub func(sqlparser.Expr) (expr.Expr, error)) (expr.Expr, error) {
	lv, err := sub(l)
	if err != nil {
		return nil, err
	}
	rv, err := sub(r)
	if err != nil {
		return nil, err
	}
	return expr.NewBinary(op, lv, rv)
}

func (b *binder) bindComparison(x *sqlparser.ComparisonExpr, sub func(sqlparser.Expr) (expr.Expr, error)) (expr.Expr, error) {
	l, err := sub(x.Left)
	if err != nil {
		return nil, err
	}
	switch x.Operator {
	case sqlparser.InStr, sqlparser.NotInStr:
		tuple, ok := x.Right.(sqlparser.ValTuple)
		if !ok {
			return nil, fmt.Errorf("IN (subquery) is not supported yet")
		}
		var list []expr.Expr
		for _, v := range tuple {
			e, err := sub(v)
			if err != nil {
				return nil, err
			}
			list = append(list, e)
		}
		return expr.NewIn(l, list, x.Operator == sqlparser.NotInStr)
	}
	r, err := sub(x.Right)
	if err != nil {
		return nil, err
	}
	switch x.Operator {
	case sqlparser.LikeStr, sqlparser.NotLikeStr:
		if x.Escape != nil {
			return nil, fmt.Errorf("LIKE ... ESCAPE is not supported yet (backslash escapes work)")
		}
		return expr.NewLike(l, r, x.Operator == sqlparser.NotLikeStr)
	case sqlparser.EqualStr, sqlparser.LessThanStr, sqlparser.GreaterThanStr, sqlparser.LessEqualStr,
		sqlparser.GreaterEqualStr, sqlparser.NotEqualStr:
		return expr.NewBinary(x.Operator, l, r)
	}
	return nil, fmt.Errorf("operator %s is not supported", strings.ToUpper(x.Operator))
}

func (b *binder) bindFunc(f *sqlparser.FuncExpr, sub func(sqlparser.Expr) (expr.Expr, error)) (expr.Expr, error) {
	name := f.Name.String()
	if f.Distinct {
		return nil, fmt.Errorf("DISTINCT is only valid in aggregate functions, not %s", name)
	}
	var args []expr.Expr
	for _, a := range f.Exprs {
		ae, ok := a.(*sqlparser.AliasedExpr)
		if !ok {
			return nil, fmt.Errorf("invalid argument %s to %s", sqlparser.String(a), name)
		}
		if strings.EqualFold(name, sql.CastFunc) && len(args) == 1 {
			// The dialect layer put the target type in a string literal.
			v, ok := ae.Expr.(*sqlparser.SQLVal)
			if !ok {
				return nil, fmt.Errorf("malformed CAST")
			}
			t, err := sql.ParseType(string(v.Val))
			if err != nil {
				return nil, err
			}
			return expr.NewCast(args[0], t)
		}
		v, err := sub(ae.Expr)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	return expr.NewFunc(name, args)
}

func bindLiteral(v *sqlparser.SQLVal) (expr.Expr, error) {
	switch v.Type {
	case sqlparser.StrVal:
		return expr.Lit(string(v.Val), arrow.BinaryTypes.String), nil
	case sqlparser.IntVal, sqlparser.FloatVal:
		return expr.NumberLit(string(v.Val))
	}
	return nil, fmt.Errorf("unsupported literal %s", sqlparser.String(v))
}

// bindColumn resolves a column reference. A qualifier that names no table
// but a ROW column (bid.price over the nexmark table) is a field access.
func (b *binder) bindColumn(cn *sqlparser.ColName, sc *scope) (expr.Expr, error) {
	qual, name := cn.Qualifier.Name.String(), cn.Name.String()
	if qual != "" && !sc.hasQualifier(qual) {
		if i, err := sc.resolve("", qual); err == nil && sc.cols[i].typ.ID() == arrow.STRUCT {
			return expr.NewField(expr.Col(i, sc.cols[i].typ, sc.cols[i].name), name)
		}
		return nil, fmt.Errorf("column '%s' not found: no table or ROW column named '%s'", sqlparser.String(cn), qual)
	}
	i, err := sc.resolve(qual, name)
	if err != nil {
		return nil, err
	}
	c := sc.cols[i]
	return expr.Col(i, c.typ, c.name), nil
}
