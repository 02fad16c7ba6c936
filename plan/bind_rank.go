package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql/ast"
)

// StreamRank is ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) filtered
// to rn <= N over an unbounded, append-only input, as Flink plans it
// (StreamPhysicalRank, StreamPhysicalDeduplicate):
//
//   - Top-N: each key's best N rows, an updating result (its schema is
//     the input's, the row number when shown, then the row kind "op");
//   - deduplication keeping the last row (N = 1, ORDER BY the time
//     attribute DESC): the same, a later arrival winning ties (LastWins);
//   - deduplication keeping the first row (N = 1, ORDER BY the time
//     attribute ASC): append-only, each key's first row emitted once the
//     watermark passes it (First; no "op" column).
type StreamRank struct {
	Input       Node
	PartitionBy []int
	OrderBy     []ops.SortKey
	N           int64
	RowNumber   bool // the row number is a column (after the input's)
	LastWins    bool
	First       bool
	// Window: partitioned by the window_start and window_end of a window
	// table function or aggregate, a window Top-N (Flink's WindowRank):
	// each window's rows emitted once when it fires, append-only. EndCol
	// is window_end.
	Window bool
	EndCol int
	// Dedup: N = 1 ordered by the time attribute (a deduplication).
	Dedup  bool
	schema *arrow.Schema
}

func (n *StreamRank) Schema() *arrow.Schema { return n.schema }
func (n *StreamRank) Children() []Node      { return []Node{n.Input} }

// Changelog reports whether the result is updating (row kind last).
func (n *StreamRank) Changelog() bool { return !n.First && !n.Window }

// Shape names what the rank is, for EXPLAIN and errors.
func (n *StreamRank) Shape() string {
	switch {
	case n.Window && n.Dedup:
		return "window deduplication"
	case n.Window:
		return fmt.Sprintf("window Top-%d", n.N)
	case n.First:
		return "deduplication keeping the first row"
	case n.LastWins:
		return "deduplication keeping the last row"
	}
	return fmt.Sprintf("Top-%d", n.N)
}

// pendingRank is a ROW_NUMBER over an unbounded input that a WHERE of the
// query reading it may still turn into a StreamRank: the WindowFuncs,
// under the derived table's projection.
func pendingRank(n Node) (*Project, *WindowFuncs) {
	p, ok := n.(*Project)
	if !ok {
		return nil, nil
	}
	wf, ok := p.Input.(*WindowFuncs)
	if !ok || wf.Unbounded == nil || len(wf.Funcs) != 1 || wf.Funcs[0].Func != "row_number" {
		return nil, nil
	}
	return p, wf
}

// bindStreamRank turns a SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER
// (...) AS rn FROM unbounded) WHERE rn <= N (or rn < N, rn = 1) into a
// StreamRank: n and in are the bound FROM clause; it returns them
// unchanged when s is not that shape. The WHERE is bound afterwards as
// written: over the rank's output its rn condition holds for every row.
func (b *binder) bindStreamRank(s *ast.Select, q *ast.Query, n Node, in *scope) (Node, *scope, error) {
	p, wf := pendingRank(n)
	if p == nil || s.Where == nil || in.changelog {
		return n, in, nil
	}
	rnIn := wf.Input.Schema().NumFields() // the row number's column in wf's output
	isRN := func(e ast.Expr) (string, bool) {
		c, ok := e.(*ast.ColumnRef)
		if !ok {
			return "", false
		}
		qual := ""
		if len(c.Parts) > 1 {
			qual = c.Parts[len(c.Parts)-2].Name
		}
		name := c.Parts[len(c.Parts)-1].Name
		i, err := in.resolve(qual, name)
		if err != nil || i >= len(p.Exprs) {
			return "", false
		}
		r, ok := p.Exprs[i].(*ColRef)
		return name, ok && r.Index == rnIn
	}
	var bound ast.Expr // the rn condition
	limit, rnName := int64(-1), ""
	for _, c := range conjuncts(s.Where) {
		be, ok := c.(*ast.Binary)
		if !ok {
			continue
		}
		name, ok := isRN(be.L)
		lit, isNum := be.R.(*ast.NumberLit)
		if !ok || !isNum {
			continue
		}
		v, err := strconv.ParseInt(lit.Text, 10, 64)
		if err != nil {
			continue
		}
		switch {
		case be.Op == ast.OpLe:
			limit = v
		case be.Op == ast.OpLt:
			limit = v - 1
		case be.Op == ast.OpEq && v == 1:
			limit = 1
		default:
			continue
		}
		bound, rnName = c, name
		break
	}
	if bound == nil {
		return n, in, nil
	}
	var orderBy []ast.Expr
	if q != nil {
		for _, o := range q.OrderBy {
			orderBy = append(orderBy, o.Expr)
		}
	}
	if limit < 1 {
		return nil, nil, b.errAt(bound, "%s keeps no row", b.source(bound))
	}
	// The row number is a column of the result when the query reads it
	// anywhere but in its bound (a * reads every column). Subqueries of
	// the clauses count too: they may read it as an outer column.
	rowNumber := false
	see := func(x ast.Node) bool {
		switch c := x.(type) {
		case *ast.Star:
			rowNumber = true
		case *ast.ColumnRef:
			if strings.EqualFold(c.Parts[len(c.Parts)-1].Name, rnName) {
				rowNumber = true
			}
		}
		return x != bound
	}
	for _, it := range s.Items {
		ast.Inspect(it, see)
	}
	for _, x := range append(append([]ast.Expr{s.Where, s.Having, s.Qualify}, s.GroupBy...), orderBy...) {
		if x != nil {
			ast.Inspect(x, see)
		}
	}
	rk := &StreamRank{Input: wf.Input, PartitionBy: wf.PartitionBy, OrderBy: wf.OrderBy, N: limit, RowNumber: rowNumber}
	if limit == 1 && len(wf.OrderBy) == 1 && rowtimes(wf.Input)[wf.OrderBy[0].Col] {
		// Ordered by the time attribute: a deduplication.
		rk.First, rk.LastWins, rk.Dedup = !wf.OrderBy[0].Desc, wf.OrderBy[0].Desc, true
	}
	if end, ok := windowPartition(wf.Input, wf.PartitionBy); ok {
		// Each window's rows at once when it fires: first and last rows
		// are the window's, without waiting for the watermark per row.
		rk.Window, rk.EndCol, rk.First = true, end, false
	}
	fs := append([]arrow.Field(nil), wf.Input.Schema().Fields()...)
	if rowNumber {
		fs = append(fs, arrow.Field{Name: wf.Funcs[0].Text, Type: arrow.PrimitiveTypes.Int64})
	}
	opCol := len(fs)
	if rk.Changelog() {
		fs = append(fs, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String})
	}
	rk.schema = arrow.NewSchema(fs, nil)

	// The derived table's projection over the rank: the row kind first
	// when updating; without the row number column, rn reads as 1 (only
	// its bound, which then holds, reads it).
	var exprs []Expr
	var names []string
	out := &scope{changelog: rk.Changelog(), outer: in.outer}
	if rk.Changelog() {
		exprs, names = append(exprs, NewColRef(opCol, "op", arrow.BinaryTypes.String)), append(names, "op")
		out.cols = append(out.cols, column{name: "op", typ: arrow.BinaryTypes.String, hidden: false})
	}
	for i, e := range p.Exprs {
		if !rowNumber {
			var err error
			if e, err = Transform(e, func(x Expr) (Expr, error) {
				if r, ok := x.(*ColRef); ok && r.Index == rnIn {
					return NewConst(int64(1), arrow.PrimitiveTypes.Int64), nil
				}
				return x, nil
			}); err != nil {
				return nil, nil, err
			}
		}
		exprs, names = append(exprs, e), append(names, p.Schema().Field(i).Name)
	}
	out.cols = append(out.cols, in.cols...)
	return NewProject(rk, exprs, names), out, nil
}

// conjuncts splits e at its top-level ANDs.
func conjuncts(e ast.Expr) []ast.Expr {
	if be, ok := e.(*ast.Binary); ok && be.Op == ast.OpAnd {
		return append(conjuncts(be.L), conjuncts(be.R)...)
	}
	return []ast.Expr{e}
}

// overSupported names what OVER runs over an unbounded input.
const overSupported = "over an unbounded input, OVER supports ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) AS rn " +
	"in a derived table whose query keeps WHERE rn <= N, rn < N or rn = 1 (a Top-N; rn = 1 ordered by the time attribute is a deduplication), " +
	"and COUNT, SUM, AVG, MIN, MAX OVER (PARTITION BY ... ORDER BY <time attribute> {ROWS|RANGE} BETWEEN {n|INTERVAL|UNBOUNDED} PRECEDING AND CURRENT ROW)"

// unboundedOver is the error for window calls over an unbounded input
// that no rewrite makes runnable; for a lone ROW_NUMBER, the one its
// WindowFuncs carries until a WHERE bounds it.
func (b *binder) unboundedOver(calls []*winCall) error {
	c := calls[0]
	if len(calls) == 1 && c.Func == "row_number" {
		return b.errAt(c.node, "%s without a bound on it: %s", c.Text, overSupported)
	}
	return b.errAt(c.node, "%s is not supported: %s", c.Text, overSupported)
}

// detail is the rank's EXPLAIN text.
func (n *StreamRank) detail() string {
	in := n.Input.Schema()
	s := n.Shape()
	if len(n.PartitionBy) > 0 {
		s += "; PARTITION BY " + colNames(in, n.PartitionBy)
	}
	s += "; ORDER BY " + sortKeysText(in, n.OrderBy)
	if n.RowNumber {
		s += "; with the row number"
	}
	switch {
	case n.Window:
		s += "; append-only, emitted once per window when it fires"
	case n.First:
		s += "; append-only, emitted as the watermark passes"
	default:
		s += fmt.Sprintf("; updating, %d row(s) per key", n.N)
	}
	return s
}

// buildStreamRank plans the rank: one instance per hash partition of the
// PARTITION BY keys (one without them); its output is rows (a changelog's
// rows carry their kind).
func (b *builder) buildStreamRank(x *StreamRank) (*Stage, error) {
	in, err := b.build(x.Input)
	if err != nil {
		return nil, err
	}
	w := wireKeyed
	if len(x.PartitionBy) == 0 {
		w = wireGather
	}
	if x.Window {
		mem := b.opts.Mem
		return b.op("WindowRank", x.detail(), func() exec.Operator {
			return ops.NewWindowRank(ops.WindowRankSpec{StreamRankSpec: ops.StreamRankSpec{PartitionBy: x.PartitionBy,
				OrderBy: x.OrderBy, N: x.N, RowNumber: x.RowNumber, LastWins: x.LastWins}, EndCol: x.EndCol}, x.schema, mem)
		}, w, [][]int{x.PartitionBy}, in), nil
	}
	if x.First {
		return b.op("StreamDedupFirst", x.detail(), func() exec.Operator {
			return ops.NewStreamDedupFirst(x.PartitionBy, x.OrderBy[0].Col, x.RowNumber, x.schema)
		}, w, [][]int{x.PartitionBy}, in), nil
	}
	return b.op("StreamRank", x.detail(), func() exec.Operator {
		return ops.NewStreamRank(ops.StreamRankSpec{PartitionBy: x.PartitionBy, OrderBy: x.OrderBy, N: x.N,
			RowNumber: x.RowNumber, LastWins: x.LastWins}, x.schema)
	}, w, [][]int{x.PartitionBy}, in), nil
}

// windowPartition finds, among the PARTITION BY columns of n's rows, the
// window_start and window_end of a window table function or window
// aggregate under n (through projections and filters), and returns
// window_end's column.
func windowPartition(n Node, partition []int) (int, bool) {
	start, end := -1, -1
	for _, c := range partition {
		switch windowRole(n, c) {
		case 1:
			start = c
		case 2:
			end = c
		}
	}
	return end, start >= 0 && end >= 0
}

// windowRole is 1 when n's column c is a window's window_start, 2 when it
// is its window_end, else 0.
func windowRole(n Node, c int) int {
	switch x := n.(type) {
	case *WindowTable:
		if w := x.Input.Schema().NumFields(); c == w || c == w+1 {
			return c - w + 1
		}
	case *WindowAggregate:
		if w := x.schema.NumFields(); c == w-3 || c == w-2 {
			return c - (w - 3) + 1
		}
	case *Filter:
		return windowRole(x.Input, c)
	case *Project:
		if r, ok := x.Exprs[c].(*ColRef); ok {
			return windowRole(x.Input, r.Index)
		}
	}
	return 0
}
