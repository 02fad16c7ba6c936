package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// WatermarkAssigner is the event-time clock of one source instance
// (WATERMARK FOR ts AS ts - INTERVAL 'n' UNIT): after each batch it emits
// max(ts seen) - delay when that advanced. A record whose time is below the
// watermark already emitted when it arrives is late: it is dropped and
// counted. The source's own watermarks are ignored (the table's clause
// defines event time), except the final MaxWatermark of a bounded input.
//
// Each parallel instance of a scan gets its own assigner; the runner takes
// the minimum over them at the next stage's port, so a fast split cannot
// make a slow split's records late downstream.
type WatermarkAssigner struct {
	col   int
	delay int64 // microseconds
	mem   memory.Allocator

	wm      int64 // last emitted
	maxTS   int64 // microseconds
	late    int64
	nullTS  int64
	final   bool
	sel     []int32
	emitted int64
}

// NewWatermarkAssigner returns an assigner reading the TIMESTAMP column col.
func NewWatermarkAssigner(col int, delay time.Duration, mem memory.Allocator) *WatermarkAssigner {
	return &WatermarkAssigner{col: col, delay: delay.Microseconds(), mem: mem,
		wm: exec.MinWatermark, maxTS: exec.MinWatermark}
}

// Kind implements exec.Operator.
func (w *WatermarkAssigner) Kind() string { return "watermark_assigner" }

// Capabilities implements exec.Operator: a batch without late records
// leaves as it came; one with late records leaves as a gathered record.
func (w *WatermarkAssigner) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Watermark is the last watermark emitted.
func (w *WatermarkAssigner) Watermark() int64 { return w.wm }

// Late is the number of late records dropped.
func (w *WatermarkAssigner) Late() int64 { return w.late }

// Report implements exec.Reporter.
func (w *WatermarkAssigner) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "late records dropped", Value: w.late},
		{Name: "null event times", Value: w.nullTS},
		{Name: "watermarks emitted", Value: w.emitted},
	}}
}

// tsScale converts a timestamp unit to microseconds: multiply by mul, or
// (nanoseconds) divide by div.
func tsScale(t arrow.DataType) (mul, div int64, err error) {
	ts, ok := t.(*arrow.TimestampType)
	if !ok {
		return 0, 0, fmt.Errorf("event-time column is %s, not TIMESTAMP", t)
	}
	switch ts.Unit {
	case arrow.Second:
		return 1_000_000, 1, nil
	case arrow.Millisecond:
		return 1000, 1, nil
	case arrow.Microsecond:
		return 1, 1, nil
	default:
		return 1, 1000, nil
	}
}

// toMicros converts a timestamp of the given scale to microseconds.
func toMicros(v, mul, div int64) int64 {
	if div != 1 {
		q := v / div
		if v%div < 0 {
			q-- // floor, so a record is never earlier than its time
		}
		return q
	}
	return v * mul
}

// ProcessColumnar scans the timestamp column with a typed loop: the batch's
// maximum and its late rows. A batch without late rows is forwarded as is.
func (w *WatermarkAssigner) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	rec := b.Record()
	if w.col >= int(rec.NumCols()) {
		return false, fmt.Errorf("watermark: column %d out of range (%d columns)", w.col, rec.NumCols())
	}
	col, ok := rec.Column(w.col).(*array.Timestamp)
	if !ok {
		return false, fmt.Errorf("watermark: column %q is %s, not TIMESTAMP", rec.Schema().Field(w.col).Name, rec.Column(w.col).DataType())
	}
	mul, div, _ := tsScale(col.DataType())
	vals := col.TimestampValues()
	nulls := col.NullN() > 0
	bmax, late := exec.MinWatermark, 0
	for i, v := range vals {
		if nulls && col.IsNull(i) {
			continue
		}
		us := toMicros(int64(v), mul, div)
		if us < w.wm {
			late++
			continue
		}
		if us > bmax {
			bmax = us
		}
	}
	if nulls {
		w.nullTS += int64(col.NullN())
	}
	if late == 0 {
		if err := out.Emit(ctx, b); err != nil {
			return true, err
		}
		return true, w.advance(ctx, bmax, out)
	}
	w.late += int64(late)
	sel := w.sel[:0]
	for i, v := range vals {
		// A NULL event time is kept: it is not late, and the window
		// operators drop and count it themselves.
		if (nulls && col.IsNull(i)) || toMicros(int64(v), mul, div) >= w.wm {
			sel = append(sel, int32(i))
		}
	}
	w.sel = sel
	if len(sel) > 0 {
		res, err := gatherRecord(w.mem, rec.Schema(), recordColumns(rec), sel)
		if err != nil {
			return true, fmt.Errorf("watermark: %w", err)
		}
		if err := emitRecord(ctx, out, res); err != nil {
			return true, err
		}
	}
	return true, w.advance(ctx, bmax, out)
}

// Process is the row path.
func (w *WatermarkAssigner) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if w.col >= len(b.Schema().Fields()) {
		return fmt.Errorf("watermark: column %d out of range (%d columns)", w.col, len(b.Schema().Fields()))
	}
	mul, div, err := tsScale(b.Schema().Field(w.col).Type)
	if err != nil {
		return fmt.Errorf("watermark: column %q: %w", b.Schema().Field(w.col).Name, err)
	}
	rows := b.Rows()
	kept := rows[:0:0]
	bmax := exec.MinWatermark
	for i, r := range rows {
		v, ok := r[w.col].(arrow.Timestamp)
		if r[w.col] == nil {
			w.nullTS++
			kept = append(kept, r)
			continue
		}
		if !ok {
			return fmt.Errorf("watermark: row %d: column %q holds %T, not a timestamp", i, b.Schema().Field(w.col).Name, r[w.col])
		}
		us := toMicros(int64(v), mul, div)
		if us < w.wm {
			w.late++
			continue
		}
		bmax = max(bmax, us)
		kept = append(kept, r)
	}
	if len(kept) == len(rows) {
		if len(rows) > 0 {
			if err := out.Emit(ctx, b); err != nil {
				return err
			}
		}
	} else if err := emitRows(ctx, out, b.Schema(), kept); err != nil {
		return err
	}
	return w.advance(ctx, bmax, out)
}

// advance emits max - delay when it moved the watermark forward.
func (w *WatermarkAssigner) advance(ctx context.Context, bmax int64, out exec.Emitter) error {
	if bmax == exec.MinWatermark || w.final {
		return nil
	}
	w.maxTS = max(w.maxTS, bmax)
	next := w.maxTS - w.delay
	if w.delay < 0 || next > w.maxTS { // a negative delay or an overflow: no clock
		return nil
	}
	if next <= w.wm {
		return nil
	}
	w.wm = next
	w.emitted++
	return out.EmitWatermark(ctx, next)
}

// OnWatermark ignores the source's clock except the end of a bounded input.
func (w *WatermarkAssigner) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if wm != exec.MaxWatermark || w.final {
		return nil
	}
	w.final, w.wm = true, exec.MaxWatermark
	w.emitted++
	return out.EmitWatermark(ctx, exec.MaxWatermark)
}

// Finish ends event time: an input that ended will not bring anything
// earlier, so every window downstream may fire (a Parquet replay ends
// without a watermark of its own).
func (w *WatermarkAssigner) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	return w.OnWatermark(ctx, exec.MaxWatermark, out)
}

// Close does nothing: the assigner holds no batches.
func (w *WatermarkAssigner) Close() {}
