// Package plan turns a parsed query into a logical plan (the binder), and a
// logical plan into an executable exec.Graph (the physical planner), deciding
// on the way what each scan reads and, per operator, whether its output is
// born columnar (the gates). Every gate decision is recorded with a stable
// reason code for EXPLAIN.
package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
)

// Node is a logical plan node.
type Node interface {
	Schema() *arrow.Schema
	Children() []Node
}

// Scan reads a catalog table (or a path) through its connector.
type Scan struct {
	TableName string
	Table     connectors.Table
	Connector string
	Columns   []int // indexes into Table.Schema(): what is read, in output order
	Filters   []connectors.ColumnFilter
	schema    *arrow.Schema
}

// Values is a constant relation (SELECT without FROM).
type Values struct {
	Rows   []exec.Row
	schema *arrow.Schema
}

// Filter keeps the rows where Pred is true.
type Filter struct {
	Input Node
	Pred  expr.Expr
}

// Project computes Exprs over its input.
type Project struct {
	Input  Node
	Exprs  []expr.Expr
	schema *arrow.Schema
}

// Aggregate groups its input by the first len(GroupCols) columns.
type Aggregate struct {
	Input     Node
	GroupCols []int
	Aggs      []ops.AggSpec
	AggText   []string // SQL text of each aggregate, for EXPLAIN
	// Updating: the input is unbounded, so the result is a changelog
	// emitted as it changes; schema then ends with the "op" column.
	Updating bool
	schema   *arrow.Schema
}

// Join is an equi-join: Left.LeftKeys[i] = Right.RightKeys[i].
type Join struct {
	Left, Right         Node
	Type                ops.JoinType
	LeftKeys, RightKeys []int
	Cond                string // the ON condition's SQL text, for EXPLAIN
	// Stream: both inputs are held in state (a streaming join); otherwise
	// the right input is built into a hash table and the left streams.
	Stream bool
	// LeftOp, RightOp: the row-kind column of a changelog input, or -1.
	LeftOp, RightOp int
	// Changelog: the result is a changelog, its row kind first.
	Changelog bool
	// Time bounds a streaming join's state by event time (interval and
	// window joins); nil: the state grows with the inputs.
	Time   *ops.TimeBound
	schema *arrow.Schema

	lscope, rscope *scope // the inputs, while binding
	out            *scope // a streaming join's output, while binding
}

// Sort orders its input; Limit >= 0 makes it a top-n.
type Sort struct {
	Input Node
	Keys  []ops.SortKey
	Limit int64
}

// UpdatingTopN is ORDER BY ... LIMIT N OFFSET Offset over an unbounded
// input: a continuously updated top-n whose result is a changelog (-D for
// a row that left the visible ranks, +I for one that entered); its schema
// is the input's followed by the "op" column.
type UpdatingTopN struct {
	Input     Node
	Keys      []ops.SortKey
	N, Offset int64
	// Changelog: the input is an updating result whose first column is
	// the row kind; the top-n holds every current row (a retraction can
	// take one out of the visible ranks). Keys and the schema are then of
	// the columns after the row kind.
	Changelog bool
	schema    *arrow.Schema
}

// Limit passes Offset+N rows, skipping the first Offset; N < 0: no limit.
type Limit struct {
	Input     Node
	N, Offset int64
}

// Union is UNION ALL of inputs with identical schemas.
type Union struct {
	Inputs []Node
}

func (n *Scan) Schema() *arrow.Schema      { return n.schema }
func (n *Values) Schema() *arrow.Schema    { return n.schema }
func (n *Filter) Schema() *arrow.Schema    { return n.Input.Schema() }
func (n *Project) Schema() *arrow.Schema   { return n.schema }
func (n *Aggregate) Schema() *arrow.Schema { return n.schema }
func (n *Join) Schema() *arrow.Schema      { return n.schema }
func (n *Sort) Schema() *arrow.Schema      { return n.Input.Schema() }
func (n *Limit) Schema() *arrow.Schema     { return n.Input.Schema() }
func (n *Union) Schema() *arrow.Schema     { return n.Inputs[0].Schema() }

func (n *Scan) Children() []Node      { return nil }
func (n *Values) Children() []Node    { return nil }
func (n *Filter) Children() []Node    { return []Node{n.Input} }
func (n *Project) Children() []Node   { return []Node{n.Input} }
func (n *Aggregate) Children() []Node { return []Node{n.Input} }
func (n *Join) Children() []Node      { return []Node{n.Left, n.Right} }
func (n *Sort) Children() []Node      { return []Node{n.Input} }
func (n *Limit) Children() []Node     { return []Node{n.Input} }
func (n *Union) Children() []Node     { return n.Inputs }

func (n *UpdatingTopN) Schema() *arrow.Schema { return n.schema }
func (n *UpdatingTopN) Children() []Node      { return []Node{n.Input} }

// Bounded reports whether every scan under n ends by itself.
func Bounded(n Node) bool {
	if s, ok := n.(*Scan); ok {
		return s.Table.Bounded()
	}
	for _, c := range n.Children() {
		if !Bounded(c) {
			return false
		}
	}
	return true
}

// Finite reports whether n's result is finite: its scans end, or a LIMIT
// cuts it short (a GROUP BY over it then has one final answer, not a
// changelog).
func Finite(n Node) bool {
	if l, ok := n.(*Limit); ok && l.N >= 0 {
		return true
	}
	if s, ok := n.(*Scan); ok {
		return s.Table.Bounded()
	}
	for _, c := range n.Children() {
		if !Finite(c) {
			return false
		}
	}
	return true
}
