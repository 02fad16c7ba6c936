package plan

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// Expr is a scalar expression of the logical plan: bound (names resolved
// to input positions) and typed, but still rewritable. Rules remap its
// column references, substitute sub-expressions and fold constants; the
// physical plan compiles it once into an exec/expr.Expr (Compile).
//
// A node is immutable. Every constructor type-checks by building the
// executable form of the node over its children's executable forms, so a
// plan never holds an expression the executor cannot run, and the types
// it reports are the ones the kernels produce.
type Expr interface {
	Type() arrow.DataType
	// String is the expression in SQL terms, as EXPLAIN shows it.
	String() string
	Children() []Expr
	// WithChildren rebuilds the node over new children of the same count.
	WithChildren(ch []Expr) (Expr, error)
	// Compile is the executable form.
	Compile() expr.Expr
	// hash identifies the expression structurally (see Equal).
	hash() uint64
}

var hashSeed = maphash.MakeSeed()

func hashString(s string) uint64 { return maphash.String(hashSeed, s) }

func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
	return h
}

// ColRef references column Index of the input.
type ColRef struct {
	Index int
	Name  string
	// Qual is the table or alias the name was resolved in ("" when
	// none), for EXPLAIN's join conditions.
	Qual string
	T    arrow.DataType
	// Pos is where the reference was written (a byte offset into the
	// statement; -1 when made by a rule), for errors above an aggregate.
	Pos int
}

// NewColRef references input column i.
func NewColRef(i int, name string, t arrow.DataType) *ColRef {
	return &ColRef{Index: i, Name: name, T: t, Pos: -1}
}

func (c *ColRef) Type() arrow.DataType              { return c.T }
func (c *ColRef) String() string                    { return c.Compile().String() }
func (c *ColRef) Children() []Expr                  { return nil }
func (c *ColRef) WithChildren([]Expr) (Expr, error) { return c, nil }
func (c *ColRef) Compile() expr.Expr                { return expr.Col(c.Index, c.T, c.Name) }
func (c *ColRef) hash() uint64                      { return mix(hashString("col"), uint64(c.Index)) }

// Const is a constant.
type Const struct {
	Lit *expr.Literal
}

// NewConst is the constant v of type t (v in row form, nil for NULL).
func NewConst(v any, t arrow.DataType) *Const { return &Const{Lit: expr.Lit(v, t)} }

func (c *Const) Type() arrow.DataType              { return c.Lit.Type() }
func (c *Const) String() string                    { return c.Lit.String() }
func (c *Const) Children() []Expr                  { return nil }
func (c *Const) WithChildren([]Expr) (Expr, error) { return c, nil }
func (c *Const) Compile() expr.Expr                { return c.Lit }
func (c *Const) Value() any                        { return c.Lit.Value() }
func (c *Const) hash() uint64 {
	return mix(hashString("const:"+c.Lit.Type().String()), hashString(fmt.Sprint(c.Lit.Value())))
}

// IsNull reports whether c is NULL.
func (c *Const) IsNull() bool { return c.Lit.Value() == nil }

// Call is any other expression: an operator, a function, CASE, CAST. Op
// names it canonically (two calls with the same Op over equal arguments
// are equal); build makes the executable form from the arguments'.
type Call struct {
	Op    string
	Args  []Expr
	build func(args []expr.Expr) (expr.Expr, error)
	x     expr.Expr
	h     uint64
}

// NewCall builds a call, type-checking it.
func NewCall(op string, args []Expr, build func([]expr.Expr) (expr.Expr, error)) (*Call, error) {
	xs := make([]expr.Expr, len(args))
	h := hashString(op)
	for i, a := range args {
		xs[i] = a.Compile()
		h = mix(h, a.hash())
	}
	x, err := build(xs)
	if err != nil {
		return nil, err
	}
	return &Call{Op: op, Args: args, build: build, x: x, h: h}, nil
}

func (c *Call) Type() arrow.DataType { return c.x.Type() }
func (c *Call) String() string       { return c.x.String() }
func (c *Call) Children() []Expr     { return c.Args }
func (c *Call) Compile() expr.Expr   { return c.x }
func (c *Call) hash() uint64         { return c.h }
func (c *Call) WithChildren(ch []Expr) (Expr, error) {
	return NewCall(c.Op, ch, c.build)
}

// Equal reports whether a and b are the same expression: the same
// operators over the same columns and constants.
func Equal(a, b Expr) bool {
	if a == b {
		return true
	}
	if a.hash() != b.hash() || !arrow.TypeEqual(a.Type(), b.Type()) {
		return false
	}
	switch x := a.(type) {
	case *ColRef:
		y, ok := b.(*ColRef)
		return ok && x.Index == y.Index
	case *Const:
		y, ok := b.(*Const)
		return ok && fmt.Sprint(x.Value()) == fmt.Sprint(y.Value())
	case *Call:
		y, ok := b.(*Call)
		if !ok || x.Op != y.Op || len(x.Args) != len(y.Args) {
			return false
		}
		for i := range x.Args {
			if !Equal(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	case *OuterRef:
		y, ok := b.(*OuterRef)
		return ok && x.Level == y.Level && x.Index == y.Index
	}
	return false // subqueries, aggregate and window calls: by identity
}

// ---------------------------------------------------------------------
// Binding-time placeholders: nodes that must be gone before the plan
// compiles (the decorrelation rule removes subqueries and outer
// references; the binder replaces aggregate and window calls by columns).

// placeholder is the executable stand-in of a node that cannot run: it
// gives its type to the constructors of the calls above it.
type placeholder struct {
	t    arrow.DataType
	text string
}

var errNotExecutable = errors.New("internal error: a planning placeholder reached execution")

func (p *placeholder) Type() arrow.DataType          { return p.t }
func (p *placeholder) String() string                { return p.text }
func (p *placeholder) EvalRow(exec.Row) (any, error) { return nil, errNotExecutable }
func (p *placeholder) EvalColumnar(memory.Allocator, arrow.RecordBatch) (arrow.Array, error) {
	return nil, errNotExecutable
}

// OuterRef is a correlated reference: column Index of the relation Level
// scopes out (1: the query the subquery sits in).
type OuterRef struct {
	Level int
	Index int
	Name  string
	T     arrow.DataType
}

func (o *OuterRef) Type() arrow.DataType              { return o.T }
func (o *OuterRef) String() string                    { return "outer." + o.Name }
func (o *OuterRef) Children() []Expr                  { return nil }
func (o *OuterRef) WithChildren([]Expr) (Expr, error) { return o, nil }
func (o *OuterRef) Compile() expr.Expr                { return &placeholder{o.T, o.String()} }
func (o *OuterRef) hash() uint64 {
	return mix(mix(hashString("outer"), uint64(o.Level)), uint64(o.Index))
}

// SubqueryKind is what a subquery expression asks of its query.
type SubqueryKind int

const (
	SubScalar     SubqueryKind = iota // (SELECT x ...): its one value, NULL when empty
	SubExists                         // EXISTS (...)
	SubIn                             // X IN (SELECT ...)
	SubQuantified                     // X op ANY|ALL (SELECT ...)
)

// SubqueryExpr is a subquery in an expression. Plan is bound with the
// enclosing query's scope as its outer scope (OuterRef). X is the left
// operand of IN and quantified comparisons.
type SubqueryExpr struct {
	Kind SubqueryKind
	Plan Node
	X    Expr
	Op   string // quantified comparison operator
	All  bool   // quantified: ALL (else ANY)
	Text string // the subquery as written, for errors and EXPLAIN
	T    arrow.DataType
	id   uint64
}

var subqueryIDs uint64

func (s *SubqueryExpr) Type() arrow.DataType { return s.T }
func (s *SubqueryExpr) String() string       { return s.Text }
func (s *SubqueryExpr) Children() []Expr {
	if s.X == nil {
		return nil
	}
	return []Expr{s.X}
}
func (s *SubqueryExpr) WithChildren(ch []Expr) (Expr, error) {
	c := *s
	if len(ch) == 1 {
		c.X = ch[0]
	}
	return &c, nil
}
func (s *SubqueryExpr) Compile() expr.Expr { return &placeholder{s.T, s.Text} }
func (s *SubqueryExpr) hash() uint64       { return mix(hashString("subquery"), s.id) }

// ---------------------------------------------------------------------
// Traversal

// Transform rewrites e bottom-up: f sees each node after its children were
// rewritten and returns its replacement (or the node itself).
func Transform(e Expr, f func(Expr) (Expr, error)) (Expr, error) {
	ch := e.Children()
	if len(ch) > 0 {
		var next []Expr
		for i, c := range ch {
			nc, err := Transform(c, f)
			if err != nil {
				return nil, err
			}
			if nc != c && next == nil {
				next = append([]Expr(nil), ch...)
			}
			if next != nil {
				next[i] = nc
			}
		}
		if next != nil {
			var err error
			if e, err = e.WithChildren(next); err != nil {
				return nil, err
			}
		}
	}
	return f(e)
}

// TransformDown rewrites e top-down: where f returns a replacement
// (replaced = true) the node's children are not visited.
func TransformDown(e Expr, f func(Expr) (Expr, bool, error)) (Expr, error) {
	r, replaced, err := f(e)
	if err != nil || replaced {
		return r, err
	}
	ch := e.Children()
	if len(ch) == 0 {
		return e, nil
	}
	var next []Expr
	for i, c := range ch {
		nc, err := TransformDown(c, f)
		if err != nil {
			return nil, err
		}
		if nc != c && next == nil {
			next = append([]Expr(nil), ch...)
		}
		if next != nil {
			next[i] = nc
		}
	}
	if next == nil {
		return e, nil
	}
	return e.WithChildren(next)
}

// Visit calls f on e and its descendants, pre-order; f returns false to
// skip a node's children.
func Visit(e Expr, f func(Expr) bool) {
	if !f(e) {
		return
	}
	for _, c := range e.Children() {
		Visit(c, f)
	}
}

// Columns lists the input columns e references (ascending, once each).
func Columns(e Expr) []int {
	var seen map[int]bool
	var out []int
	Visit(e, func(x Expr) bool {
		if c, ok := x.(*ColRef); ok {
			if seen == nil {
				seen = map[int]bool{}
			}
			if !seen[c.Index] {
				seen[c.Index] = true
				out = append(out, c.Index)
			}
		}
		return true
	})
	slices.Sort(out)
	return out
}

// Remap rewrites e's column references through m (old index -> new); a
// reference m maps to a negative index is an internal error.
func Remap(e Expr, m []int) (Expr, error) {
	return Transform(e, func(x Expr) (Expr, error) {
		c, ok := x.(*ColRef)
		if !ok {
			return x, nil
		}
		if c.Index >= len(m) || m[c.Index] < 0 {
			return nil, fmt.Errorf("internal error: column %s (%d) is not available here", c.Name, c.Index)
		}
		if m[c.Index] == c.Index {
			return c, nil
		}
		n := *c
		n.Index = m[c.Index]
		return &n, nil
	})
}

// Shift adds d to every column reference.
func Shift(e Expr, d int) Expr {
	if d == 0 {
		return e
	}
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok {
			n := *c
			n.Index += d
			return &n, nil
		}
		return x, nil
	})
	return out
}

// Substitute replaces each column reference i by subs[i] (a projection's
// expression, pushing a predicate below it).
func Substitute(e Expr, subs []Expr) (Expr, error) {
	return Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok {
			if c.Index >= len(subs) {
				return nil, fmt.Errorf("internal error: column %d beyond the projection", c.Index)
			}
			return subs[c.Index], nil
		}
		return x, nil
	})
}

// Contains reports whether f holds for e or a descendant.
func Contains(e Expr, f func(Expr) bool) bool {
	found := false
	Visit(e, func(x Expr) bool {
		if found {
			return false
		}
		if f(x) {
			found = true
			return false
		}
		return true
	})
	return found
}

func hasSubquery(e Expr) bool {
	return Contains(e, func(x Expr) bool { _, ok := x.(*SubqueryExpr); return ok })
}

func hasOuterRef(e Expr) bool {
	return Contains(e, func(x Expr) bool { _, ok := x.(*OuterRef); return ok })
}

// Conjuncts splits a predicate at its top-level ANDs.
func Conjuncts(e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Op == "AND" {
		return append(Conjuncts(c.Args[0]), Conjuncts(c.Args[1])...)
	}
	return []Expr{e}
}

// And joins predicates with AND (nil for none).
func And(ps ...Expr) (Expr, error) {
	var out Expr
	for _, p := range ps {
		if p == nil {
			continue
		}
		if out == nil {
			out = p
			continue
		}
		var err error
		if out, err = binaryCall("AND", out, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// binaryCall is an operator of expr.NewBinary: arithmetic, comparison,
// AND, OR.
func binaryCall(op string, l, r Expr) (Expr, error) {
	op = strings.ToUpper(op)
	return NewCall(op, []Expr{l, r}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewBinary(op, a[0], a[1]) })
}

func notCall(e Expr) (Expr, error) {
	return NewCall("NOT", []Expr{e}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewNot(a[0]) })
}

func isNullCall(e Expr, not bool) (Expr, error) {
	op := "IS NULL"
	if not {
		op = "IS NOT NULL"
	}
	return NewCall(op, []Expr{e}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewIsNull(a[0], not), nil })
}

func funcCall(name string, args ...Expr) (Expr, error) {
	name = strings.ToLower(name)
	return NewCall("fn:"+name, args, func(a []expr.Expr) (expr.Expr, error) { return expr.NewFunc(name, a) })
}

func castCall(e Expr, t arrow.DataType) (Expr, error) {
	if arrow.TypeEqual(e.Type(), t) {
		return e, nil
	}
	return NewCall("CAST:"+t.String(), []Expr{e}, func(a []expr.Expr) (expr.Expr, error) { return expr.NewCast(a[0], t) })
}

// coerce widens e to t implicitly (as a UNION or an INSERT does).
func coerce(e Expr, t arrow.DataType) (Expr, error) {
	if arrow.TypeEqual(e.Type(), t) {
		return e, nil
	}
	return NewCall("COERCE:"+t.String(), []Expr{e}, func(a []expr.Expr) (expr.Expr, error) { return expr.Coerce(a[0], t) })
}

// isTrue is e = TRUE with NULL as FALSE: COALESCE(e, FALSE).
func nullAsFalse(e Expr) (Expr, error) {
	return funcCall("coalesce", e, NewConst(false, arrow.FixedWidthTypes.Boolean))
}

// DisplayText is e in SQL terms with its columns qualified by the tables
// they came from (b.auction = a.id), for a join's condition in EXPLAIN.
func DisplayText(e Expr) string {
	q, err := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok && c.Qual != "" {
			n := *c
			n.Name, n.Qual = c.Qual+"."+c.Name, ""
			return &n, nil
		}
		return x, nil
	})
	if err != nil {
		return e.String()
	}
	return q.String()
}
