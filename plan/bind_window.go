package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// windowTS is the type of window_start, window_end and window_time.
var windowTS = &arrow.TimestampType{Unit: arrow.Millisecond}

// WindowTable is a window table function in FROM (TABLE(TUMBLE(TABLE t,
// DESCRIPTOR(ts), INTERVAL ...))): its input's columns plus window_start,
// window_end and window_time, one row per (row, window). A GROUP BY
// window_start, window_end over it is fused into a WindowAggregate, which
// assigns the windows itself; this node only runs when selected from
// without such a GROUP BY.
type WindowTable struct {
	Input   Node
	Spec    ops.WindowSpec
	TimeCol int
	Call    string // the call in SQL terms, for EXPLAIN
	schema  *arrow.Schema
}

func (n *WindowTable) Schema() *arrow.Schema { return n.schema }
func (n *WindowTable) Children() []Node      { return []Node{n.Input} }

// WindowAggregate is GROUP BY keys over event-time windows. Its input is
// the group keys and aggregate arguments (as for Aggregate) followed by the
// time column at TimeCol; its output is the keys, the aggregates, then
// window_start, window_end and window_time.
type WindowAggregate struct {
	Input     Node
	Spec      ops.WindowSpec
	TimeCol   int
	GroupCols []int
	Aggs      []ops.AggSpec
	AggText   []string
	schema    *arrow.Schema
}

func (n *WindowAggregate) Schema() *arrow.Schema { return n.schema }
func (n *WindowAggregate) Children() []Node      { return []Node{n.Input} }

// specFrom turns a window function's kind and interval arguments into a spec.
func specFrom(kind string, ds []time.Duration) (ops.WindowSpec, error) {
	for _, d := range ds {
		if d%time.Millisecond != 0 {
			return ops.WindowSpec{}, fmt.Errorf("%s is not a whole number of milliseconds (windows are TIMESTAMP(3))", d)
		}
	}
	var s ops.WindowSpec
	switch kind {
	case "TUMBLE":
		if len(ds) < 1 || len(ds) > 2 {
			return s, fmt.Errorf("TUMBLE takes a size and an optional offset")
		}
		s = ops.WindowSpec{Kind: ops.Tumble, Size: ds[0]}
		if len(ds) == 2 {
			s.Offset = ds[1]
		}
	case "HOP":
		if len(ds) < 2 || len(ds) > 3 {
			return s, fmt.Errorf("HOP takes a slide, a size and an optional offset")
		}
		s = ops.WindowSpec{Kind: ops.Hop, Slide: ds[0], Size: ds[1]}
		if len(ds) == 3 {
			s.Offset = ds[2]
		}
	case "SESSION":
		if len(ds) != 1 {
			return s, fmt.Errorf("SESSION takes one gap")
		}
		s = ops.WindowSpec{Kind: ops.Session, Gap: ds[0]}
	default:
		return s, fmt.Errorf("%s windows are not supported yet (TUMBLE, HOP and SESSION are)", kind)
	}
	return s, s.Validate()
}

// intervalArgs reads INTERVAL literal arguments as fixed durations.
func (b *binder) intervalArgs(args []ast.Expr, what string) ([]time.Duration, error) {
	var out []time.Duration
	for _, a := range args {
		lit, ok := a.(*ast.IntervalLit)
		if !ok {
			return nil, b.errAt(a, "%s: %s is not an INTERVAL literal", what, a)
		}
		iv, err := sql.IntervalOf(lit)
		if err != nil {
			return nil, b.errAt(a, "%s: %v", what, err)
		}
		d, err := iv.Duration()
		if err != nil {
			return nil, b.errAt(a, "%s: %v", what, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// bindWindowTable binds FROM TABLE(KIND(TABLE t, DESCRIPTOR(c), ...)),
// positional or with named arguments (DATA =>, TIMECOL =>, SIZE =>, ...).
func (b *binder) bindWindowTable(t *ast.TableFunc, outer *scope) (Node, *scope, error) {
	kind := strings.ToUpper(t.Name.Name)
	call := b.source(t)
	var table *ast.TableArg
	var desc *ast.Descriptor
	var ivs []ast.Expr
	named := map[string]ast.Expr{}
	for _, a := range t.Args {
		if na, ok := a.(*ast.NamedArg); ok {
			named[strings.ToUpper(na.Name.Name)] = na.Value
			continue
		}
		switch x := a.(type) {
		case *ast.TableArg:
			table = x
		case *ast.Descriptor:
			desc = x
		default:
			ivs = append(ivs, x)
		}
	}
	if len(named) > 0 {
		if v, ok := named["DATA"].(*ast.TableArg); ok {
			table = v
		}
		if v, ok := named["TIMECOL"].(*ast.Descriptor); ok {
			desc = v
		}
		order := map[string][]string{"TUMBLE": {"SIZE", "OFFSET"}, "HOP": {"SLIDE", "SIZE", "OFFSET"},
			"CUMULATE": {"STEP", "SIZE", "OFFSET"}, "SESSION": {"GAP"}}[kind]
		for _, k := range order {
			if v, ok := named[k]; ok {
				ivs = append(ivs, v)
			}
		}
	}
	if table == nil || desc == nil || len(desc.Columns) != 1 {
		return nil, nil, b.errAt(t, "%s: expected %s(TABLE t, DESCRIPTOR(time_column), INTERVAL ...)", call, kind)
	}
	if len(table.PartitionBy) > 0 {
		return nil, nil, b.errAt(table, "%s: PARTITION BY in a window table function is not supported yet: GROUP BY the keys instead", call)
	}
	ds, err := b.intervalArgs(ivs, call)
	if err != nil {
		return nil, nil, err
	}
	spec, err := specFrom(kind, ds)
	if err != nil {
		return nil, nil, b.errAt(t, "%s: %v", call, err)
	}
	qual := aliasName(t.Alias)
	if qual == "" {
		qual = table.Name.Parts[len(table.Name.Parts)-1].Name
	}
	n, in, err := b.bindTableName(table.Name, qual, outer)
	if err != nil {
		return nil, nil, err
	}
	tc, err := in.resolve("", desc.Columns[0].Name)
	if err != nil {
		return nil, nil, b.errAt(desc, "%s: DESCRIPTOR: %v", call, err)
	}
	if _, ok := in.cols[tc].typ.(*arrow.TimestampType); !ok {
		return nil, nil, b.errAt(desc, "%s: DESCRIPTOR(%s) is %s; windows need a TIMESTAMP column", call, desc.Columns[0].Name, in.cols[tc].typ)
	}
	spec.ProcTime = in.cols[tc].proctime
	if err := spec.Validate(); err != nil {
		return nil, nil, b.errAt(t, "%s: %v", call, err)
	}
	wt := &WindowTable{Input: n, Spec: spec, TimeCol: tc, Call: call}
	out := &scope{outer: outer}
	for _, c := range in.cols {
		c.qual = qual
		out.cols = append(out.cols, c)
	}
	for _, wc := range []string{"window_start", "window_end", "window_time"} {
		out.cols = append(out.cols, column{qual: qual, name: wc, typ: windowTS})
	}
	wt.schema = out.schema()
	return wt, out, nil
}
