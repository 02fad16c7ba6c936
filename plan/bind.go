package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// BindOptions configure binding.
type BindOptions struct {
	// Streaming plans every input as a stream (Flink's
	// 'execution.runtime-mode' = 'streaming'): a join of bounded inputs is
	// a streaming join and a GROUP BY a changelog, as they would be over
	// unbounded inputs. Otherwise bounded inputs get batch operators.
	Streaming bool
	// Text is the statement the query was parsed from: errors point into
	// it, and a select item without an alias is named by its text.
	Text string
	// Now is the statement's clock (CURRENT_TIMESTAMP and friends read it,
	// so every call in one statement agrees); zero: read when bound.
	Now time.Time
}

// Bind turns a parsed query into a logical plan over cat: names resolved,
// types checked, no AST left. The plan still holds subqueries as
// expressions and join conditions unsplit; Optimize's rules take it from
// there.
func Bind(cat *Catalog, q *ast.Query, opts BindOptions) (n Node, err error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	b := &binder{cat: cat, streaming: opts.Streaming, text: opts.Text, clock: expr.WithStatementTime(context.Background(), now)}
	defer func() {
		// A bug in the binder must surface as an error, not take the
		// session down; it names the statement's start.
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("internal error while planning: %v", r)
		}
	}()
	n, _, err = b.bindQuery(q, nil)
	return n, err
}

// BindNames is Bind that also returns the output column names as the
// user sees them (the schema's names may carry a hidden row kind).
type binder struct {
	cat  *Catalog
	text string // the text the AST being bound was parsed from
	// views being expanded, to catch a cycle.
	views []string
	// streaming: plan bounded inputs as streams too (BindOptions).
	streaming bool
	// ctes is the innermost WITH's frame.
	ctes *cteFrame
	// clock carries the statement time to the clock functions.
	clock context.Context
}

// cteFrame is the CTEs one WITH defines; parent is the enclosing WITH's.
type cteFrame struct {
	parent *cteFrame
	defs   map[string]*cteDef
}

type cteDef struct {
	name string
	node Node
	sc   *scope
}

// finite reports whether n's result is finite as planned: never in
// streaming mode.
func (b *binder) finite(n Node) bool { return !b.streaming && Finite(n) }

// errAt is an error at node n of the text being bound.
func (b *binder) errAt(n ast.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if n == nil || b.text == "" || n.Pos() < 0 || n.Pos() > len(b.text) {
		return errors.New(msg)
	}
	return sql.ErrorAt(b.text, n.Pos(), msg)
}

// wrapAt gives err the position of n unless it has one.
func (b *binder) wrapAt(n ast.Node, err error) error {
	var se *sql.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	return b.errAt(n, "%s", err.Error())
}

// source is the text of n as the user wrote it.
func (b *binder) source(n ast.Node) string {
	if b.text != "" && n.Pos() >= 0 && n.End() <= len(b.text) && n.Pos() < n.End() {
		return strings.TrimSpace(b.text[n.Pos():n.End()])
	}
	return n.String()
}

// bindQuery binds WITH, the body, ORDER BY and LIMIT. outer is the scope
// of the query a subquery sits in (nil at the top).
func (b *binder) bindQuery(q *ast.Query, outer *scope) (Node, *scope, error) {
	if q.With != nil {
		if q.With.Recursive {
			return nil, nil, b.errAt(q.With, "WITH RECURSIVE is not supported")
		}
		frame := &cteFrame{parent: b.ctes, defs: map[string]*cteDef{}}
		b.ctes = frame
		defer func() { b.ctes = frame.parent }()
		for _, c := range q.With.CTEs {
			key := strings.ToLower(c.Name.Name)
			if _, dup := frame.defs[key]; dup {
				return nil, nil, b.errAt(c, "WITH query name '%s' specified more than once", c.Name.Name)
			}
			n, sc, err := b.bindQuery(c.Query, nil)
			if err != nil {
				return nil, nil, err
			}
			if sc.changelog {
				return nil, nil, b.errAt(c, "WITH query '%s' is an updating result; use it in FROM as a subquery", c.Name.Name)
			}
			n, sc, err = b.renameColumns(n, sc, c.Columns, c)
			if err != nil {
				return nil, nil, err
			}
			frame.defs[key] = &cteDef{name: c.Name.Name, node: n, sc: sc}
		}
	}
	if sel, ok := q.Body.(*ast.Select); ok {
		return b.bindSelect(sel, q, outer)
	}
	n, sc, err := b.bindBody(q.Body, outer)
	if err != nil {
		return nil, nil, err
	}
	return b.orderLimitOutput(n, sc, q)
}

// bindBody binds a set operation, VALUES, a parenthesised query or a
// SELECT without ORDER BY of its own.
func (b *binder) bindBody(body ast.QueryBody, outer *scope) (Node, *scope, error) {
	switch x := body.(type) {
	case *ast.Select:
		return b.bindSelect(x, nil, outer)
	case *ast.Query:
		return b.bindQuery(x, outer)
	case *ast.Values:
		return b.bindValues(x, outer)
	case *ast.SetOp:
		return b.bindSetOp(x, outer)
	}
	return nil, nil, b.errAt(body, "unsupported query form")
}

// renameColumns applies a column list (t(a, b), a CTE's or a view's
// names) to a relation.
func (b *binder) renameColumns(n Node, sc *scope, names []ast.Ident, at ast.Node) (Node, *scope, error) {
	if len(names) == 0 {
		return n, sc, nil
	}
	first := 0
	if sc.changelog {
		first = 1
	}
	if len(names) > len(sc.cols)-first {
		return nil, nil, b.errAt(at, "%d column names given for %d columns", len(names), len(sc.cols)-first)
	}
	out := &scope{changelog: sc.changelog, outer: sc.outer, cols: append([]column(nil), sc.cols...)}
	exprs := make([]Expr, len(sc.cols))
	fnames := make([]string, len(sc.cols))
	for i, c := range sc.cols {
		if j := i - first; j >= 0 && j < len(names) {
			out.cols[i].name = names[j].Name
		}
		exprs[i] = NewColRef(i, c.name, c.typ)
		fnames[i] = out.cols[i].name
	}
	return NewProject(n, exprs, fnames), out, nil
}

// bindValues binds VALUES (...), (...): a constant relation. Every row has
// as many values as the first; a column's type is the common type of its
// values. Values must be constant (they are evaluated now).
func (b *binder) bindValues(v *ast.Values, outer *scope) (Node, *scope, error) {
	if len(v.Rows) == 0 {
		return nil, nil, b.errAt(v, "VALUES needs at least one row")
	}
	width := len(v.Rows[0])
	bound := make([][]Expr, len(v.Rows))
	types := make([]arrow.DataType, width)
	empty := &scope{outer: outer}
	for i, row := range v.Rows {
		if len(row) != width {
			return nil, nil, b.errAt(v, "VALUES lists must all be the same length: row %d has %d values, row 1 has %d", i+1, len(row), width)
		}
		for c, e := range row {
			x, err := b.bindExpr(e, empty, nil)
			if err != nil {
				return nil, nil, err
			}
			if hasSubquery(x) || hasOuterRef(x) {
				return nil, nil, b.errAt(e, "a VALUES list holds constants, not subqueries or column references")
			}
			bound[i] = append(bound[i], x)
			if types[c] == nil {
				types[c] = x.Type()
				continue
			}
			t, err := expr.CommonType(types[c], x.Type())
			if err != nil {
				return nil, nil, b.errAt(e, "VALUES column %d: %v", c+1, err)
			}
			types[c] = t
		}
	}
	fs := make([]arrow.Field, width)
	sc := &scope{outer: outer}
	for c := range fs {
		if types[c].ID() == arrow.NULL {
			types[c] = arrow.BinaryTypes.String // an all-NULL column, as PostgreSQL's unknown -> text
		}
		name := fmt.Sprintf("column%d", c+1)
		fs[c] = arrow.Field{Name: name, Type: types[c], Nullable: true}
		sc.cols = append(sc.cols, column{name: name, typ: types[c]})
	}
	rows := make([]exec.Row, len(bound))
	for i, row := range bound {
		rows[i] = make(exec.Row, width)
		for c, x := range row {
			cx, err := coerce(x, types[c])
			if err != nil {
				return nil, nil, b.errAt(v.Rows[i][c], "%v", err)
			}
			val, err := cx.Compile().EvalRow(nil)
			if err != nil {
				return nil, nil, b.errAt(v.Rows[i][c], "%v", err)
			}
			rows[i][c] = val
		}
	}
	return &Values{Rows: rows, schema: arrow.NewSchema(fs, nil)}, sc, nil
}

// bindSetOp binds UNION, INTERSECT and EXCEPT. UNION ALL chains flatten
// into one Union; UNION (DISTINCT) is a Union under a DISTINCT.
func (b *binder) bindSetOp(s *ast.SetOp, outer *scope) (Node, *scope, error) {
	var inputs []Node
	var scopes []*scope
	var bodies []ast.Node
	var flatten func(body ast.QueryBody) error
	flatten = func(body ast.QueryBody) error {
		if u, ok := body.(*ast.SetOp); ok && u.Op == ast.Union && u.All && s.Op == ast.Union && s.All {
			if err := flatten(u.Left); err != nil {
				return err
			}
			return flatten(u.Right)
		}
		n, sc, err := b.bindBody(body, outer)
		if err != nil {
			return err
		}
		inputs, scopes, bodies = append(inputs, n), append(scopes, sc), append(bodies, body)
		return nil
	}
	if s.Op == ast.Union && s.All {
		if err := flatten(s.Left); err != nil {
			return nil, nil, err
		}
		if err := flatten(s.Right); err != nil {
			return nil, nil, err
		}
	} else {
		for _, body := range []ast.QueryBody{s.Left, s.Right} {
			n, sc, err := b.bindBody(body, outer)
			if err != nil {
				return nil, nil, err
			}
			inputs, scopes, bodies = append(inputs, n), append(scopes, sc), append(bodies, body)
		}
	}
	what := [...]string{"UNION", "INTERSECT", "EXCEPT"}[s.Op]
	if s.All {
		what += " ALL"
	}
	width := len(scopes[0].cols)
	types := make([]arrow.DataType, width)
	for i, sc := range scopes {
		if sc.changelog && !(s.Op == ast.Union && s.All) {
			return nil, nil, b.errAt(bodies[i], "%s over an updating result is not supported", what)
		}
		if len(sc.cols) != width {
			return nil, nil, b.errAt(bodies[i], "each %s query must have the same number of columns: %d and %d", what, width, len(sc.cols))
		}
		for c, col := range sc.cols {
			if types[c] == nil {
				types[c] = col.typ
				continue
			}
			t, err := expr.CommonType(types[c], col.typ)
			if err != nil {
				return nil, nil, b.errAt(bodies[i], "%s column %d (%s): %v", what, c+1, scopes[0].cols[c].name, err)
			}
			types[c] = t
		}
	}
	for i, n := range inputs {
		same := true
		for c, col := range scopes[i].cols {
			same = same && arrow.TypeEqual(col.typ, types[c])
		}
		if same {
			continue
		}
		exprs := make([]Expr, width)
		names := make([]string, width)
		for c, col := range scopes[i].cols {
			e, err := coerce(NewColRef(c, col.name, col.typ), types[c])
			if err != nil {
				return nil, nil, b.errAt(bodies[i], "%v", err)
			}
			exprs[c], names[c] = e, scopes[0].cols[c].name
		}
		inputs[i] = NewProject(n, exprs, names)
	}
	out := &scope{outer: outer, changelog: scopes[0].changelog}
	for c, col := range scopes[0].cols {
		out.cols = append(out.cols, column{name: col.name, typ: types[c]})
	}
	var n Node
	switch s.Op {
	case ast.Union:
		n = &Union{Inputs: inputs}
		if !s.All {
			n = distinct(n)
		}
	default:
		n = &SetOp{Left: inputs[0], Right: inputs[1], Intersect: s.Op == ast.Intersect, All: s.All}
	}
	return n, out, nil
}

// distinct is SELECT DISTINCT over every column of n.
func distinct(n Node) Node {
	group := make([]int, n.Schema().NumFields())
	for i := range group {
		group[i] = i
	}
	return &Aggregate{Input: n, GroupCols: group, schema: n.Schema()}
}

// NewProject projects exprs over in under names.
func NewProject(in Node, exprs []Expr, names []string) *Project {
	fs := make([]arrow.Field, len(exprs))
	for i, x := range exprs {
		fs[i] = arrow.Field{Name: names[i], Type: x.Type(), Nullable: true}
	}
	return &Project{Input: in, Exprs: exprs, schema: arrow.NewSchema(fs, nil)}
}

// identity is the projection of every column of n, as is.
func identity(n Node) []Expr {
	fs := n.Schema().Fields()
	out := make([]Expr, len(fs))
	for i, f := range fs {
		out[i] = NewColRef(i, f.Name, f.Type)
	}
	return out
}

func fieldNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

// CoerceTo makes n's columns match schema by position, widening where an
// implicit cast exists (INSERT INTO).
func CoerceTo(n Node, schema *arrow.Schema, table string) (Node, error) {
	in := n.Schema()
	if in.NumFields() != schema.NumFields() {
		return nil, fmt.Errorf("INSERT INTO '%s': the query has %d columns, the table %d", table, in.NumFields(), schema.NumFields())
	}
	same := true
	exprs := make([]Expr, in.NumFields())
	for i, f := range in.Fields() {
		want := schema.Field(i)
		col := NewColRef(i, f.Name, f.Type)
		if arrow.TypeEqual(f.Type, want.Type) {
			exprs[i] = col
			continue
		}
		same = false
		c, err := coerce(col, want.Type)
		if err != nil {
			return nil, fmt.Errorf("INSERT INTO '%s': column %d ('%s') is %s, the table's '%s' is %s: %v",
				table, i+1, f.Name, sql.TypeString(f.Type), want.Name, sql.TypeString(want.Type), err)
		}
		exprs[i] = c
	}
	if same && sameNames(in, schema) {
		return n, nil
	}
	return NewProject(n, exprs, fieldNames(schema)), nil
}

func sameNames(a, b *arrow.Schema) bool {
	for i := range a.Fields() {
		if a.Field(i).Name != b.Field(i).Name {
			return false
		}
	}
	return true
}
