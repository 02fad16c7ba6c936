package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// StreamDedupFirst is deduplication keeping the first row of each key by
// event time: ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) = 1, ts
// the time attribute. Its result is append-only: a key's earliest row is
// emitted once the watermark passes its time, when no row of the key can
// still arrive earlier (one with a time at or behind the watermark is
// late). Until then the key's earliest row so far is held (ties: the
// earlier arrival). A row at or behind the watermark for a key not yet
// emitted is the earliest the key can have, so it is emitted at once; a
// row earlier than the one its key emitted is late, dropped and counted.
// The emitted keys are remembered with their time, as Flink keeps the
// first row's state (without a TTL it grows with the keys).
//
// The output is the input columns, then the row number 1 (BIGINT) when
// asked for.
type StreamDedupFirst struct {
	partition []int
	timeCol   int
	rowNumber bool
	out       *arrow.Schema
	micros    func(int64) int64
	err       error

	wm      int64
	seq     int64
	pending map[string]*firstRow
	done    map[string]int64 // emitted keys: the time (µs) of the row emitted
	buf     []byte
	late    int64
	nullTS  int64
}

// firstRow is a key's earliest row so far, not yet emitted.
type firstRow struct {
	row exec.Row
	ts  int64 // µs
	seq int64 // arrival, for ties and a deterministic emission order
}

// NewStreamDedupFirst returns a first-row deduplication over the input's
// TIMESTAMP column timeCol; out is the input columns and, if rowNumber, a
// BIGINT row number.
func NewStreamDedupFirst(partition []int, timeCol int, rowNumber bool, out *arrow.Schema) *StreamDedupFirst {
	d := &StreamDedupFirst{partition: partition, timeCol: timeCol, rowNumber: rowNumber, out: out,
		wm: exec.MinWatermark, pending: map[string]*firstRow{}, done: map[string]int64{}}
	width := d.inputWidth()
	switch {
	case width < 1 || timeCol < 0 || timeCol >= width:
		d.err = fmt.Errorf("deduplication: time column %d out of range (%d columns)", timeCol, width)
	case rowNumber && out.Field(width).Type.ID() != arrow.INT64:
		d.err = fmt.Errorf("deduplication: the row number column must be BIGINT")
	default:
		d.micros, d.err = MicrosOf(out.Field(timeCol).Type)
	}
	return d
}

func (d *StreamDedupFirst) inputWidth() int {
	if d.rowNumber {
		return d.out.NumFields() - 1
	}
	return d.out.NumFields()
}

// Kind implements exec.Operator.
func (d *StreamDedupFirst) Kind() string { return "stream_dedup_first" }

// Capabilities: rows in, rows out, append-only.
func (d *StreamDedupFirst) Capabilities() exec.Capabilities { return exec.Capabilities{} }

// Keys are the partition columns and the time column, for EXPLAIN.
func (d *StreamDedupFirst) Keys() ([]int, int) { return d.partition, d.timeCol }

// Process holds each key's earliest row, emitting those already behind the
// watermark.
func (d *StreamDedupFirst) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if d.err != nil {
		return d.err
	}
	if b.Schema().NumFields() != d.inputWidth() {
		return fmt.Errorf("deduplication: input has %d columns, want %d", b.Schema().NumFields(), d.inputWidth())
	}
	for _, c := range d.partition {
		if c < 0 || c >= d.inputWidth() {
			return fmt.Errorf("deduplication: partition column %d out of range", c)
		}
	}
	var emit []exec.Row
	for _, row := range b.Rows() {
		v, ok := row[d.timeCol].(arrow.Timestamp)
		if !ok {
			d.nullTS++ // no event time: it can be no key's first by time
			continue
		}
		ts := d.micros(int64(v))
		d.buf = d.buf[:0]
		for _, c := range d.partition {
			d.buf = appendKeyValue(d.buf, row[c])
		}
		d.seq++
		if at, ok := d.done[string(d.buf)]; ok {
			if ts < at {
				d.late++
			}
			continue
		}
		if ts <= d.wm {
			// Nothing earlier can still come: this is the key's first.
			d.done[string(d.buf)] = ts
			delete(d.pending, string(d.buf))
			emit = append(emit, d.outRow(row))
			continue
		}
		if p := d.pending[string(d.buf)]; p == nil || ts < p.ts {
			// A copy: a decoded row shares its batch's backing array.
			d.pending[string(d.buf)] = &firstRow{row: append(make(exec.Row, 0, len(row)), row...), ts: ts, seq: d.seq}
		}
	}
	if len(emit) == 0 {
		return nil
	}
	return emitRowChunks(ctx, out, d.out, emit)
}

func (d *StreamDedupFirst) outRow(row exec.Row) exec.Row {
	o := append(make(exec.Row, 0, len(row)+1), row...)
	if d.rowNumber {
		o = append(o, int64(1))
	}
	return o
}

// OnWatermark emits the held rows the watermark passed, in time order,
// then forwards it.
func (d *StreamDedupFirst) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if d.err != nil {
		return d.err
	}
	if wm <= d.wm {
		return out.EmitWatermark(ctx, wm)
	}
	d.wm = wm
	var ready []*firstRow
	for k, p := range d.pending {
		if p.ts <= wm {
			ready = append(ready, p)
			d.done[k] = p.ts
			delete(d.pending, k)
		}
	}
	if len(ready) > 0 {
		slices.SortFunc(ready, func(a, b *firstRow) int {
			if a.ts != b.ts {
				return cmpOrdered(a.ts, b.ts)
			}
			return cmpOrdered(a.seq, b.seq)
		})
		rows := make([]exec.Row, len(ready))
		for i, p := range ready {
			rows[i] = d.outRow(p.row)
		}
		if err := emitRowChunks(ctx, out, d.out, rows); err != nil {
			return err
		}
	}
	return out.EmitWatermark(ctx, wm)
}

// Finish emits every held row: no more input can come before them.
func (d *StreamDedupFirst) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	return d.OnWatermark(ctx, exec.MaxWatermark, out)
}

// Close drops the state.
func (d *StreamDedupFirst) Close() {
	d.pending, d.done = map[string]*firstRow{}, map[string]int64{}
}

// Report counts the late and time-less rows dropped and the keys held.
func (d *StreamDedupFirst) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "late records dropped", Value: d.late},
		{Name: "records without event time dropped", Value: d.nullTS},
		{Name: "keys emitted", Value: int64(len(d.done))},
		{Name: "keys held", Value: int64(len(d.pending))},
	}}
}
