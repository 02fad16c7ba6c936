package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// firePart is part of one fire: group columns and aggregates (a record, or
// rows), and the window of each row: one window for a TUMBLE/HOP pane, one
// per row for sessions.
type firePart struct {
	rec          arrow.RecordBatch // owned
	rows         []exec.Row
	start, end   int64   // µs, when starts is nil
	starts, ends []int64 // µs, per row
}

func (p *firePart) len() int {
	if p.rec != nil {
		return int(p.rec.NumRows())
	}
	return len(p.rows)
}

func (p *firePart) window(i int) (int64, int64) {
	if p.starts != nil {
		return p.starts[i], p.ends[i]
	}
	return p.start, p.end
}

// paneCapture keeps what a pane's HashAggregate emits at Finish.
type paneCapture struct {
	parts []firePart
}

func (c *paneCapture) Emit(_ context.Context, b *exec.Batch) error {
	if b.IsColumnar() {
		rec := b.Record()
		rec.Retain()
		c.parts = append(c.parts, firePart{rec: rec})
		return nil
	}
	c.parts = append(c.parts, firePart{rows: b.Rows()})
	return nil
}

func (c *paneCapture) EmitWatermark(context.Context, int64) error { return nil }

// finishPane takes a pane aggregate's result, columnar or as rows.
func finishPane(ctx context.Context, h *HashAggregate, columnar bool) ([]firePart, error) {
	h.SetColumnarOutput(columnar)
	c := &paneCapture{}
	if err := h.Finish(ctx, 0, c); err != nil {
		for _, p := range c.parts {
			if p.rec != nil {
				p.rec.Release()
			}
		}
		return nil, err
	}
	return c.parts, nil
}

// fromMicros converts µs to a timestamp of unit.
func fromMicros(us int64, unit arrow.TimeUnit) arrow.Timestamp {
	switch unit {
	case arrow.Second:
		return arrow.Timestamp(floorDiv(us, 1_000_000))
	case arrow.Millisecond:
		return arrow.Timestamp(floorDiv(us, 1000))
	case arrow.Nanosecond:
		return arrow.Timestamp(us * 1000)
	default:
		return arrow.Timestamp(us)
	}
}

// windowTime is window_time: the last instant inside the window (end - 1ms).
func windowTime(end int64) int64 { return end - 1000 }

// emitFire emits one fire: born columnar (the parts' columns plus the
// window columns built with typed builders) or as rows.
func emitFire(ctx context.Context, out exec.Emitter, mem memory.Allocator, schema *arrow.Schema, parts []firePart, columnar bool) error {
	k := schema.NumFields() - 3
	units := [3]arrow.TimeUnit{}
	for i := range units {
		units[i] = schema.Field(k + i).Type.(*arrow.TimestampType).Unit
	}
	if !columnar {
		var rows []exec.Row
		for pi := range parts {
			p := &parts[pi]
			src := p.rows
			if p.rec != nil {
				src = exec.DecodeRows(p.rec) // not reached: a columnar fire keeps records
			}
			for i, r := range src {
				s, e := p.window(i)
				row := make(exec.Row, 0, k+3)
				row = append(row, r...)
				row = append(row, fromMicros(s, units[0]), fromMicros(e, units[1]), fromMicros(windowTime(e), units[2]))
				rows = append(rows, row)
			}
		}
		return emitRowChunks(ctx, out, schema, rows)
	}
	total := 0
	for i := range parts {
		total += parts[i].len()
	}
	cols := make([]arrow.Array, 0, k+3)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c := 0; c < k; c++ {
		pieces := make([]arrow.Array, 0, len(parts))
		for i := range parts {
			if parts[i].rec == nil {
				return fmt.Errorf("window fire: a pane emitted rows on a columnar fire")
			}
			pieces = append(pieces, parts[i].rec.Column(c))
		}
		if len(pieces) == 1 {
			pieces[0].Retain()
			cols = append(cols, pieces[0])
			continue
		}
		a, err := array.Concatenate(pieces, mem)
		if err != nil {
			return fmt.Errorf("window fire: column %q: %w", schema.Field(c).Name, err)
		}
		cols = append(cols, a)
	}
	for f := 0; f < 3; f++ {
		tb := array.NewTimestampBuilder(mem, schema.Field(k+f).Type.(*arrow.TimestampType))
		tb.Reserve(total)
		for pi := range parts {
			p := &parts[pi]
			for i, n := 0, p.len(); i < n; i++ {
				s, e := p.window(i)
				v := [3]int64{s, e, windowTime(e)}[f]
				tb.UnsafeAppend(fromMicros(v, units[f]))
			}
		}
		cols = append(cols, tb.NewArray())
		tb.Release()
	}
	rec := array.NewRecordBatch(schema, cols, int64(total))
	return emitRecordChunks(ctx, out, rec)
}
