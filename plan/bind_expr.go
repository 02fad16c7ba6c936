package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// exprCtx says what an expression may hold where it is bound.
type exprCtx struct {
	// clause names where the expression is, for errors ("WHERE").
	clause string
	// aggs, when set, collects aggregate calls (SELECT, HAVING, ORDER BY
	// and QUALIFY of an aggregating query); otherwise they are an error.
	aggs *aggCollector
	// wins, when set, collects window function calls.
	wins *winCollector
	// windows are the SELECT's named windows (WINDOW w AS (...)).
	windows map[string]*ast.WindowSpec
	// inAgg: binding an aggregate's argument (aggregates do not nest).
	inAgg bool
	// aliases are the SELECT list's items, which HAVING and QUALIFY may
	// name where no input column has the name (as DuckDB allows).
	aliases []selItem
}

// bindPredicate binds a boolean condition (WHERE, ON, HAVING).
func (b *binder) bindPredicate(e ast.Expr, sc *scope, clause string) (Expr, error) {
	pred, err := b.bindExpr(e, sc, &exprCtx{clause: clause})
	if err != nil {
		return nil, err
	}
	return b.asPredicate(pred, e, clause)
}

func (b *binder) asPredicate(pred Expr, e ast.Expr, clause string) (Expr, error) {
	switch pred.Type().ID() {
	case arrow.BOOL:
		return pred, nil
	case arrow.NULL:
		// An untyped NULL (WHERE NULL): a BOOLEAN NULL.
		return NewConst(nil, arrow.FixedWidthTypes.Boolean), nil
	}
	return nil, b.errAt(e, "argument of %s must be type BOOLEAN, not %s", clause, sql.TypeString(pred.Type()))
}

// bindExpr binds e over sc (and, for correlated references, sc's outer
// scopes).
func (b *binder) bindExpr(e ast.Expr, sc *scope, ctx *exprCtx) (Expr, error) {
	if ctx == nil {
		ctx = &exprCtx{}
	}
	x, err := b.bindExpr1(e, sc, ctx)
	if err != nil {
		return nil, b.wrapAt(e, err)
	}
	return x, nil
}

func (b *binder) bindExpr1(e ast.Expr, sc *scope, ctx *exprCtx) (Expr, error) {
	sub := func(x ast.Expr) (Expr, error) { return b.bindExpr(x, sc, ctx) }
	subs := func(xs []ast.Expr) ([]Expr, error) {
		out := make([]Expr, len(xs))
		for i, x := range xs {
			v, err := sub(x)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch x := e.(type) {
	case *ast.ColumnRef:
		c, err := b.bindColumn(x, sc)
		if err != nil && len(x.Parts) == 1 && ctx.aliases != nil {
			for _, it := range ctx.aliases {
				if strings.EqualFold(it.name, x.Parts[0].Name) {
					return it.x, nil
				}
			}
		}
		return c, err
	case *ast.NumberLit:
		lit, err := expr.NumberLit(x.Text)
		if err != nil {
			return nil, err
		}
		return &Const{Lit: lit}, nil
	case *ast.StringLit:
		return NewConst(x.Value, arrow.BinaryTypes.String), nil
	case *ast.BoolLit:
		return NewConst(x.Value, arrow.FixedWidthTypes.Boolean), nil
	case *ast.NullLit:
		return NewConst(nil, arrow.Null), nil
	case *ast.TypedLit:
		return typedLiteral(x)
	case *ast.IntervalLit:
		iv, err := sql.IntervalOf(x)
		if err != nil {
			return nil, err
		}
		return intervalConst(iv), nil
	case *ast.Unary:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case ast.OpNeg:
			return NewCall("NEG", []Expr{v}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewNeg(a[0]) })
		case ast.OpNot:
			return notCall(v)
		}
		return v, nil
	case *ast.Binary:
		l, err := sub(x.L)
		if err != nil {
			return nil, err
		}
		r, err := sub(x.R)
		if err != nil {
			return nil, err
		}
		return binaryOp(x.Op, l, r)
	case *ast.IsNull:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		return isNullCall(v, x.Not)
	case *ast.IsBool:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		return isBool(v, x.Value, x.Not)
	case *ast.Between:
		args, err := subs([]ast.Expr{x.X, x.Lo, x.Hi})
		if err != nil {
			return nil, err
		}
		between := func(lo, hi int) (Expr, error) {
			op := "BETWEEN"
			if x.Not {
				op = "NOT BETWEEN"
			}
			return NewCall(op, []Expr{args[0], args[lo], args[hi]}, func(a []expr.Expr) (expr.Expr, error) {
				return expr.NewBetween(a[0], a[1], a[2], x.Not)
			})
		}
		if !x.Symmetric {
			return between(1, 2)
		}
		a, err := between(1, 2)
		if err != nil {
			return nil, err
		}
		c, err := between(2, 1)
		if err != nil {
			return nil, err
		}
		if x.Not {
			return binaryCall("AND", a, c)
		}
		return binaryCall("OR", a, c)
	case *ast.InList:
		if len(x.List) == 0 {
			// x IN () is FALSE and x NOT IN () TRUE, whatever x is (SQLite's
			// reading; the standard has no empty list).
			if _, err := sub(x.X); err != nil {
				return nil, err
			}
			return NewConst(x.Not, arrow.FixedWidthTypes.Boolean), nil
		}
		args, err := subs(append([]ast.Expr{x.X}, x.List...))
		if err != nil {
			return nil, err
		}
		op := "IN"
		if x.Not {
			op = "NOT IN"
		}
		return NewCall(op, args, func(a []expr.Expr) (expr.Expr, error) { return expr.NewIn(a[0], a[1:], x.Not) })
	case *ast.InSubquery:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		s, err := b.bindSubquery(x.Query, sc, SubIn, x)
		if err != nil {
			return nil, err
		}
		s.X = v
		if err := checkInTypes(s); err != nil {
			return nil, err
		}
		if x.Not {
			return notCall(s)
		}
		return s, nil
	case *ast.Exists:
		return b.bindSubquery(x.Query, sc, SubExists, x)
	case *ast.Subquery:
		return b.bindSubquery(x.Query, sc, SubScalar, x)
	case *ast.Quantified:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		s, err := b.bindSubquery(x.Query, sc, SubQuantified, x)
		if err != nil {
			return nil, err
		}
		s.X, s.Op, s.All = v, binaryOps[x.Op], x.All
		if err := checkInTypes(s); err != nil {
			return nil, err
		}
		return s, nil
	case *ast.Like:
		args, err := subs([]ast.Expr{x.X, x.Pattern})
		if err != nil {
			return nil, err
		}
		if x.Escape != nil {
			lit, ok := x.Escape.(*ast.StringLit)
			if !ok || lit.Value != `\` {
				return nil, b.errAt(x.Escape, "LIKE ... ESCAPE supports only '\\' (the default escape character)")
			}
		}
		if x.ILike {
			for i := range args {
				if args[i], err = funcCall("lower", args[i]); err != nil {
					return nil, err
				}
			}
		}
		op := "LIKE"
		if x.Not {
			op = "NOT LIKE"
		}
		return NewCall(op, args, func(a []expr.Expr) (expr.Expr, error) { return expr.NewLike(a[0], a[1], x.Not) })
	case *ast.Case:
		return b.bindCase(x, sub)
	case *ast.Cast:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		t, err := sql.TypeOf(x.Type)
		if err != nil {
			return nil, err
		}
		if x.Style == ast.CastTry {
			return NewCall("TRY_CAST:"+t.String(), []Expr{v}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewTryCast(a[0], t) })
		}
		return NewCall("CAST:"+t.String(), []Expr{v}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewCast(a[0], t) })
	case *ast.FuncCall:
		return b.bindCall(x, sc, ctx)
	case *ast.Extract:
		v, err := sub(x.X)
		if err != nil {
			return nil, err
		}
		return funcCall("extract", NewConst(strings.ToLower(x.Field), arrow.BinaryTypes.String), v)
	case *ast.Substring:
		parts := []ast.Expr{x.X, x.From}
		if x.For != nil {
			parts = append(parts, x.For)
		}
		args, err := subs(parts)
		if err != nil {
			return nil, err
		}
		return funcCall("substring", args...)
	case *ast.Trim:
		parts := []ast.Expr{x.X}
		if x.Chars != nil {
			parts = append(parts, x.Chars)
		}
		args, err := subs(parts)
		if err != nil {
			return nil, err
		}
		return funcCall([...]string{"trim", "ltrim", "rtrim"}[x.Where], args...)
	case *ast.Position:
		args, err := subs([]ast.Expr{x.Sub, x.X})
		if err != nil {
			return nil, err
		}
		return funcCall("position", args...)
	case *ast.Tuple:
		return nil, b.errAt(x, "a row value (a, b, ...) is only supported in IN lists of columns of one value")
	case *ast.Array:
		return nil, b.errAt(x, "ARRAY[...] constructors are not supported yet")
	case *ast.Subscript:
		return nil, b.errAt(x, "subscripts (x[i]) are not supported yet")
	case *ast.TableArg, *ast.Descriptor, *ast.NamedArg:
		return nil, b.errAt(x, "%s is only valid as an argument of a table function in FROM", x)
	case *ast.GroupingSets, *ast.Rollup, *ast.Cube:
		return nil, b.errAt(x, "%s is only valid in GROUP BY", x)
	}
	return nil, b.errAt(e, "unsupported expression %s", e)
}

// binaryOps are the operator texts expr.NewBinary reads.
var binaryOps = map[ast.BinaryOp]string{
	ast.OpOr: "OR", ast.OpAnd: "AND", ast.OpEq: "=", ast.OpNe: "<>", ast.OpLt: "<", ast.OpLe: "<=",
	ast.OpGt: ">", ast.OpGe: ">=", ast.OpAdd: "+", ast.OpSub: "-", ast.OpMul: "*", ast.OpDiv: "/", ast.OpMod: "%",
}

func binaryOp(op ast.BinaryOp, l, r Expr) (Expr, error) {
	switch op {
	case ast.OpConcat:
		// a || b: NULL when either is; a non-string operand is cast to
		// VARCHAR (1 + 2 || 'c' is '3c').
		var err error
		if l, err = asString(l); err != nil {
			return nil, err
		}
		if r, err = asString(r); err != nil {
			return nil, err
		}
		return NewCall("||", []Expr{l, r}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewFunc("concat", a) })
	case ast.OpIsDistinctFrom, ast.OpIsNotDistinctFrom:
		same, err := NewCall("IS NOT DISTINCT FROM", []Expr{l, r}, notDistinct)
		if err != nil {
			return nil, err
		}
		if op == ast.OpIsDistinctFrom {
			return notCall(same)
		}
		return same, nil
	}
	return binaryCall(binaryOps[op], l, r)
}

// notDistinct is a IS NOT DISTINCT FROM b: equal, or both NULL; never NULL.
func notDistinct(a []expr.Expr) (expr.Expr, error) {
	eq, err := expr.NewBinary("=", a[0], a[1])
	if err != nil {
		return nil, err
	}
	ln, rn := expr.NewIsNull(a[0], false), expr.NewIsNull(a[1], false)
	f := expr.Lit(false, arrow.FixedWidthTypes.Boolean)
	return expr.NewCase(nil, []expr.When{{Cond: ln, Then: rn}, {Cond: rn, Then: f}}, eq)
}

func asString(e Expr) (Expr, error) {
	switch e.Type().ID() {
	case arrow.STRING:
		return e, nil
	case arrow.NULL:
		return castCall(e, arrow.BinaryTypes.String)
	}
	return castCall(e, arrow.BinaryTypes.String)
}

// isBool is x IS [NOT] TRUE | FALSE | UNKNOWN: never NULL.
func isBool(v Expr, want *bool, not bool) (Expr, error) {
	if want == nil {
		return isNullCall(v, not)
	}
	t := v
	var err error
	if !*want {
		if t, err = notCall(v); err != nil {
			return nil, err
		}
	}
	if t, err = nullAsFalse(t); err != nil {
		return nil, err
	}
	if not {
		return notCall(t)
	}
	return t, nil
}

func (b *binder) bindCase(x *ast.Case, sub func(ast.Expr) (Expr, error)) (Expr, error) {
	var args []Expr
	if x.Operand != nil {
		v, err := sub(x.Operand)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	for _, w := range x.Whens {
		c, err := sub(w.Cond)
		if err != nil {
			return nil, err
		}
		r, err := sub(w.Result)
		if err != nil {
			return nil, err
		}
		args = append(args, c, r)
	}
	if x.Else != nil {
		v, err := sub(x.Else)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	hasOperand, hasElse, n := x.Operand != nil, x.Else != nil, len(x.Whens)
	op := fmt.Sprintf("CASE:%t:%d:%t", hasOperand, n, hasElse)
	return NewCall(op, args, caseBuild(hasOperand, n, hasElse))
}

// caseBuild builds CASE from its arguments: [operand], (cond, then)...,
// [else].
func caseBuild(hasOperand bool, n int, hasElse bool) func([]expr.Expr) (expr.Expr, error) {
	return func(a []expr.Expr) (expr.Expr, error) {
		var operand, els expr.Expr
		if hasOperand {
			operand, a = a[0], a[1:]
		}
		whens := make([]expr.When, n)
		for i := range whens {
			whens[i] = expr.When{Cond: a[2*i], Then: a[2*i+1]}
		}
		if hasElse {
			els = a[2*n]
		}
		return expr.NewCase(operand, whens, els)
	}
}

// bindColumn resolves a column reference: in sc, then in the scopes of the
// queries sc is nested in (a correlated reference). A qualifier that
// names no table but a ROW column (bid.price over the nexmark table) is a
// field access.
func (b *binder) bindColumn(ref *ast.ColumnRef, sc *scope) (Expr, error) {
	level := 0
	var first error
	for s := sc; s != nil; s, level = s.outer, level+1 {
		x, err := b.resolveIn(ref, s)
		if err == nil {
			if level > 0 {
				return outerRef(x, level)
			}
			return x, nil
		}
		var nf errNotFound
		if !errors.As(err, &nf) {
			return nil, b.errAt(ref, "%v", err)
		}
		if first == nil {
			first = err
		}
	}
	return nil, b.errAt(ref, "%v", first)
}

// outerRef turns a reference bound in an outer scope into an OuterRef (a
// field access over it stays a call over the OuterRef).
func outerRef(x Expr, level int) (Expr, error) {
	return Transform(x, func(e Expr) (Expr, error) {
		if c, ok := e.(*ColRef); ok {
			return &OuterRef{Level: level, Index: c.Index, Name: c.Name, T: c.T}, nil
		}
		return e, nil
	})
}

func (b *binder) resolveIn(ref *ast.ColumnRef, s *scope) (Expr, error) {
	parts := ref.Parts
	col := func(i int) Expr {
		c := s.cols[i]
		return &ColRef{Index: i, Name: c.name, Qual: c.qual, T: c.typ, Pos: ref.Pos()}
	}
	fields := func(base Expr, names []ast.Ident) (Expr, error) {
		for _, f := range names {
			name := f.Name
			var err error
			if base, err = NewCall("FIELD:"+name, []Expr{base}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewField(a[0], name) }); err != nil {
				return nil, err
			}
		}
		return base, nil
	}
	if len(parts) >= 2 && s.hasQualifier(parts[0].Name) {
		i, err := s.resolve(parts[0].Name, parts[1].Name)
		if err != nil {
			return nil, err
		}
		return fields(col(i), parts[2:])
	}
	i, err := s.resolve("", parts[0].Name)
	if err != nil {
		var nf errNotFound
		if len(parts) > 1 && errors.As(err, &nf) {
			return nil, errNotFound{ref.String()}
		}
		return nil, err
	}
	if len(parts) > 1 && s.cols[i].typ.ID() != arrow.STRUCT {
		return nil, errNotFound{ref.String()}
	}
	return fields(col(i), parts[1:])
}

// typedLiteral folds DATE '...', TIME '...', TIMESTAMP '...' into a
// constant (TIME and TIMESTAMP at their default precision, 6).
func typedLiteral(x *ast.TypedLit) (Expr, error) {
	var t arrow.DataType
	switch x.Type {
	case "DATE":
		t = arrow.FixedWidthTypes.Date32
	case "TIME":
		t = arrow.FixedWidthTypes.Time64us
	case "TIMESTAMP":
		t = &arrow.TimestampType{Unit: arrow.Microsecond}
	case "TIMESTAMP_LTZ":
		t = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	default:
		return nil, fmt.Errorf("%s literals are not supported", x.Type)
	}
	c, err := expr.NewCast(expr.Lit(x.Value, arrow.BinaryTypes.String), t)
	if err != nil {
		return nil, err
	}
	v, err := c.EvalRow(nil)
	if err != nil {
		return nil, fmt.Errorf("invalid %s literal '%s': %v", x.Type, x.Value, err)
	}
	return NewConst(v, t), nil
}

// intervalConst is an INTERVAL literal's value.
func intervalConst(iv sql.Interval) Expr {
	return NewConst(arrow.MonthDayNanoInterval{Months: iv.Months, Days: iv.Days, Nanoseconds: iv.Micros * 1000},
		arrow.FixedWidthTypes.MonthDayNanoInterval)
}

// bindSubquery binds a subquery in an expression, with sc as its outer
// scope.
func (b *binder) bindSubquery(q *ast.Query, sc *scope, kind SubqueryKind, at ast.Expr) (*SubqueryExpr, error) {
	n, qs, err := b.bindQuery(q, sc)
	if err != nil {
		return nil, err
	}
	if qs.changelog {
		return nil, b.errAt(at, "a subquery over an updating result is not supported")
	}
	s := &SubqueryExpr{Kind: kind, Plan: n, Text: b.source(at), T: arrow.FixedWidthTypes.Boolean}
	subqueryIDs++
	s.id = subqueryIDs
	if kind != SubExists && len(qs.cols) != 1 {
		return nil, b.errAt(at, "subquery must return only one column, not %d", len(qs.cols))
	}
	if kind == SubScalar {
		s.T = qs.cols[0].typ
	}
	return s, nil
}

// checkInTypes checks that X IN (subquery) compares comparable types.
func checkInTypes(s *SubqueryExpr) error {
	rt := s.Plan.Schema().Field(0).Type
	if _, err := expr.CommonType(s.X.Type(), rt); err != nil {
		return fmt.Errorf("cannot compare %s with the subquery's %s: %v", sql.TypeString(s.X.Type()), sql.TypeString(rt), err)
	}
	return nil
}
