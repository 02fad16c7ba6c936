package plan

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql/ast"
)

// eventTimeOver checks that wf, window calls group over an unbounded
// input, is what Flink's StreamPhysicalOverAggregate runs: aggregates
// (COUNT, SUM, AVG, MIN, MAX) ordered by the input's time attribute
// ascending, with one frame of ROWS or RANGE from n (or UNBOUNDED)
// PRECEDING to CURRENT ROW. Otherwise it returns the error naming what
// runs (unbounded, the generic one, for shapes it does not explain).
func (b *binder) eventTimeOver(wf *WindowFuncs, group []*winCall, unbounded error) error {
	fail := func(c *winCall, format string, args ...any) error {
		return b.errAt(c.node, "%s: %s; %s", c.Text, fmt.Sprintf(format, args...), overSupported)
	}
	if err := checkStreamAggs(wf, group, fail, unbounded); err != nil {
		return err
	}
	c := group[0]
	if len(wf.OrderBy) != 1 || wf.OrderBy[0].Desc || !rowtimes(wf.Input)[wf.OrderBy[0].Col] {
		return fail(c, "it must be ordered by the input's time attribute (a WATERMARK column), ascending")
	}
	if _, _, err := streamFrame(wf.Funcs[0].Frame); err != nil {
		return fail(c, "%v", err)
	}
	return nil
}

// retractingOver checks that wf, window calls group over an updating
// input, is what StreamOverAgg's retracting mode runs: aggregates over
// ROWS BETWEEN n PRECEDING AND CURRENT ROW, so that a change moves the
// aggregates of at most n following rows.
func (b *binder) retractingOver(wf *WindowFuncs, group []*winCall) error {
	fail := func(c *winCall, format string, args ...any) error {
		return b.errAt(c.node, "%s over an updating result: %s", c.Text, fmt.Sprintf(format, args...))
	}
	const runs = "only COUNT, SUM, AVG, MIN and MAX OVER (... ROWS BETWEEN n PRECEDING AND CURRENT ROW) run there"
	if err := checkStreamAggs(wf, group, fail, fail(group[0], "%s", runs)); err != nil {
		return err
	}
	rows, preceding, err := streamFrame(wf.Funcs[0].Frame)
	if err != nil || !rows || preceding < 0 {
		return fail(group[0], "%s: a change must move a bounded number of rows", runs)
	}
	return nil
}

// checkStreamAggs checks what both stream OVER aggregates need of wf's
// functions: COUNT, SUM and AVG of BIGINT or DOUBLE, MIN, MAX; no
// DISTINCT; one frame. other is the error for any other function.
func checkStreamAggs(wf *WindowFuncs, group []*winCall, fail func(*winCall, string, ...any) error, other error) error {
	for i, f := range wf.Funcs {
		c := group[i]
		switch f.Func {
		case "count_star", "count", "min", "max":
		case "sum", "avg":
			if t := wf.Input.Schema().Field(f.Args[0]).Type; t.ID() != arrow.INT64 && t.ID() != arrow.FLOAT64 {
				return fail(c, "%s of %s is not supported yet (BIGINT or DOUBLE)", strings.ToUpper(f.Func), t)
			}
		default:
			return other
		}
		if f.Distinct {
			return fail(c, "DISTINCT is not supported here")
		}
		if !reflect.DeepEqual(f.Frame, wf.Funcs[0].Frame) {
			return fail(c, "its frame differs from %s's: one window, one frame", wf.Funcs[0].Text)
		}
	}
	return nil
}

// streamFrame reads a frame as StreamOverSpec's: ROWS or RANGE and the
// rows or microseconds PRECEDING (-1: UNBOUNDED). nil is SQL's default
// with ORDER BY, RANGE UNBOUNDED PRECEDING to CURRENT ROW.
func streamFrame(f *WindowFrame) (rows bool, preceding int64, err error) {
	if f == nil {
		return false, -1, nil
	}
	if f.Unit != ast.FrameRows && f.Unit != ast.FrameRange {
		return false, 0, fmt.Errorf("only ROWS and RANGE frames run over a stream")
	}
	if f.End.Kind != ast.CurrentRow {
		return false, 0, fmt.Errorf("the frame must end at CURRENT ROW: a later row's arrival would change what was emitted")
	}
	rows = f.Unit == ast.FrameRows
	switch f.Start.Kind {
	case ast.UnboundedPreceding:
		return rows, -1, nil
	case ast.CurrentRow:
		return rows, 0, nil
	case ast.Preceding:
		if rows {
			n, _ := f.Start.Offset.(int64)
			return true, n, nil
		}
		iv, ok := f.Start.Offset.(arrow.MonthDayNanoInterval)
		if !ok || iv.Months != 0 {
			return false, 0, fmt.Errorf("a RANGE frame over time needs an INTERVAL of days or less PRECEDING")
		}
		return false, int64(iv.Days)*86_400_000_000 + iv.Nanoseconds/1000, nil
	}
	return false, 0, fmt.Errorf("the frame must start PRECEDING the current row")
}

// buildStreamOver plans the event-time OVER aggregate: one instance per
// hash partition of the PARTITION BY keys (one without them).
func (b *builder) buildStreamOver(x *WindowFuncs) (*Stage, error) {
	in, err := b.build(x.Input)
	if err != nil {
		return nil, err
	}
	rows, preceding, err := streamFrame(x.Funcs[0].Frame)
	if err != nil {
		return nil, err
	}
	spec := ops.StreamOverSpec{PartitionBy: x.PartitionBy, Rows: rows, Preceding: preceding}
	if x.EventTime {
		spec.TimeCol = x.OrderBy[0].Col
	}
	var texts []string
	for _, f := range x.Funcs {
		arg := -1
		if len(f.Args) > 0 {
			arg = f.Args[0]
		}
		spec.Funcs = append(spec.Funcs, ops.StreamOverFunc{Func: f.Func, Arg: arg, Type: f.T})
		texts = append(texts, f.Text)
	}
	detail := strings.Join(texts, ", ")
	if len(x.PartitionBy) > 0 {
		detail += "; PARTITION BY " + colNames(x.Input.Schema(), x.PartitionBy)
	}
	detail += "; ORDER BY " + sortKeysText(x.Input.Schema(), x.OrderBy)
	w := wireKeyed
	if len(x.PartitionBy) == 0 {
		w = wireGather
	}
	if x.Retract {
		spec.OrderBy = x.OrderBy
		detail += fmt.Sprintf("; over an updating result: holds every current row, a change updates up to %d following", preceding)
		return b.op("RetractingOverAggregate", detail, func() exec.Operator { return ops.NewRetractingOverAgg(spec, x.schema) },
			w, [][]int{x.PartitionBy}, in), nil
	}
	detail += "; append-only, emitted as the watermark passes"
	return b.op("StreamOverAggregate", detail, func() exec.Operator { return ops.NewStreamOverAgg(spec, x.schema) },
		w, [][]int{x.PartitionBy}, in), nil
}
