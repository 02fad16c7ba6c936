package ast

import (
	"strconv"
	"strings"
)

// The printer renders a tree as canonical SQL: keywords upper-case, names
// quoted only when they must be (quoted in the source, not one bare word,
// or reserved), one space between tokens, parentheses only where the
// precedence below requires them. Package sql's parser reads the output
// back to the same tree (the round-trip and fuzz tests hold the two to
// each other), so the precedence here is the parser's.

// Prec is the binding strength of an expression's top operator, lowest
// first (PostgreSQL's order).
type Prec int

const (
	PrecLowest    Prec = iota
	PrecOr             // OR
	PrecAnd            // AND
	PrecNot            // NOT x
	PrecIs             // IS [NOT] NULL|TRUE|FALSE|UNKNOWN|DISTINCT FROM; non-associative
	PrecCmp            // = <> < <= > >=, x op ANY (...); non-associative
	PrecIn             // BETWEEN, IN, LIKE, ILIKE; non-associative
	PrecOther          // ||
	PrecAdd            // + -
	PrecMul            // * / %
	PrecUnary          // -x +x
	PrecCast           // x::T
	PrecSubscript      // x[i]
	PrecPrimary        // names, literals, calls, (...)
)

// Prec is the precedence of the operator.
func (op BinaryOp) Prec() Prec {
	switch op {
	case OpOr:
		return PrecOr
	case OpAnd:
		return PrecAnd
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return PrecCmp
	case OpIsDistinctFrom, OpIsNotDistinctFrom:
		return PrecIs
	case OpAdd, OpSub:
		return PrecAdd
	case OpMul, OpDiv, OpMod:
		return PrecMul
	case OpConcat:
		return PrecOther
	}
	return PrecPrimary
}

var binaryOpText = [...]string{
	OpOr: "OR", OpAnd: "AND", OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpIsDistinctFrom: "IS DISTINCT FROM", OpIsNotDistinctFrom: "IS NOT DISTINCT FROM",
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpConcat: "||",
}

// String is the operator as SQL writes it (!= prints as <>).
func (op BinaryOp) String() string {
	if int(op) < len(binaryOpText) {
		return binaryOpText[op]
	}
	return "?"
}

// String is the operator as SQL writes it.
func (op UnaryOp) String() string {
	switch op {
	case OpNeg:
		return "-"
	case OpPlus:
		return "+"
	case OpNot:
		return "NOT"
	}
	return "?"
}

// String is UNION, INTERSECT or EXCEPT.
func (k SetOpKind) String() string {
	switch k {
	case Union:
		return "UNION"
	case Intersect:
		return "INTERSECT"
	case Except:
		return "EXCEPT"
	}
	return "?"
}

// String is the join's keywords: JOIN, LEFT JOIN, RIGHT JOIN, FULL JOIN,
// CROSS JOIN.
func (k JoinKind) String() string {
	switch k {
	case InnerJoin:
		return "JOIN"
	case LeftJoin:
		return "LEFT JOIN"
	case RightJoin:
		return "RIGHT JOIN"
	case FullJoin:
		return "FULL JOIN"
	case CrossJoin:
		return "CROSS JOIN"
	}
	return "?"
}

// Precedence is the binding strength of e's top operator.
func Precedence(e Expr) Prec {
	switch e := e.(type) {
	case *Binary:
		return e.Op.Prec()
	case *Unary:
		if e.Op == OpNot {
			return PrecNot
		}
		return PrecUnary
	case *IsNull, *IsBool:
		return PrecIs
	case *Quantified:
		return PrecCmp
	case *Between, *InList, *InSubquery, *Like:
		return PrecIn
	case *Cast:
		if e.Style == CastColons {
			return PrecCast
		}
	case *Subscript:
		return PrecSubscript
	}
	return PrecPrimary
}

// operandPrec is the least precedence an operand of op prints without
// parentheses at: left-associative levels take their own level on the
// left and one above on the right; non-associative levels one above on
// both sides.
func operandPrec(op BinaryOp, right bool) Prec {
	p := op.Prec()
	switch p {
	case PrecIs, PrecCmp:
		return p + 1
	}
	if right {
		return p + 1
	}
	return p
}

type printer struct{ strings.Builder }

func (p *printer) str(s string) { p.WriteString(s) }

func (p *printer) ident(id *Ident) {
	if id.Quoted || !isBareWord(id.Name) || IsReserved(id.Name) {
		p.str(quoteName(id.Name))
		return
	}
	p.str(id.Name)
}

// funcName prints a function's name: the reserved words that name
// functions (LEFT, CURRENT_TIMESTAMP) print bare.
func (p *printer) funcName(id *Ident) {
	if !id.Quoted && isBareWord(id.Name) && IsReservedFunc(id.Name) {
		p.str(id.Name)
		return
	}
	p.ident(id)
}

func (p *printer) idents(ids []Ident) {
	for i := range ids {
		if i > 0 {
			p.str(", ")
		}
		p.ident(&ids[i])
	}
}

func (p *printer) objectName(n *ObjectName) {
	for i := range n.Parts {
		if i > 0 {
			p.str(".")
		}
		p.ident(&n.Parts[i])
	}
}

// expr prints e, in parentheses when its precedence is below min.
func (p *printer) expr(e Expr, min Prec) {
	if e == nil {
		p.str("<nil>")
		return
	}
	if Precedence(e) < min {
		p.str("(")
		p.exprBare(e)
		p.str(")")
		return
	}
	p.exprBare(e)
}

// leadingName is the name an expression's printed form starts with, and
// whether a '(' follows it (a call): the first word of a column
// reference or a call, down the left operands that print without
// parentheses. nil when it starts with anything else.
func leadingName(e Expr) (id *Ident, call bool) {
	for {
		var x Expr
		var min Prec
		switch n := e.(type) {
		case *ColumnRef:
			return &n.Parts[0], false
		case *FuncCall:
			return &n.Name, !n.NoParens
		case *Binary:
			x, min = n.L, operandPrec(n.Op, false)
		case *IsNull:
			x, min = n.X, PrecIs+1
		case *IsBool:
			x, min = n.X, PrecIs+1
		case *Quantified:
			x, min = n.X, PrecCmp+1
		case *Between:
			x, min = n.X, PrecIn+1
		case *InList:
			x, min = n.X, PrecIn+1
		case *InSubquery:
			x, min = n.X, PrecIn+1
		case *Like:
			x, min = n.X, PrecIn+1
		case *Cast:
			if n.Style != CastColons {
				return nil, false
			}
			x, min = n.X, PrecCast
		case *Subscript:
			x, min = n.X, PrecSubscript
		default:
			return nil, false
		}
		if x == nil || Precedence(x) < min {
			return nil, false
		}
		e = x
	}
}

// exprGuarded prints e, in parentheses when its first word would read
// as one of the keywords the grammar looks for where e stands (GROUP BY
// ROLLUP(...), ROWS UNBOUNDED PRECEDING, DESCRIPTOR(...) among a table
// function's arguments); calls only counts only a word that a '('
// follows.
func (p *printer) exprGuarded(e Expr, calls bool, words ...string) {
	if id, call := leadingName(e); id != nil && !id.Quoted && (call || !calls) {
		for _, w := range words {
			if strings.EqualFold(id.Name, w) {
				p.str("(")
				p.exprBare(e)
				p.str(")")
				return
			}
		}
	}
	p.expr(e, PrecLowest)
}

func (p *printer) exprs(es []Expr) {
	for i, e := range es {
		if i > 0 {
			p.str(", ")
		}
		p.expr(e, PrecLowest)
	}
}

func (p *printer) exprBare(e Expr) {
	switch e := e.(type) {
	case *ColumnRef:
		for i := range e.Parts {
			if i > 0 {
				p.str(".")
			}
			p.ident(&e.Parts[i])
		}
	case *NumberLit:
		p.str(e.Text)
	case *StringLit:
		p.str(quoteString(e.Value))
	case *BoolLit:
		if e.Value {
			p.str("TRUE")
		} else {
			p.str("FALSE")
		}
	case *NullLit:
		p.str("NULL")
	case *TypedLit:
		p.str(e.Type + " " + quoteString(e.Value))
	case *IntervalLit:
		p.intervalLit(e)
	case *Unary:
		p.unary(e)
	case *Binary:
		p.binary(e)
	case *IsNull:
		p.expr(e.X, PrecIs+1)
		p.str(" IS ")
		p.not(e.Not)
		p.str("NULL")
	case *IsBool:
		p.expr(e.X, PrecIs+1)
		p.str(" IS ")
		p.not(e.Not)
		switch {
		case e.Value == nil:
			p.str("UNKNOWN")
		case *e.Value:
			p.str("TRUE")
		default:
			p.str("FALSE")
		}
	case *Between:
		p.expr(e.X, PrecIn+1)
		p.str(" ")
		p.not(e.Not)
		p.str("BETWEEN ")
		if e.Symmetric {
			p.str("SYMMETRIC ")
		}
		p.expr(e.Lo, PrecIn+1)
		p.str(" AND ")
		p.expr(e.Hi, PrecIn+1)
	case *InList:
		p.expr(e.X, PrecIn+1)
		p.str(" ")
		p.not(e.Not)
		p.str("IN (")
		p.exprs(e.List)
		p.str(")")
	case *InSubquery:
		p.expr(e.X, PrecIn+1)
		p.str(" ")
		p.not(e.Not)
		p.str("IN ")
		p.parenQuery(e.Query)
	case *Exists:
		p.str("EXISTS ")
		p.parenQuery(e.Query)
	case *Subquery:
		p.parenQuery(e.Query)
	case *Quantified:
		p.expr(e.X, PrecCmp+1)
		p.str(" " + e.Op.String() + " ")
		if e.All {
			p.str("ALL ")
		} else {
			p.str("ANY ")
		}
		p.parenQuery(e.Query)
	case *Like:
		p.expr(e.X, PrecIn+1)
		p.str(" ")
		p.not(e.Not)
		if e.ILike {
			p.str("ILIKE ")
		} else {
			p.str("LIKE ")
		}
		p.expr(e.Pattern, PrecIn+1)
		if e.Escape != nil {
			p.str(" ESCAPE ")
			p.expr(e.Escape, PrecIn+1)
		}
	case *Case:
		p.str("CASE")
		if e.Operand != nil {
			p.str(" ")
			p.expr(e.Operand, PrecLowest)
		}
		for _, w := range e.Whens {
			p.str(" ")
			p.when(w)
		}
		if e.Else != nil {
			p.str(" ELSE ")
			p.expr(e.Else, PrecLowest)
		}
		p.str(" END")
	case *Cast:
		p.cast(e)
	case *FuncCall:
		p.funcCall(e)
	case *Extract:
		p.str("EXTRACT(" + e.Field + " FROM ")
		p.expr(e.X, PrecLowest)
		p.str(")")
	case *Substring:
		p.str("SUBSTRING(")
		p.expr(e.X, PrecLowest)
		p.str(" FROM ")
		p.expr(e.From, PrecLowest)
		if e.For != nil {
			p.str(" FOR ")
			p.expr(e.For, PrecLowest)
		}
		p.str(")")
	case *Trim:
		p.trim(e)
	case *Position:
		p.str("POSITION(")
		p.expr(e.Sub, PrecIn+1)
		p.str(" IN ")
		p.expr(e.X, PrecLowest)
		p.str(")")
	case *Tuple:
		if e.Row {
			p.str("ROW")
		}
		p.str("(")
		p.exprs(e.Exprs)
		p.str(")")
	case *Array:
		p.str("ARRAY[")
		p.exprs(e.Elems)
		p.str("]")
	case *Subscript:
		p.expr(e.X, PrecSubscript)
		p.str("[")
		p.expr(e.Index, PrecLowest)
		p.str("]")
	case *TableArg:
		p.str("TABLE ")
		p.objectName(&e.Name)
		if len(e.PartitionBy) > 0 {
			// Always parenthesised: a bare list would run into the
			// arguments that follow.
			p.str(" PARTITION BY (")
			p.exprs(e.PartitionBy)
			p.str(")")
		}
	case *Descriptor:
		p.str("DESCRIPTOR(")
		p.idents(e.Columns)
		p.str(")")
	case *NamedArg:
		p.ident(&e.Name)
		p.str(" => ")
		p.exprGuarded(e.Value, true, "DESCRIPTOR")
	case *GroupingSets:
		if len(e.Sets) == 1 && len(e.Sets[0]) == 0 {
			p.str("()")
			return
		}
		p.str("GROUPING SETS (")
		for i, s := range e.Sets {
			if i > 0 {
				p.str(", ")
			}
			p.str("(")
			p.exprs(s)
			p.str(")")
		}
		p.str(")")
	case *Rollup:
		p.str("ROLLUP(")
		p.exprs(e.Exprs)
		p.str(")")
	case *Cube:
		p.str("CUBE(")
		p.exprs(e.Exprs)
		p.str(")")
	default:
		p.str("<unknown expression>")
	}
}

func (p *printer) not(not bool) {
	if not {
		p.str("NOT ")
	}
}

func (p *printer) intervalLit(e *IntervalLit) {
	p.str("INTERVAL " + quoteString(e.Value))
	if e.From != "" {
		p.str(" " + e.From)
	}
	if e.To != "" {
		p.str(" TO " + e.To)
	}
}

func (p *printer) unary(e *Unary) {
	if e.Op == OpNot {
		p.str("NOT ")
		p.expr(e.X, PrecNot)
		return
	}
	p.str(e.Op.String())
	if _, ok := e.X.(*Unary); ok {
		p.str(" ") // - -x, not --x (a comment)
	}
	p.expr(e.X, PrecUnary)
}

// binary prints a chain of left operands that need no parentheses
// (a + b + c + ...) iteratively: a long flat expression is a deep tree.
func (p *printer) binary(e *Binary) {
	chain := []*Binary{e}
	for {
		n := chain[len(chain)-1]
		l, ok := n.L.(*Binary)
		if !ok || l.Op.Prec() < operandPrec(n.Op, false) {
			break
		}
		chain = append(chain, l)
	}
	last := chain[len(chain)-1]
	p.expr(last.L, operandPrec(last.Op, false))
	for i := len(chain) - 1; i >= 0; i-- {
		n := chain[i]
		p.str(" " + n.Op.String() + " ")
		p.expr(n.R, operandPrec(n.Op, true))
	}
}

func (p *printer) when(w *When) {
	p.str("WHEN ")
	p.expr(w.Cond, PrecLowest)
	p.str(" THEN ")
	p.expr(w.Result, PrecLowest)
}

func (p *printer) cast(e *Cast) {
	switch e.Style {
	case CastColons:
		p.expr(e.X, PrecCast)
		p.str("::")
		p.typeName(e.Type)
		return
	case CastTry:
		p.str("TRY_CAST(")
	default:
		p.str("CAST(")
	}
	p.expr(e.X, PrecLowest)
	p.str(" AS ")
	p.typeName(e.Type)
	p.str(")")
}

func (p *printer) funcCall(e *FuncCall) {
	if e.NoParens {
		p.funcName(&e.Name)
		return
	}
	p.funcName(&e.Name)
	p.str("(")
	if e.Distinct {
		p.str("DISTINCT ")
	}
	if e.Star {
		p.str("*")
	}
	p.exprs(e.Args)
	if len(e.OrderBy) > 0 {
		p.str(" ORDER BY ")
		p.orderItems(e.OrderBy)
	}
	p.str(")")
	if e.Filter != nil {
		p.str(" FILTER (WHERE ")
		p.expr(e.Filter, PrecLowest)
		p.str(")")
	}
	if e.IgnoreNulls {
		p.str(" IGNORE NULLS")
	}
	if e.Over != nil {
		p.str(" OVER ")
		p.over(e.Over)
	}
}

func (p *printer) trim(e *Trim) {
	p.str("TRIM(")
	where := e.Where != TrimBoth || e.Explicit
	if where {
		switch e.Where {
		case TrimLeading:
			p.str("LEADING ")
		case TrimTrailing:
			p.str("TRAILING ")
		default:
			p.str("BOTH ")
		}
	}
	if e.Chars != nil {
		p.expr(e.Chars, PrecLowest)
		p.str(" ")
	}
	if where || e.Chars != nil {
		p.str("FROM ")
	}
	p.expr(e.X, PrecLowest)
	p.str(")")
}

// over prints a window after OVER: a name alone, or (spec).
func (p *printer) over(w *WindowSpec) {
	if w.Base != nil && len(w.PartitionBy) == 0 && len(w.OrderBy) == 0 && w.Frame == nil {
		p.ident(w.Base)
		return
	}
	p.str("(")
	p.windowSpec(w)
	p.str(")")
}

func (p *printer) windowSpec(w *WindowSpec) {
	sep := ""
	if w.Base != nil {
		p.ident(w.Base)
		sep = " "
	}
	if len(w.PartitionBy) > 0 {
		p.str(sep + "PARTITION BY ")
		p.exprs(w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		p.str(sep + "ORDER BY ")
		p.orderItems(w.OrderBy)
		sep = " "
	}
	if w.Frame != nil {
		p.str(sep)
		p.frame(w.Frame)
	}
}

func (p *printer) frame(f *Frame) {
	switch f.Unit {
	case FrameRange:
		p.str("RANGE ")
	case FrameGroups:
		p.str("GROUPS ")
	default:
		p.str("ROWS ")
	}
	if f.End == nil {
		p.frameBound(f.Start)
		return
	}
	p.str("BETWEEN ")
	p.frameBound(f.Start)
	p.str(" AND ")
	p.frameBound(f.End)
}

func (p *printer) frameBound(b *FrameBound) {
	if b == nil {
		p.str("<nil>")
		return
	}
	switch b.Kind {
	case UnboundedPreceding:
		p.str("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		p.str("UNBOUNDED FOLLOWING")
	case CurrentRow:
		p.str("CURRENT ROW")
	case Preceding:
		p.exprGuarded(b.Offset, false, "UNBOUNDED", "BETWEEN")
		p.str(" PRECEDING")
	case Following:
		p.exprGuarded(b.Offset, false, "UNBOUNDED", "BETWEEN")
		p.str(" FOLLOWING")
	}
}

func (p *printer) orderItems(items []*OrderItem) {
	for i, o := range items {
		if i > 0 {
			p.str(", ")
		}
		p.orderItem(o)
	}
}

func (p *printer) orderItem(o *OrderItem) {
	p.expr(o.Expr, PrecLowest)
	if o.Desc {
		p.str(" DESC")
	}
	switch o.Nulls {
	case NullsFirst:
		p.str(" NULLS FIRST")
	case NullsLast:
		p.str(" NULLS LAST")
	}
}

// ---------------------------------------------------------------------
// Queries

func (p *printer) parenQuery(q *Query) {
	p.str("(")
	p.query(q)
	p.str(")")
}

func (p *printer) query(q *Query) {
	if q == nil {
		p.str("<nil>")
		return
	}
	if q.With != nil {
		p.with(q.With)
		p.str(" ")
	}
	p.body(q.Body)
	if len(q.OrderBy) > 0 {
		p.str(" ORDER BY ")
		p.orderItems(q.OrderBy)
	}
	if q.Limit != nil {
		p.str(" LIMIT ")
		p.expr(q.Limit, PrecLowest)
	}
	if q.Offset != nil {
		p.str(" OFFSET ")
		p.expr(q.Offset, PrecLowest)
	}
}

func (p *printer) with(w *With) {
	p.str("WITH ")
	if w.Recursive {
		p.str("RECURSIVE ")
	}
	for i, c := range w.CTEs {
		if i > 0 {
			p.str(", ")
		}
		p.cte(c)
	}
}

func (p *printer) cte(c *CTE) {
	p.ident(&c.Name)
	if len(c.Columns) > 0 {
		p.str("(")
		p.idents(c.Columns)
		p.str(")")
	}
	p.str(" AS ")
	p.parenQuery(c.Query)
}

func (p *printer) body(b QueryBody) {
	switch b := b.(type) {
	case *Select:
		p.selectBlock(b)
	case *Values:
		p.values(b)
	case *SetOp:
		p.setOp(b)
	case *Query:
		p.parenQuery(b)
	default:
		p.str("<nil>")
	}
}

// setOperandOK reports whether child prints bare as an operand of a set
// operation of kind parent: INTERSECT binds tighter than UNION and EXCEPT,
// and all three associate to the left.
func setOperandOK(parent SetOpKind, child QueryBody, right bool) bool {
	s, ok := child.(*SetOp)
	if !ok {
		_, paren := child.(*Query)
		return !paren
	}
	if parent == Intersect {
		return !right && s.Op == Intersect
	}
	return !right || s.Op == Intersect
}

// setOp prints a left-deep chain (q1 UNION q2 UNION ...) iteratively.
func (p *printer) setOp(s *SetOp) {
	chain := []*SetOp{s}
	for {
		n := chain[len(chain)-1]
		l, ok := n.Left.(*SetOp)
		if !ok || !setOperandOK(n.Op, l, false) {
			break
		}
		chain = append(chain, l)
	}
	last := chain[len(chain)-1]
	p.setOperand(last.Op, last.Left, false)
	for i := len(chain) - 1; i >= 0; i-- {
		n := chain[i]
		p.str(" " + n.Op.String())
		if n.All {
			p.str(" ALL")
		}
		p.str(" ")
		p.setOperand(n.Op, n.Right, true)
	}
}

func (p *printer) setOperand(parent SetOpKind, b QueryBody, right bool) {
	if _, ok := b.(*SetOp); ok && !setOperandOK(parent, b, right) {
		p.str("(")
		p.body(b)
		p.str(")")
		return
	}
	p.body(b)
}

func (p *printer) values(v *Values) {
	p.str("VALUES ")
	for i, row := range v.Rows {
		if i > 0 {
			p.str(", ")
		}
		p.str("(")
		p.exprs(row)
		p.str(")")
	}
}

func (p *printer) selectBlock(s *Select) {
	p.str("SELECT ")
	if s.Distinct {
		p.str("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			p.str(", ")
		}
		p.selectItem(it)
	}
	if len(s.From) > 0 {
		p.str(" FROM ")
		for i, t := range s.From {
			if i > 0 {
				p.str(", ")
			}
			p.table(t)
		}
	}
	if s.Where != nil {
		p.str(" WHERE ")
		p.expr(s.Where, PrecLowest)
	}
	for i, g := range s.GroupBy {
		if i == 0 {
			p.str(" GROUP BY ")
		} else {
			p.str(", ")
		}
		p.exprGuarded(g, true, "ROLLUP", "CUBE")
	}
	if s.Having != nil {
		p.str(" HAVING ")
		p.expr(s.Having, PrecLowest)
	}
	if len(s.Windows) > 0 {
		p.str(" WINDOW ")
		for i, w := range s.Windows {
			if i > 0 {
				p.str(", ")
			}
			p.namedWindow(w)
		}
	}
	if s.Qualify != nil {
		p.str(" QUALIFY ")
		p.expr(s.Qualify, PrecLowest)
	}
}

func (p *printer) namedWindow(w *NamedWindow) {
	p.ident(&w.Name)
	p.str(" AS (")
	if w.Spec != nil {
		p.windowSpec(w.Spec)
	}
	p.str(")")
}

func (p *printer) selectItem(it SelectItem) {
	switch it := it.(type) {
	case *SelectExpr:
		p.expr(it.Expr, PrecLowest)
		if it.Alias != nil {
			p.str(" AS ")
			p.ident(it.Alias)
		}
	case *Star:
		if it.Table != nil {
			p.objectName(it.Table)
			p.str(".")
		}
		p.str("*")
	default:
		p.str("<nil>")
	}
}

// ---------------------------------------------------------------------
// FROM

func (p *printer) table(t TableExpr) {
	switch t := t.(type) {
	case *TableName:
		p.objectName(&t.Name)
		if t.AsOf != nil {
			p.str(" FOR SYSTEM_TIME AS OF ")
			p.expr(t.AsOf, PrecLowest)
		}
		p.alias(t.Alias)
	case *PathTable:
		p.str(quoteString(t.Path))
		p.alias(t.Alias)
	case *Derived:
		if t.Lateral {
			p.str("LATERAL ")
		}
		p.parenQuery(t.Query)
		p.alias(t.Alias)
	case *TableFunc:
		if t.Lateral {
			p.str("LATERAL ")
		}
		if t.Wrapped {
			p.str("TABLE(")
		}
		p.ident(&t.Name)
		p.str("(")
		for i, a := range t.Args {
			if i > 0 {
				p.str(", ")
			}
			p.exprGuarded(a, true, "DESCRIPTOR")
		}
		p.str(")")
		if t.Wrapped {
			p.str(")")
		}
		p.alias(t.Alias)
	case *Join:
		p.join(t)
	default:
		p.str("<nil>")
	}
}

func (p *printer) alias(a *TableAlias) {
	if a == nil {
		return
	}
	p.str(" AS ")
	p.tableAlias(a)
}

func (p *printer) tableAlias(a *TableAlias) {
	p.ident(&a.Name)
	if len(a.Columns) > 0 {
		p.str("(")
		p.idents(a.Columns)
		p.str(")")
	}
}

// join prints a join; a join on the left prints bare (joins associate to
// the left), one on the right in parentheses.
func (p *printer) join(j *Join) {
	p.table(j.Left)
	p.str(" ")
	if j.Natural {
		p.str("NATURAL ")
	}
	p.str(j.Kind.String() + " ")
	if r, ok := j.Right.(*Join); ok {
		p.str("(")
		p.join(r)
		p.str(")")
	} else {
		p.table(j.Right)
	}
	if j.On != nil {
		p.str(" ON ")
		p.expr(j.On, PrecLowest)
	}
	if len(j.Using) > 0 {
		p.str(" USING (")
		p.idents(j.Using)
		p.str(")")
	}
}

// ---------------------------------------------------------------------
// Types

func (p *printer) typeName(t *TypeName) {
	if t == nil {
		p.str("<nil>")
		return
	}
	switch t.Name {
	case "ROW":
		p.str("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				p.str(", ")
			}
			p.rowField(f)
		}
		p.str(">")
	case "ARRAY":
		p.str("ARRAY<")
		p.typeName(t.Elem)
		p.str(">")
	case "MAP":
		p.str("MAP<")
		p.typeName(t.Key)
		p.str(", ")
		p.typeName(t.Value)
		p.str(">")
	default:
		p.str(t.Name)
		if len(t.Args) > 0 {
			p.str("(")
			for i, a := range t.Args {
				if i > 0 {
					p.str(", ")
				}
				p.str(strconv.Itoa(a))
			}
			p.str(")")
		}
		switch {
		case t.WithLocalTimeZone:
			p.str(" WITH LOCAL TIME ZONE")
		case t.WithTimeZone:
			p.str(" WITH TIME ZONE")
		}
	}
	if t.NotNull {
		p.str(" NOT NULL")
	}
}

func (p *printer) rowField(f *RowField) {
	p.ident(&f.Name)
	p.str(" ")
	p.typeName(f.Type)
	if f.Comment != "" {
		p.str(" " + quoteString(f.Comment))
	}
}

// ---------------------------------------------------------------------
// Statements

func (p *printer) stmt(s Statement) {
	switch s := s.(type) {
	case *Query:
		p.query(s)
	case *CreateTable:
		p.createTable(s)
	case *CreateView:
		p.str("CREATE ")
		if s.OrReplace {
			p.str("OR REPLACE ")
		}
		if s.Temporary {
			p.str("TEMPORARY ")
		}
		p.str("VIEW ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.objectName(&s.Name)
		if len(s.Columns) > 0 {
			p.str(" (")
			p.idents(s.Columns)
			p.str(")")
		}
		p.str(" AS ")
		p.query(s.Query)
	case *CreateIndex:
		p.str("CREATE ")
		if s.Unique {
			p.str("UNIQUE ")
		}
		p.str("INDEX ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.ident(&s.Name)
		p.str(" ON ")
		p.objectName(&s.Table)
		p.str(" (")
		p.orderItems(s.Columns)
		p.str(")")
	case *Drop:
		p.str("DROP ")
		if s.Temporary {
			p.str("TEMPORARY ")
		}
		p.str(s.Kind + " ")
		if s.IfExists {
			p.str("IF EXISTS ")
		}
		for i := range s.Names {
			if i > 0 {
				p.str(", ")
			}
			p.objectName(&s.Names[i])
		}
	case *Insert:
		p.insert(s)
	case *StatementSet:
		p.str("EXECUTE STATEMENT SET BEGIN ")
		for _, ins := range s.Inserts {
			p.insert(ins)
			p.str("; ")
		}
		p.str("END")
	case *BeginStatementSet:
		p.str("BEGIN STATEMENT SET")
	case *EndStatementSet:
		p.str("END")
	case *Explain:
		p.explain(s)
	case *Set:
		p.str("SET")
		if s.Key != "" {
			p.str(" " + quoteString(s.Key) + " = " + quoteString(s.Value))
		}
	case *Reset:
		p.str("RESET")
		if s.Key != "" {
			p.str(" " + quoteString(s.Key))
		}
	case *Show:
		p.str("SHOW " + s.What)
		if s.Name != nil {
			if s.What == "COLUMNS" {
				p.str(" FROM")
			}
			p.str(" ")
			p.objectName(s.Name)
		}
		if s.Like != nil {
			p.str(" LIKE " + quoteString(s.Like.Value))
		}
	case *Describe:
		p.str("DESCRIBE ")
		switch {
		case s.Name != nil:
			p.objectName(s.Name)
		case s.Path != nil:
			p.str(quoteString(s.Path.Value))
		default:
			p.query(s.Query)
		}
	default:
		p.str("<nil>")
	}
}

func (p *printer) insert(s *Insert) {
	if s.Overwrite {
		p.str("INSERT OVERWRITE ")
	} else {
		p.str("INSERT INTO ")
	}
	p.objectName(&s.Table)
	if len(s.Columns) > 0 {
		p.str(" (")
		p.idents(s.Columns)
		p.str(")")
	}
	p.str(" ")
	p.query(s.Query)
}

func (p *printer) explain(s *Explain) {
	p.str("EXPLAIN")
	if s.Analyze {
		p.str(" ANALYZE")
	}
	if s.Verbose {
		p.str(" VERBOSE")
	}
	if s.Format != "" {
		p.str(" FORMAT " + s.Format)
	}
	if len(s.Options) > 0 {
		p.str(" (")
		for i, o := range s.Options {
			if i > 0 {
				p.str(", ")
			}
			p.str(o.Key + " " + quoteString(o.Value))
		}
		p.str(")")
	}
	p.str(" ")
	p.stmt(s.Stmt)
}

func (p *printer) createTable(s *CreateTable) {
	p.str("CREATE ")
	if s.Temporary {
		p.str("TEMPORARY ")
	}
	p.str("TABLE ")
	if s.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	p.objectName(&s.Name)
	if s.Columns != nil || s.Watermark != nil || s.PrimaryKey != nil {
		p.str(" (")
		sep := ""
		for _, c := range s.Columns {
			p.str(sep)
			p.columnDef(c)
			sep = ", "
		}
		if s.Watermark != nil {
			p.str(sep)
			p.watermark(s.Watermark)
			sep = ", "
		}
		if s.PrimaryKey != nil {
			p.str(sep)
			p.primaryKey(s.PrimaryKey)
		}
		p.str(")")
	}
	if s.Comment != nil {
		p.str(" COMMENT " + quoteString(s.Comment.Value))
	}
	if len(s.PartitionedBy) > 0 {
		p.str(" PARTITIONED BY (")
		p.idents(s.PartitionedBy)
		p.str(")")
	}
	if s.Options != nil {
		p.str(" WITH (")
		p.options(s.Options)
		p.str(")")
	}
	if s.As != nil {
		p.str(" AS ")
		p.query(s.As)
	}
}

func (p *printer) options(opts []*Option) {
	for i, o := range opts {
		if i > 0 {
			p.str(", ")
		}
		p.option(o)
	}
}

func (p *printer) option(o *Option) { p.str(quoteString(o.Key) + " = " + quoteString(o.Value)) }

func (p *printer) columnDef(c *ColumnDef) {
	p.ident(&c.Name)
	if c.Computed != nil {
		p.str(" AS ")
		p.expr(c.Computed, PrecLowest)
	} else {
		p.str(" ")
		p.typeName(c.Type)
	}
	if c.Metadata != nil {
		p.str(" ")
		p.meta(c.Metadata)
	}
	if c.NotNull {
		p.str(" NOT NULL")
	}
	if c.PrimaryKey {
		p.str(" PRIMARY KEY NOT ENFORCED")
	}
	if c.Unique {
		p.str(" UNIQUE")
	}
	if c.Comment != nil {
		p.str(" COMMENT " + quoteString(c.Comment.Value))
	}
}

func (p *printer) meta(m *Meta) {
	p.str("METADATA")
	if m.Key != "" {
		p.str(" FROM " + quoteString(m.Key))
	}
	if m.Virtual {
		p.str(" VIRTUAL")
	}
}

func (p *printer) watermark(w *WatermarkDef) {
	p.str("WATERMARK FOR ")
	p.ident(&w.Column)
	p.str(" AS ")
	p.expr(w.Expr, PrecLowest)
}

func (p *printer) primaryKey(k *PrimaryKey) {
	p.str("PRIMARY KEY (")
	p.idents(k.Columns)
	p.str(")")
	if k.NotEnforced {
		p.str(" NOT ENFORCED")
	}
}

// ---------------------------------------------------------------------
// String methods

func render(f func(p *printer)) string {
	var p printer
	f(&p)
	return p.String()
}

func (x *Ident) String() string       { return render(func(p *printer) { p.ident(x) }) }
func (x *ObjectName) String() string  { return render(func(p *printer) { p.objectName(x) }) }
func (x *Query) String() string       { return render(func(p *printer) { p.query(x) }) }
func (x *With) String() string        { return render(func(p *printer) { p.with(x) }) }
func (x *CTE) String() string         { return render(func(p *printer) { p.cte(x) }) }
func (x *SetOp) String() string       { return render(func(p *printer) { p.setOp(x) }) }
func (x *Select) String() string      { return render(func(p *printer) { p.selectBlock(x) }) }
func (x *Values) String() string      { return render(func(p *printer) { p.values(x) }) }
func (x *SelectExpr) String() string  { return render(func(p *printer) { p.selectItem(x) }) }
func (x *Star) String() string        { return render(func(p *printer) { p.selectItem(x) }) }
func (x *OrderItem) String() string   { return render(func(p *printer) { p.orderItem(x) }) }
func (x *NamedWindow) String() string { return render(func(p *printer) { p.namedWindow(x) }) }
func (x *TableAlias) String() string  { return render(func(p *printer) { p.tableAlias(x) }) }
func (x *TableName) String() string   { return render(func(p *printer) { p.table(x) }) }
func (x *PathTable) String() string   { return render(func(p *printer) { p.table(x) }) }
func (x *Derived) String() string     { return render(func(p *printer) { p.table(x) }) }
func (x *TableFunc) String() string   { return render(func(p *printer) { p.table(x) }) }
func (x *Join) String() string        { return render(func(p *printer) { p.join(x) }) }

func (x *ColumnRef) String() string    { return render(func(p *printer) { p.exprBare(x) }) }
func (x *NumberLit) String() string    { return render(func(p *printer) { p.exprBare(x) }) }
func (x *StringLit) String() string    { return render(func(p *printer) { p.exprBare(x) }) }
func (x *BoolLit) String() string      { return render(func(p *printer) { p.exprBare(x) }) }
func (x *NullLit) String() string      { return render(func(p *printer) { p.exprBare(x) }) }
func (x *TypedLit) String() string     { return render(func(p *printer) { p.exprBare(x) }) }
func (x *IntervalLit) String() string  { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Unary) String() string        { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Binary) String() string       { return render(func(p *printer) { p.exprBare(x) }) }
func (x *IsNull) String() string       { return render(func(p *printer) { p.exprBare(x) }) }
func (x *IsBool) String() string       { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Between) String() string      { return render(func(p *printer) { p.exprBare(x) }) }
func (x *InList) String() string       { return render(func(p *printer) { p.exprBare(x) }) }
func (x *InSubquery) String() string   { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Exists) String() string       { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Subquery) String() string     { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Quantified) String() string   { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Like) String() string         { return render(func(p *printer) { p.exprBare(x) }) }
func (x *When) String() string         { return render(func(p *printer) { p.when(x) }) }
func (x *Case) String() string         { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Cast) String() string         { return render(func(p *printer) { p.exprBare(x) }) }
func (x *FuncCall) String() string     { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Extract) String() string      { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Substring) String() string    { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Trim) String() string         { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Position) String() string     { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Tuple) String() string        { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Array) String() string        { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Subscript) String() string    { return render(func(p *printer) { p.exprBare(x) }) }
func (x *TableArg) String() string     { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Descriptor) String() string   { return render(func(p *printer) { p.exprBare(x) }) }
func (x *NamedArg) String() string     { return render(func(p *printer) { p.exprBare(x) }) }
func (x *GroupingSets) String() string { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Rollup) String() string       { return render(func(p *printer) { p.exprBare(x) }) }
func (x *Cube) String() string         { return render(func(p *printer) { p.exprBare(x) }) }

func (x *WindowSpec) String() string { return render(func(p *printer) { p.windowSpec(x) }) }
func (x *Frame) String() string      { return render(func(p *printer) { p.frame(x) }) }
func (x *FrameBound) String() string { return render(func(p *printer) { p.frameBound(x) }) }
func (x *TypeName) String() string   { return render(func(p *printer) { p.typeName(x) }) }
func (x *RowField) String() string   { return render(func(p *printer) { p.rowField(x) }) }

func (x *CreateTable) String() string       { return render(func(p *printer) { p.stmt(x) }) }
func (x *ColumnDef) String() string         { return render(func(p *printer) { p.columnDef(x) }) }
func (x *Meta) String() string              { return render(func(p *printer) { p.meta(x) }) }
func (x *WatermarkDef) String() string      { return render(func(p *printer) { p.watermark(x) }) }
func (x *PrimaryKey) String() string        { return render(func(p *printer) { p.primaryKey(x) }) }
func (x *Option) String() string            { return render(func(p *printer) { p.option(x) }) }
func (x *CreateView) String() string        { return render(func(p *printer) { p.stmt(x) }) }
func (x *CreateIndex) String() string       { return render(func(p *printer) { p.stmt(x) }) }
func (x *Drop) String() string              { return render(func(p *printer) { p.stmt(x) }) }
func (x *Insert) String() string            { return render(func(p *printer) { p.stmt(x) }) }
func (x *StatementSet) String() string      { return render(func(p *printer) { p.stmt(x) }) }
func (x *BeginStatementSet) String() string { return render(func(p *printer) { p.stmt(x) }) }
func (x *EndStatementSet) String() string   { return render(func(p *printer) { p.stmt(x) }) }
func (x *Explain) String() string           { return render(func(p *printer) { p.stmt(x) }) }
func (x *Set) String() string               { return render(func(p *printer) { p.stmt(x) }) }
func (x *Reset) String() string             { return render(func(p *printer) { p.stmt(x) }) }
func (x *Show) String() string              { return render(func(p *printer) { p.stmt(x) }) }
func (x *Describe) String() string          { return render(func(p *printer) { p.stmt(x) }) }
