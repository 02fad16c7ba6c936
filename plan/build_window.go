package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql/ast"
)

// buildWindowFuncs plans a bounded window operator: one instance per hash
// partition of the PARTITION BY keys, one instance without them.
func (b *builder) buildWindowFuncs(x *WindowFuncs) (*Stage, error) {
	if x.Unbounded != nil {
		return nil, x.Unbounded // a ROW_NUMBER no WHERE bounded (bind_rank.go)
	}
	if x.EventTime || x.Retract {
		return b.buildStreamOver(x) // bind_over.go
	}
	in, err := b.build(x.Input)
	if err != nil {
		return nil, err
	}
	spec := ops.WindowFuncsSpec{PartitionBy: x.PartitionBy, OrderBy: x.OrderBy}
	var texts []string
	for _, f := range x.Funcs {
		of := ops.WindowFunc{Func: f.Func, Args: f.Args, Param: f.Param, Default: f.Default,
			Distinct: f.Distinct, IgnoreNulls: f.IgnoreNulls, Type: f.T}
		if f.Frame != nil {
			fr, err := opsFrame(f.Frame, x, f)
			if err != nil {
				return nil, err
			}
			of.Frame = fr
		}
		spec.Funcs = append(spec.Funcs, of)
		texts = append(texts, f.Text)
	}
	detail := strings.Join(texts, ", ")
	if len(x.PartitionBy) > 0 {
		detail += "; PARTITION BY " + colNames(x.Input.Schema(), x.PartitionBy)
	}
	if len(x.OrderBy) > 0 {
		detail += "; ORDER BY " + sortKeysText(x.Input.Schema(), x.OrderBy)
	}
	w := wireKeyed
	if len(x.PartitionBy) == 0 {
		w = wireGather // one partition: one instance sees every row
	}
	mem := b.opts.Mem
	return b.op("Window", detail, func() exec.Operator { return ops.NewWindowFuncs(spec, x.schema, mem) },
		w, [][]int{x.PartitionBy}, in), nil
}

// opsFrame is a frame clause in the operator's terms.
func opsFrame(f *WindowFrame, x *WindowFuncs, wf WindowFunc) (*ops.Frame, error) {
	units := map[ast.FrameUnit]ops.FrameUnit{ast.FrameRows: ops.FrameRows, ast.FrameRange: ops.FrameRange, ast.FrameGroups: ops.FrameGroups}
	kinds := map[ast.BoundKind]ops.BoundKind{ast.UnboundedPreceding: ops.UnboundedPreceding, ast.Preceding: ops.OffsetPreceding,
		ast.CurrentRow: ops.CurrentRow, ast.Following: ops.OffsetFollowing, ast.UnboundedFollowing: ops.UnboundedFollowing}
	bound := func(fb FrameBound) (ops.FrameBound, error) {
		out := ops.FrameBound{Kind: kinds[fb.Kind], Offset: fb.Offset}
		if f.Unit == ast.FrameRange && fb.Offset != nil && len(x.OrderBy) == 1 {
			// The operator reads a float key's offset as a DOUBLE.
			if v, ok := fb.Offset.(float32); ok {
				out.Offset = float64(v)
			}
		}
		return out, nil
	}
	s, err := bound(f.Start)
	if err != nil {
		return nil, err
	}
	e, err := bound(f.End)
	if err != nil {
		return nil, err
	}
	return &ops.Frame{Unit: units[f.Unit], Start: s, End: e}, nil
}

// buildExpand plans the grouping-set expansion under a GROUP BY GROUPING
// SETS (ROLLUP, CUBE): parallel, row by row.
func (b *builder) buildExpand(x *Expand) (*Stage, error) {
	in, err := b.build(x.Input)
	if err != nil {
		return nil, err
	}
	sets := make([][]int, len(x.Sets))
	var parts []string
	for i, s := range x.Sets {
		for _, k := range s {
			sets[i] = append(sets[i], x.KeyCols[k])
		}
		parts = append(parts, "("+colNames(x.Input.Schema(), sets[i])+")")
	}
	mem := b.opts.Mem
	return b.op("Expand", "GROUPING SETS "+strings.Join(parts, ", "), func() exec.Operator {
		return ops.NewExpand(sets, x.KeyCols, x.schema, mem)
	}, wireParallel, nil, in), nil
}

func colNames(s *arrow.Schema, cols []int) string {
	var out []string
	for _, c := range cols {
		if c >= 0 && c < s.NumFields() {
			out = append(out, s.Field(c).Name)
		} else {
			out = append(out, fmt.Sprintf("$%d", c))
		}
	}
	return strings.Join(out, ", ")
}
