package plan

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// WatermarkAssign gives its input event time: WATERMARK FOR col AS col -
// INTERVAL ... of the table under it. It sits right above the table's scan
// (and computed columns), so each parallel scan instance has its own clock.
type WatermarkAssign struct {
	Input   Node
	TimeCol int
	Delay   time.Duration
	Text    string // the clause, for EXPLAIN
}

func (n *WatermarkAssign) Schema() *arrow.Schema { return n.Input.Schema() }
func (n *WatermarkAssign) Children() []Node      { return []Node{n.Input} }

// watermark binds e's WATERMARK clause over the table's relation n.
func (b *binder) watermark(e *Entry, n Node, sc *scope) (Node, error) {
	wd := e.Watermark
	where := fmt.Sprintf("table '%s', WATERMARK FOR %s AS %s", e.Name, wd.Column, wd.Text)
	col, err := sc.resolve("", wd.Column)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if _, ok := sc.cols[col].typ.(*arrow.TimestampType); !ok {
		return nil, fmt.Errorf("%s: column '%s' is %s; event time needs a TIMESTAMP column", where, wd.Column, sc.cols[col].typ)
	}
	delay, err := watermarkDelay(wd.Expr, wd.Column)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &WatermarkAssign{Input: n, TimeCol: col, Delay: delay,
		Text: fmt.Sprintf("%s - %s", wd.Column, delay)}, nil
}

// watermarkDelay reads `col` or `col - INTERVAL 'n' UNIT`: bounded
// out-of-orderness, the shape every watermark in practice has.
func watermarkDelay(e ast.Expr, col string) (time.Duration, error) {
	isCol := func(x ast.Expr) bool {
		c, ok := x.(*ast.ColumnRef)
		return ok && len(c.Parts) == 1 && strings.EqualFold(c.Parts[0].Name, col)
	}
	if isCol(e) {
		return 0, nil
	}
	if be, ok := e.(*ast.Binary); ok && be.Op == ast.OpSub && isCol(be.L) {
		if lit, ok := be.R.(*ast.IntervalLit); ok {
			iv, err := sql.IntervalOf(lit)
			if err != nil {
				return 0, err
			}
			d, err := iv.Duration()
			if err != nil {
				return 0, err
			}
			if d < 0 {
				return 0, fmt.Errorf("the watermark delay %s is negative", lit)
			}
			return d, nil
		}
	}
	return 0, fmt.Errorf("only `%s` or `%s - INTERVAL 'n' UNIT` is supported as a watermark", col, col)
}

// buildWindowing plans the event-time nodes (the physical side of this
// file and bind_window.go).
func (b *builder) buildWindowing(n Node) (*Stage, error) {
	mem := b.opts.Mem
	switch x := n.(type) {
	case *WatermarkAssign:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		clocked := setSourceEventTime(x, in, mem)
		return b.op("WatermarkAssigner", x.Text, func() exec.Operator {
			a := ops.NewWatermarkAssigner(x.TimeCol, x.Delay, mem)
			if clocked {
				a.FollowSource()
			}
			return a
		}, wireParallel, nil, in), nil
	case *WindowTable:
		if x.Spec.Kind == ops.Session {
			return nil, fmt.Errorf("%s: a SESSION window table needs a GROUP BY window_start, window_end", x.Call)
		}
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		return b.op("WindowTable", x.Call, func() exec.Operator {
			return ops.NewWindowAssign(x.Spec, x.TimeCol, x.schema, mem)
		}, wireParallel, nil, in), nil
	case *WindowAggregate:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		var parts []string
		var keys []string
		for _, g := range x.GroupCols {
			keys = append(keys, x.Input.Schema().Field(g).Name)
		}
		parts = append(parts, "GROUP BY "+strings.Join(append(keys, x.Spec.String()), ", "))
		parts = append(parts, x.AggText...)
		w := wireKeyed
		if len(x.GroupCols) == 0 {
			w = wireGather // one key: one instance sees every row
		}
		if x.Spec.ProcTime {
			return b.op("ProcTimeWindowAggregate", strings.Join(parts, ", "), func() exec.Operator {
				return ops.NewProcTimeWindowAggregate(x.Spec, x.TimeCol, x.GroupCols, x.Aggs, x.schema, mem)
			}, w, [][]int{x.GroupCols}, in), nil
		}
		return b.op("WindowAggregate", strings.Join(parts, ", "), func() exec.Operator {
			return ops.NewWindowAggregate(x.Spec, x.TimeCol, x.GroupCols, x.Aggs, x.schema, mem)
		}, w, [][]int{x.GroupCols}, in), nil
	}
	return nil, fmt.Errorf("plan: cannot build %T", n)
}

// eventTimeSetter is a source whose per-partition clocks can read event
// time from its batches (Kafka) rather than from record metadata.
type eventTimeSetter interface {
	SetEventTime(f func(b *exec.Batch) (maxMicros int64, ok bool, err error))
}

// setSourceEventTime hands the WATERMARK column's expression, over the
// scan's output, to the scan's instances that keep per-partition clocks,
// so a partition's watermark is its own records' event time. It applies
// when the assigner sits on the scan or on the scan's computed columns,
// and reports whether it did (the assigner then follows the source's
// clock from the start).
func setSourceEventTime(x *WatermarkAssign, in *Stage, mem memory.Allocator) bool {
	var e expr.Expr
	switch n := x.Input.(type) {
	case *Scan:
		f := n.Schema().Field(x.TimeCol)
		e = expr.Col(x.TimeCol, f.Type, f.Name)
	case *Project:
		if _, ok := n.Input.(*Scan); !ok {
			return false
		}
		e = n.Exprs[x.TimeCol].Compile()
	default:
		return false
	}
	st := in
	for len(st.Instances) > 0 && st.Instances[0].Src == nil {
		if st.Op != "Project" || len(st.Children) != 1 {
			return false
		}
		st = st.Children[0]
	}
	conv, err := ops.MicrosOf(e.Type())
	if err != nil {
		return false // the binder already requires a TIMESTAMP column
	}
	micros := func(v arrow.Timestamp) int64 { return conv(int64(v)) }
	var mu sync.Mutex // the partitions decode concurrently
	f := func(b *exec.Batch) (int64, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		best, ok := int64(0), false
		note := func(v arrow.Timestamp) {
			if us := micros(v); !ok || us > best {
				best, ok = us, true
			}
		}
		if b.IsColumnar() {
			arr, err := e.EvalColumnar(mem, b.Record())
			if err != nil {
				return 0, false, err
			}
			defer arr.Release()
			col, isTS := arr.(*array.Timestamp)
			if !isTS {
				return 0, false, fmt.Errorf("%s is %s, not TIMESTAMP", e, arr.DataType())
			}
			for i := 0; i < col.Len(); i++ {
				if col.IsValid(i) {
					note(col.Value(i))
				}
			}
			return best, ok, nil
		}
		for _, r := range b.Rows() {
			v, err := e.EvalRow(r)
			if err != nil {
				return 0, false, err
			}
			if t, isTS := v.(arrow.Timestamp); isTS {
				note(t)
			}
		}
		return best, ok, nil
	}
	set := false
	for _, inst := range st.Instances {
		if es, ok := inst.Src.(eventTimeSetter); ok {
			es.SetEventTime(f)
			set = true
		}
	}
	return set
}
