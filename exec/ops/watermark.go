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
// max(ts seen) - delay when that advanced. It drops nothing: as in Flink, a
// record behind the watermark is late only for the event-time operators
// after it (windows drop and count it), while a plain SELECT keeps it.
//
// A source that reads several partitions in one instance (Kafka) emits the
// minimum over its partitions of their latest record times; the assigner
// never runs ahead of that minus the delay, so a fast partition cannot make
// a slow partition's records late, and with FollowSource it emits nothing
// before the source's first watermark (a partition that has not produced
// yet holds it back). Sources without a clock of their own
// (Parquet) emit only the final MaxWatermark of a bounded input, which ends
// event time.
//
// Each parallel instance of a scan gets its own assigner; the runner takes
// the minimum over them at the next stage's port.
type WatermarkAssigner struct {
	col   int
	delay int64 // microseconds
	mem   memory.Allocator

	wm      int64 // last emitted
	maxTS   int64 // microseconds
	srcWM   int64 // the source's latest watermark, when it has one
	srcSeen bool
	// follow: the source keeps a clock per partition (FollowSource), so
	// the assigner waits for it even before its first watermark: records
	// of a partition that has not produced yet must not be made late by
	// another partition's.
	follow  bool
	behind  int64 // records behind the watermark when they arrived (kept)
	nullTS  int64
	final   bool
	emitted int64
}

// NewWatermarkAssigner returns an assigner reading the TIMESTAMP column col.
func NewWatermarkAssigner(col int, delay time.Duration, mem memory.Allocator) *WatermarkAssigner {
	return &WatermarkAssigner{col: col, delay: delay.Microseconds(), mem: mem,
		wm: exec.MinWatermark, maxTS: exec.MinWatermark, srcWM: exec.MinWatermark}
}

// FollowSource makes the source's own clock (its watermarks: the minimum
// over its partitions) bound the assigner from the start: until the source
// reports one, the assigner emits nothing.
func (w *WatermarkAssigner) FollowSource() { w.follow = true }

// Kind implements exec.Operator.
func (w *WatermarkAssigner) Kind() string { return "watermark_assigner" }

// Capabilities implements exec.Operator: every batch leaves as it came.
func (w *WatermarkAssigner) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Watermark is the last watermark emitted.
func (w *WatermarkAssigner) Watermark() int64 { return w.wm }

// Behind is the number of records that arrived behind the watermark (kept;
// the windows after it drop them as late).
func (w *WatermarkAssigner) Behind() int64 { return w.behind }

// Report implements exec.Reporter.
func (w *WatermarkAssigner) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "records behind the watermark (kept)", Value: w.behind},
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

// MicrosOf returns the conversion of t's TIMESTAMP values to event-time
// microseconds (floored, as every event-time operator reads them), for
// those outside this package that keep an event-time clock.
func MicrosOf(t arrow.DataType) (func(v int64) int64, error) {
	mul, div, err := tsScale(t)
	if err != nil {
		return nil, err
	}
	return func(v int64) int64 { return toMicros(v, mul, div) }, nil
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

// ProcessColumnar scans the timestamp column with a typed loop for the
// batch's maximum and forwards the batch as it came.
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
	bmax := exec.MinWatermark
	for i, v := range vals {
		if nulls && col.IsNull(i) {
			continue
		}
		us := toMicros(int64(v), mul, div)
		if us < w.wm {
			w.behind++
		}
		if us > bmax {
			bmax = us
		}
	}
	w.nullTS += int64(col.NullN())
	if err := out.Emit(ctx, b); err != nil {
		return true, err
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
	bmax := exec.MinWatermark
	for i, r := range b.Rows() {
		if r[w.col] == nil {
			w.nullTS++
			continue
		}
		v, ok := r[w.col].(arrow.Timestamp)
		if !ok {
			return fmt.Errorf("watermark: row %d: column %q holds %T, not a timestamp", i, b.Schema().Field(w.col).Name, r[w.col])
		}
		us := toMicros(int64(v), mul, div)
		if us < w.wm {
			w.behind++
		}
		bmax = max(bmax, us)
	}
	if b.Len() > 0 {
		if err := out.Emit(ctx, b); err != nil {
			return err
		}
	}
	return w.advance(ctx, bmax, out)
}

// advance emits max - delay when that moved the watermark forward, bounded
// by the source's own clock when it has one.
func (w *WatermarkAssigner) advance(ctx context.Context, bmax int64, out exec.Emitter) error {
	if w.final {
		return nil
	}
	w.maxTS = max(w.maxTS, bmax)
	if w.maxTS == exec.MinWatermark {
		return nil
	}
	next := w.maxTS - w.delay
	if w.delay < 0 || next > w.maxTS { // a negative delay or an overflow: no clock
		return nil
	}
	switch {
	case w.srcSeen:
		next = min(next, w.srcWM-w.delay)
	case w.follow:
		return nil // the source has not reported its partitions' clock yet
	}
	if next <= w.wm {
		return nil
	}
	w.wm = next
	w.emitted++
	return out.EmitWatermark(ctx, next)
}

// OnWatermark records the source's clock, which bounds the assigner's (see
// the type), and passes on the end of a bounded input.
func (w *WatermarkAssigner) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if w.final {
		return nil
	}
	if wm != exec.MaxWatermark {
		w.srcWM, w.srcSeen = wm, true
		return w.advance(ctx, exec.MinWatermark, out)
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
