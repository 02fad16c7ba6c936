package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// WindowAssign is a TUMBLE or HOP window table function selected from
// directly: each row once per window holding it, with window_start,
// window_end and window_time appended. Columnar: a TUMBLE batch keeps its
// columns (zero copy) and gains three typed columns; a HOP batch gathers
// each row once per window. A row without event time is dropped (counted).
type WindowAssign struct {
	exec.Base
	spec    WindowSpec
	timeCol int
	out     *arrow.Schema
	mem     memory.Allocator

	idx    []int32
	starts []int64
	nullTS int64
}

// NewWindowAssign returns the window table function over the TIMESTAMP
// column timeCol; out is the input's columns plus the three window columns.
func NewWindowAssign(spec WindowSpec, timeCol int, out *arrow.Schema, mem memory.Allocator) *WindowAssign {
	return &WindowAssign{spec: spec, timeCol: timeCol, out: out, mem: mem}
}

// Kind implements exec.Operator.
func (a *WindowAssign) Kind() string { return "window_assign" }

// Capabilities implements exec.Operator.
func (a *WindowAssign) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Report implements exec.Reporter.
func (a *WindowAssign) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{{Name: "null event times", Value: a.nullTS}}}
}

func (a *WindowAssign) check(in *arrow.Schema) (int64, int64, error) {
	if err := a.spec.Validate(); err != nil || a.spec.Kind == Session {
		return 0, 0, fmt.Errorf("window table: %s cannot be assigned row by row", a.spec)
	}
	if in.NumFields()+3 != a.out.NumFields() || a.timeCol >= in.NumFields() {
		return 0, 0, fmt.Errorf("window table: input has %d columns, output %d (want 3 more)", in.NumFields(), a.out.NumFields())
	}
	mul, div, err := tsScale(in.Field(a.timeCol).Type)
	if err != nil {
		return 0, 0, fmt.Errorf("window table: column %q: %w", in.Field(a.timeCol).Name, err)
	}
	return mul, div, nil
}

// ProcessColumnar computes each row's windows with a typed loop.
func (a *WindowAssign) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	rec := b.Record()
	mul, div, err := a.check(rec.Schema())
	if err != nil {
		return false, err
	}
	col, ok := rec.Column(a.timeCol).(*array.Timestamp)
	if !ok {
		return false, fmt.Errorf("window table: time column is %s", rec.Column(a.timeCol).DataType())
	}
	a.idx, a.starts = a.idx[:0], a.starts[:0]
	nulls := col.NullN() > 0
	for i, v := range col.TimestampValues() {
		if nulls && col.IsNull(i) {
			a.nullTS++
			continue
		}
		a.spec.windowsOf(toMicros(int64(v), mul, div), func(start int64) {
			a.idx = append(a.idx, int32(i))
			a.starts = append(a.starts, start)
		})
	}
	if len(a.idx) == 0 {
		return true, nil
	}
	var cols []arrow.Array
	if len(a.idx) == int(rec.NumRows()) && a.spec.Kind == Tumble {
		cols = recordColumns(rec)
		for _, c := range cols {
			c.Retain()
		}
	} else {
		for _, c := range recordColumns(rec) {
			g, err := gather(a.mem, c, a.idx)
			if err != nil {
				releaseAll(cols)
				return true, fmt.Errorf("window table: %w", err)
			}
			cols = append(cols, g)
		}
	}
	k := rec.Schema().NumFields()
	size := a.spec.Size.Microseconds()
	for f := 0; f < 3; f++ {
		tt := a.out.Field(k + f).Type.(*arrow.TimestampType)
		tb := array.NewTimestampBuilder(a.mem, tt)
		tb.Reserve(len(a.starts))
		for _, s := range a.starts {
			v := [3]int64{s, s + size, windowTime(s + size)}[f]
			tb.UnsafeAppend(fromMicros(v, tt.Unit))
		}
		cols = append(cols, tb.NewArray())
		tb.Release()
	}
	schema := a.out
	for _, c := range cols[:k] {
		if c.DataType().ID() == arrow.DICTIONARY {
			schema = schemaOf(a.out, cols[:k]) // a dictionary-encoded column passes through
			break
		}
	}
	res := array.NewRecordBatch(schema, cols, int64(len(a.idx)))
	releaseAll(cols)
	return true, emitRecord(ctx, out, res)
}

func releaseAll(cols []arrow.Array) {
	for _, c := range cols {
		c.Release()
	}
}

// Process is the row path.
func (a *WindowAssign) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	mul, div, err := a.check(b.Schema())
	if err != nil {
		return err
	}
	k := b.Schema().NumFields()
	var units [3]arrow.TimeUnit
	for f := range units {
		units[f] = a.out.Field(k + f).Type.(*arrow.TimestampType).Unit
	}
	size := a.spec.Size.Microseconds()
	var rows []exec.Row
	for i, r := range b.Rows() {
		if r[a.timeCol] == nil {
			a.nullTS++
			continue
		}
		v, ok := r[a.timeCol].(arrow.Timestamp)
		if !ok {
			return fmt.Errorf("window table: row %d: time column holds %T", i, r[a.timeCol])
		}
		a.spec.windowsOf(toMicros(int64(v), mul, div), func(s int64) {
			row := make(exec.Row, 0, k+3)
			row = append(append(row, r...), fromMicros(s, units[0]), fromMicros(s+size, units[1]), fromMicros(windowTime(s+size), units[2]))
			rows = append(rows, row)
		})
	}
	return emitRows(ctx, out, a.out, rows)
}
