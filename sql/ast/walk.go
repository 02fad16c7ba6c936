package ast

// A Visitor's Visit is called for each node Walk meets. If it returns a
// non-nil visitor w, Walk visits the node's children with w, then calls
// w.Visit(nil).
type Visitor interface {
	Visit(n Node) (w Visitor)
}

// Walk traverses a tree depth-first in source order: it calls
// v.Visit(n), then walks every child of n (names, types and subqueries
// included) with the visitor that returned, then calls Visit(nil). As
// go/ast.Walk.
func Walk(v Visitor, n Node) {
	if v = v.Visit(n); v == nil {
		return
	}
	switch n := n.(type) {
	case *Ident, *NumberLit, *StringLit, *BoolLit, *NullLit, *TypedLit, *IntervalLit,
		*Meta, *Option, *BeginStatementSet, *EndStatementSet, *Set, *Reset:
		// leaves
	case *ObjectName:
		walkIdents(v, n.Parts)

	// Queries
	case *Query:
		if n.With != nil {
			Walk(v, n.With)
		}
		walkNode(v, n.Body)
		walkOrder(v, n.OrderBy)
		walkNode(v, n.Limit)
		walkNode(v, n.Offset)
	case *With:
		for _, c := range n.CTEs {
			Walk(v, c)
		}
	case *CTE:
		Walk(v, &n.Name)
		walkIdents(v, n.Columns)
		walkQuery(v, n.Query)
	case *SetOp:
		walkNode(v, n.Left)
		walkNode(v, n.Right)
	case *Select:
		for _, it := range n.Items {
			walkNode(v, it)
		}
		for _, t := range n.From {
			walkNode(v, t)
		}
		walkNode(v, n.Where)
		walkExprs(v, n.GroupBy)
		walkNode(v, n.Having)
		for _, w := range n.Windows {
			Walk(v, w)
		}
		walkNode(v, n.Qualify)
	case *Values:
		for _, row := range n.Rows {
			walkExprs(v, row)
		}
	case *SelectExpr:
		walkNode(v, n.Expr)
		if n.Alias != nil {
			Walk(v, n.Alias)
		}
	case *Star:
		if n.Table != nil {
			Walk(v, n.Table)
		}
	case *OrderItem:
		walkNode(v, n.Expr)
	case *NamedWindow:
		Walk(v, &n.Name)
		if n.Spec != nil {
			Walk(v, n.Spec)
		}

	// FROM
	case *TableAlias:
		Walk(v, &n.Name)
		walkIdents(v, n.Columns)
	case *TableName:
		Walk(v, &n.Name)
		walkNode(v, n.AsOf)
		walkAlias(v, n.Alias)
	case *PathTable:
		walkAlias(v, n.Alias)
	case *Derived:
		walkQuery(v, n.Query)
		walkAlias(v, n.Alias)
	case *TableFunc:
		Walk(v, &n.Name)
		walkExprs(v, n.Args)
		walkAlias(v, n.Alias)
	case *Join:
		walkNode(v, n.Left)
		walkNode(v, n.Right)
		walkNode(v, n.On)
		walkIdents(v, n.Using)

	// Expressions
	case *ColumnRef:
		walkIdents(v, n.Parts)
	case *Unary:
		walkNode(v, n.X)
	case *Binary:
		walkNode(v, n.L)
		walkNode(v, n.R)
	case *IsNull:
		walkNode(v, n.X)
	case *IsBool:
		walkNode(v, n.X)
	case *Between:
		walkNode(v, n.X)
		walkNode(v, n.Lo)
		walkNode(v, n.Hi)
	case *InList:
		walkNode(v, n.X)
		walkExprs(v, n.List)
	case *InSubquery:
		walkNode(v, n.X)
		walkQuery(v, n.Query)
	case *Exists:
		walkQuery(v, n.Query)
	case *Subquery:
		walkQuery(v, n.Query)
	case *Quantified:
		walkNode(v, n.X)
		walkQuery(v, n.Query)
	case *Like:
		walkNode(v, n.X)
		walkNode(v, n.Pattern)
		walkNode(v, n.Escape)
	case *When:
		walkNode(v, n.Cond)
		walkNode(v, n.Result)
	case *Case:
		walkNode(v, n.Operand)
		for _, w := range n.Whens {
			Walk(v, w)
		}
		walkNode(v, n.Else)
	case *Cast:
		walkNode(v, n.X)
		if n.Type != nil {
			Walk(v, n.Type)
		}
	case *FuncCall:
		Walk(v, &n.Name)
		walkExprs(v, n.Args)
		walkOrder(v, n.OrderBy)
		walkNode(v, n.Filter)
		if n.Over != nil {
			Walk(v, n.Over)
		}
	case *Extract:
		walkNode(v, n.X)
	case *Substring:
		walkNode(v, n.X)
		walkNode(v, n.From)
		walkNode(v, n.For)
	case *Trim:
		walkNode(v, n.Chars)
		walkNode(v, n.X)
	case *Position:
		walkNode(v, n.Sub)
		walkNode(v, n.X)
	case *Tuple:
		walkExprs(v, n.Exprs)
	case *Array:
		walkExprs(v, n.Elems)
	case *Subscript:
		walkNode(v, n.X)
		walkNode(v, n.Index)
	case *TableArg:
		Walk(v, &n.Name)
		walkExprs(v, n.PartitionBy)
	case *Descriptor:
		walkIdents(v, n.Columns)
	case *NamedArg:
		Walk(v, &n.Name)
		walkNode(v, n.Value)
	case *GroupingSets:
		for _, s := range n.Sets {
			walkExprs(v, s)
		}
	case *Rollup:
		walkExprs(v, n.Exprs)
	case *Cube:
		walkExprs(v, n.Exprs)

	// Windows
	case *WindowSpec:
		if n.Base != nil {
			Walk(v, n.Base)
		}
		walkExprs(v, n.PartitionBy)
		walkOrder(v, n.OrderBy)
		// A Frame is no Node (its End field hides Span.End): its bounds
		// are the window's children.
		if f := n.Frame; f != nil {
			if f.Start != nil {
				Walk(v, f.Start)
			}
			if f.End != nil {
				Walk(v, f.End)
			}
		}
	case *FrameBound:
		walkNode(v, n.Offset)

	// Types
	case *TypeName:
		for _, f := range n.Fields {
			Walk(v, f)
		}
		for _, t := range []*TypeName{n.Elem, n.Key, n.Value} {
			if t != nil {
				Walk(v, t)
			}
		}
	case *RowField:
		Walk(v, &n.Name)
		if n.Type != nil {
			Walk(v, n.Type)
		}

	// Statements
	case *CreateTable:
		Walk(v, &n.Name)
		for _, c := range n.Columns {
			Walk(v, c)
		}
		if n.Watermark != nil {
			Walk(v, n.Watermark)
		}
		if n.PrimaryKey != nil {
			Walk(v, n.PrimaryKey)
		}
		if n.Comment != nil {
			Walk(v, n.Comment)
		}
		walkIdents(v, n.PartitionedBy)
		for _, o := range n.Options {
			Walk(v, o)
		}
		walkQuery(v, n.As)
	case *ColumnDef:
		Walk(v, &n.Name)
		if n.Type != nil {
			Walk(v, n.Type)
		}
		walkNode(v, n.Computed)
		if n.Metadata != nil {
			Walk(v, n.Metadata)
		}
		if n.Comment != nil {
			Walk(v, n.Comment)
		}
	case *WatermarkDef:
		Walk(v, &n.Column)
		walkNode(v, n.Expr)
	case *PrimaryKey:
		walkIdents(v, n.Columns)
	case *CreateView:
		Walk(v, &n.Name)
		walkIdents(v, n.Columns)
		walkQuery(v, n.Query)
	case *CreateIndex:
		Walk(v, &n.Name)
		Walk(v, &n.Table)
		walkOrder(v, n.Columns)
	case *Drop:
		for i := range n.Names {
			Walk(v, &n.Names[i])
		}
	case *Insert:
		Walk(v, &n.Table)
		walkIdents(v, n.Columns)
		walkQuery(v, n.Query)
	case *StatementSet:
		for _, ins := range n.Inserts {
			Walk(v, ins)
		}
	case *Explain:
		for _, o := range n.Options {
			Walk(v, o)
		}
		walkNode(v, n.Stmt)
	case *Show:
		if n.Name != nil {
			Walk(v, n.Name)
		}
		if n.Like != nil {
			Walk(v, n.Like)
		}
	case *Describe:
		if n.Name != nil {
			Walk(v, n.Name)
		}
		if n.Path != nil {
			Walk(v, n.Path)
		}
		walkQuery(v, n.Query)
	}
	v.Visit(nil)
}

// walkNode walks n unless it is nil (an absent optional child: the
// interface may hold no value at all).
func walkNode(v Visitor, n Node) {
	if n != nil {
		Walk(v, n)
	}
}

func walkQuery(v Visitor, q *Query) {
	if q != nil {
		Walk(v, q)
	}
}

func walkAlias(v Visitor, a *TableAlias) {
	if a != nil {
		Walk(v, a)
	}
}

func walkIdents(v Visitor, ids []Ident) {
	for i := range ids {
		Walk(v, &ids[i])
	}
}

func walkExprs(v Visitor, es []Expr) {
	for _, e := range es {
		walkNode(v, e)
	}
}

func walkOrder(v Visitor, items []*OrderItem) {
	for _, o := range items {
		Walk(v, o)
	}
}

type inspector func(Node) bool

func (f inspector) Visit(n Node) Visitor {
	if f(n) {
		return f
	}
	return nil
}

// Inspect traverses a tree as Walk does, calling f(n) for each node n
// and f(nil) after its children; f returning false skips n's children.
func Inspect(n Node, f func(Node) bool) { Walk(inspector(f), n) }
