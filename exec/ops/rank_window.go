package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// WindowRank is Flink's window Top-N and window deduplication: ROW_NUMBER()
// OVER (PARTITION BY window_start, window_end, k ORDER BY x) filtered to
// rn <= N after a window table function or a window aggregate. Each
// window keeps the best N rows of each key (UpdatingTopN's ranking, as
// StreamRank) and emits them once, when the watermark passes the window's
// last millisecond, with their row number when asked: append-only. A row
// of a window that has fired is late, dropped and counted.
//
// With the columnar switch on, each firing is emitted as one Arrow record
// built from the kept rows.
type WindowRank struct {
	partition []int // every PARTITION BY column, the window's among them
	endCol    int   // window_end
	rowNumber bool
	eng       *UpdatingTopN
	out       *arrow.Schema
	mem       memory.Allocator
	micros    func(int64) int64
	err       error

	columnarOut  bool
	wm           int64
	panes        map[int64]*rankPane // by window end, µs
	buf          []byte
	touched      []*rankPart
	late, nullTS int64
}

// rankPane is one window's keys, in order of arrival.
type rankPane struct {
	parts map[string]*rankPart
	order []*rankPart
}

// WindowRankSpec configures a WindowRank: StreamRankSpec's fields and the
// window_end column (TIMESTAMP).
type WindowRankSpec struct {
	StreamRankSpec
	EndCol int
}

// NewWindowRank returns a window Top-N; out is the input columns and, if
// spec.RowNumber, a BIGINT row number.
func NewWindowRank(spec WindowRankSpec, out *arrow.Schema, mem memory.Allocator) *WindowRank {
	r := &WindowRank{partition: spec.PartitionBy, endCol: spec.EndCol, rowNumber: spec.RowNumber, out: out, mem: mem,
		wm: exec.MinWatermark, panes: map[int64]*rankPane{}}
	// The ranking engine's schema only needs a VARCHAR last column.
	r.eng = NewUpdatingTopN(spec.OrderBy, spec.N, 0, arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String}}, nil))
	r.eng.lastWins = spec.LastWins
	width := r.inputWidth()
	switch {
	case r.eng.err != nil:
		r.err = fmt.Errorf("window top-n: %w", r.eng.err)
	case spec.N < 1:
		r.err = fmt.Errorf("window top-n: the rank bound %d keeps no row", spec.N)
	case spec.EndCol < 0 || spec.EndCol >= width:
		r.err = fmt.Errorf("window top-n: window_end column %d out of range (%d columns)", spec.EndCol, width)
	case spec.RowNumber && out.Field(width).Type.ID() != arrow.INT64:
		r.err = fmt.Errorf("window top-n: the row number column must be BIGINT")
	default:
		r.micros, r.err = MicrosOf(out.Field(spec.EndCol).Type)
	}
	return r
}

func (r *WindowRank) inputWidth() int {
	if r.rowNumber {
		return r.out.NumFields() - 1
	}
	return r.out.NumFields()
}

// Kind implements exec.Operator.
func (r *WindowRank) Kind() string { return "window_rank" }

// Capabilities: columnar or rows in (rank_columnar.go); a firing's rows
// leave born columnar when asked.
func (r *WindowRank) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (r *WindowRank) SetColumnarOutput(on bool) { r.columnarOut = on }

// OpenWindows is the number of windows not yet fired.
func (r *WindowRank) OpenWindows() int { return len(r.panes) }

// fired reports whether the window ending at end (µs) has fired: the
// watermark passed its last millisecond, as for window aggregates.
func (r *WindowRank) fired(end int64) bool { return windowTime(end) <= r.wm }

// place returns row's window end and its key's state, created when new;
// ok is false for a row without a window end.
func (r *WindowRank) place(row exec.Row) (int64, *rankPart, bool) {
	v, ok := row[r.endCol].(arrow.Timestamp)
	if !ok {
		return 0, nil, false
	}
	end := r.micros(int64(v))
	pane := r.panes[end]
	if pane == nil {
		pane = &rankPane{parts: map[string]*rankPart{}}
		r.panes[end] = pane
	}
	r.buf = r.buf[:0]
	for _, c := range r.partition {
		r.buf = appendKeyValue(r.buf, row[c])
	}
	p := pane.parts[string(r.buf)]
	if p == nil {
		p = &rankPart{}
		pane.parts[string(r.buf)] = p
		pane.order = append(pane.order, p)
	}
	return end, p, true
}

// Process ranks the batch's rows within their window and key.
func (r *WindowRank) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if err := r.check(b.Schema()); err != nil {
		return err
	}
	t := r.eng
	first := t.seq + 1
	for _, row := range b.Rows() {
		if !r.admit(row) {
			continue
		}
		_, p, _ := r.place(row)
		t.seq++
		t.top = p.top
		if t.insert(row, t.n) && !p.touched {
			p.touched = true
			r.touched = append(r.touched, p)
		}
		p.top = t.top
	}
	r.copyTouched(first)
	return nil
}

// copyTouched copies the touched keys' rows kept from arrival first on
// (they share their batch's backing array).
func (r *WindowRank) copyTouched(first uint64) {
	t := r.eng
	for _, p := range r.touched {
		p.touched = false
		t.top = p.top
		t.copyKept(first)
	}
	clear(r.touched)
	r.touched, t.top = r.touched[:0], nil
}

func (r *WindowRank) check(schema *arrow.Schema) error {
	if r.err != nil {
		return r.err
	}
	if schema.NumFields() != r.inputWidth() {
		return fmt.Errorf("window top-n: input has %d columns, want %d", schema.NumFields(), r.inputWidth())
	}
	for _, c := range r.partition {
		if c < 0 || c >= r.inputWidth() {
			return fmt.Errorf("window top-n: partition column %d out of range", c)
		}
	}
	for _, k := range r.eng.keys {
		if k.Col < 0 || k.Col >= r.inputWidth() {
			return fmt.Errorf("window top-n: sort column %d out of range", k.Col)
		}
	}
	return nil
}

// admit reports whether row has a window that has not fired, counting
// the rows dropped.
func (r *WindowRank) admit(row exec.Row) bool {
	v, ok := row[r.endCol].(arrow.Timestamp)
	switch {
	case !ok:
		r.nullTS++
		return false
	case r.fired(r.micros(int64(v))):
		r.late++
		return false
	}
	return true
}

// OnWatermark emits the windows the watermark passed, by end, then
// forwards it.
func (r *WindowRank) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if r.err != nil {
		return r.err
	}
	if wm > r.wm {
		r.wm = wm
	}
	var ends []int64
	for end := range r.panes {
		if r.fired(end) {
			ends = append(ends, end)
		}
	}
	slices.Sort(ends)
	var rows []exec.Row
	for _, end := range ends {
		for _, p := range r.panes[end].order {
			for i, e := range p.top {
				o := e.row
				if r.rowNumber {
					o = append(append(make(exec.Row, 0, len(e.row)+1), e.row...), int64(i+1))
				}
				rows = append(rows, o)
			}
		}
		delete(r.panes, end)
	}
	if err := r.emit(ctx, rows, out); err != nil {
		return err
	}
	return out.EmitWatermark(ctx, wm)
}

// emit hands a firing's rows on: one Arrow record when columnar output is
// on, else row batches.
func (r *WindowRank) emit(ctx context.Context, rows []exec.Row, out exec.Emitter) error {
	if len(rows) == 0 {
		return nil
	}
	if !r.columnarOut {
		return emitRowChunks(ctx, out, r.out, rows)
	}
	rec, err := exec.EncodeRows(r.mem, r.out, rows)
	if err != nil {
		return fmt.Errorf("window top-n: %w", err)
	}
	return emitRecordChunks(ctx, out, rec)
}

// Finish fires every window: no more input can reach them.
func (r *WindowRank) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	return r.OnWatermark(ctx, exec.MaxWatermark, out)
}

// Close drops the state.
func (r *WindowRank) Close() { r.panes = map[int64]*rankPane{} }

// Report counts the late rows dropped and the open windows.
func (r *WindowRank) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "late records dropped", Value: r.late},
		{Name: "records without a window dropped", Value: r.nullTS},
		{Name: "open windows", Value: int64(len(r.panes))},
	}}
}
