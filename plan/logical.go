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
	// Pred are the conjuncts of the Filter right above the scan that the
	// scan may evaluate itself (volatile ones excluded), over the table's
	// columns (ColRef.Index is a Table.Schema() index, as in Filters), so
	// that pruning the scan's output columns leaves them valid.
	Pred   []Expr
	schema *arrow.Schema
}

// Values is a constant relation (SELECT without FROM).
type Values struct {
	Rows   []exec.Row
	schema *arrow.Schema
}

// Filter keeps the rows where Pred is true.
type Filter struct {
	Input Node
	Pred  Expr
}

// Project computes Exprs over its input.
type Project struct {
	Input  Node
	Exprs  []Expr
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
	// TwoPhase: partial aggregates per subtask, merged after the exchange
	// (the two-phase-aggregation rule).
	TwoPhase bool
	schema   *arrow.Schema
}

// JoinKind is the kind of a logical join.
type JoinKind int

const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinRight
	JoinFull
	// JoinSemi keeps each left row with a match, once; left columns only.
	JoinSemi
	// JoinAnti keeps each left row without a match; left columns only.
	JoinAnti
	// JoinMark keeps every left row, once, plus a BOOLEAN column: whether
	// it has a match (IN and EXISTS where they are values, not filters).
	JoinMark
	// JoinSingle is a LEFT join where a left row may have at most one
	// match: a scalar subquery's value.
	JoinSingle
)

func (k JoinKind) String() string {
	return [...]string{"INNER", "LEFT", "RIGHT", "FULL", "SEMI", "ANTI", "MARK", "SINGLE"}[k]
}

// outer reports whether unmatched left rows survive (padded with NULLs).
func (k JoinKind) preservesLeft() bool {
	return k == JoinLeft || k == JoinFull || k == JoinAnti || k == JoinMark || k == JoinSingle
}

// Join joins Left and Right on Left.LeftKeys[i] = Right.RightKeys[i] and
// the Residual condition (over the left columns followed by the right
// ones). Without keys it is a nested-loop join. The binder leaves the ON
// condition in On; the join rules split it into keys and a residual.
type Join struct {
	Left, Right Node
	Kind        JoinKind
	On          Expr // the condition as bound, before the rules place it
	LeftKeys    []int
	RightKeys   []int
	// NullSafe[i]: key i matches NULL with NULL (IS NOT DISTINCT FROM).
	NullSafe []bool
	// NullAware: an ANTI or MARK join with NOT IN / IN semantics (a NULL
	// on either side makes the comparison unknown).
	NullAware bool
	Residual  Expr
	Cond      string // the condition's SQL text, for EXPLAIN
	// Stream: both inputs are held in state (a streaming join); otherwise
	// the right input is built into a hash table and the left streams.
	Stream bool
	// LeftOp, RightOp: the row-kind column of a changelog input, or -1.
	LeftOp, RightOp int
	// Changelog: the result is a changelog, its row kind first.
	Changelog bool
	// Time bounds a streaming join's state by event time (interval and
	// window joins); nil: the state grows with the inputs.
	Time *ops.TimeBound
	// Lookup: a processing-time temporal join (FOR SYSTEM_TIME AS OF) of
	// the left stream against the bounded right table; INNER or LEFT, never
	// reordered.
	Lookup bool
	// Versioned: an event-time temporal join (FOR SYSTEM_TIME AS OF the
	// left's event-time attribute) against a versioned right table (a
	// PRIMARY KEY and a WATERMARK); never reordered.
	Versioned *VersionedJoin
	// Broadcast, when above zero, is the build side's row count and the
	// join sends it whole to every probe subtask (the broadcast rule).
	Broadcast int64
	schema    *arrow.Schema
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

// SetOp is INTERSECT or EXCEPT [ALL] of two inputs with identical schemas
// (rows compared with NULLs equal).
type SetOp struct {
	Left, Right Node
	Intersect   bool // else EXCEPT
	All         bool
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
func (n *SetOp) Schema() *arrow.Schema     { return n.Left.Schema() }

func (n *Scan) Children() []Node      { return nil }
func (n *Values) Children() []Node    { return nil }
func (n *Filter) Children() []Node    { return []Node{n.Input} }
func (n *Project) Children() []Node   { return []Node{n.Input} }
func (n *Aggregate) Children() []Node { return []Node{n.Input} }
func (n *Join) Children() []Node      { return []Node{n.Left, n.Right} }
func (n *Sort) Children() []Node      { return []Node{n.Input} }
func (n *Limit) Children() []Node     { return []Node{n.Input} }
func (n *Union) Children() []Node     { return n.Inputs }
func (n *SetOp) Children() []Node     { return []Node{n.Left, n.Right} }

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

// VersionedJoin is what an event-time temporal join reads besides its
// keys: the event-time columns of both inputs and the right table's
// primary key (which the equi-keys must cover).
type VersionedJoin struct {
	LeftTime, RightTime int
	PrimaryKey          []int // right columns
}

// temporal reports whether j is a temporal join of either kind: it keeps
// its inputs' roles.
func (j *Join) temporal() bool { return j.Lookup || j.Versioned != nil }
