package ops

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// WindowAggregate is GROUP BY keys over event-time windows (TUMBLE, HOP,
// SESSION). It folds each batch into per-(window, key) state and fires a
// window when the watermark reaches its last millisecond (window_time =
// end - 1ms, Flink's maxTimestamp): append-only output, each pane once.
// Output: the group columns, the aggregates, then window_start, window_end
// and window_time (= window_end - 1ms), all TIMESTAMP.
//
// A TUMBLE/HOP pane is a HashAggregate of its own, so the key hashing and
// the typed aggregate state are the hash aggregate's: per batch a typed
// loop over the time column finds each row's window(s), and each window's
// rows (a zero-copy slice when contiguous, as in-order input is) are folded
// into that pane's columnar state. A window is dropped whole when it fires,
// which is what bounds the state of a streaming GROUP BY.
type WindowAggregate struct {
	spec      WindowSpec
	timeCol   int
	groupCols []int
	aggs      []AggSpec
	out       *arrow.Schema
	pane      *arrow.Schema // group columns + aggregates: a pane's output
	mem       memory.Allocator
	err       error

	columnarOut bool
	damper      *exec.Damper

	wm    int64 // the watermark fired up to
	panes map[int64]*pane
	sess  *sessionState

	// scratch for one batch
	bp     []batchPane
	bpLast int

	late, nullTS, fires, firedPanes int64
	colEmits, heldBack              int64
}

type pane struct {
	start, end int64 // µs
	agg        *HashAggregate
}

// batchPane collects one batch's rows of one window.
type batchPane struct {
	start int64
	rows  []int32
	xrows []exec.Row
}

// NewWindowAggregate returns a windowed GROUP BY groupCols computing aggs
// over windows of spec on the TIMESTAMP column timeCol, into out.
func NewWindowAggregate(spec WindowSpec, timeCol int, groupCols []int, aggs []AggSpec, out *arrow.Schema, mem memory.Allocator) *WindowAggregate {
	w := &WindowAggregate{spec: spec, timeCol: timeCol, groupCols: groupCols, aggs: aggs, out: out, mem: mem,
		damper: exec.NewOutputDamper(), wm: exec.MinWatermark, panes: map[int64]*pane{}}
	k := len(groupCols) + len(aggs)
	switch {
	case out.NumFields() != k+3:
		w.err = fmt.Errorf("window aggregate: output has %d columns, want %d group columns + %d aggregates + 3 window columns",
			out.NumFields(), len(groupCols), len(aggs))
	case spec.Validate() != nil:
		w.err = fmt.Errorf("window aggregate: %w", spec.Validate())
	}
	if w.err != nil {
		return w
	}
	for i := k; i < k+3; i++ {
		if _, ok := out.Field(i).Type.(*arrow.TimestampType); !ok {
			w.err = fmt.Errorf("window aggregate: output column %q is %s, not TIMESTAMP", out.Field(i).Name, out.Field(i).Type)
			return w
		}
	}
	w.pane = arrow.NewSchema(out.Fields()[:k], nil)
	if spec.Kind == Session {
		w.sess = newSessionState()
	}
	// Configuration errors of the aggregates surface now, not at the
	// first window.
	probe := w.newPaneAgg()
	w.err = probe.err
	probe.Close()
	return w
}

func (w *WindowAggregate) newPaneAgg() *HashAggregate {
	return NewHashAggregate(w.groupCols, w.aggs, w.pane, w.mem)
}

// Kind implements exec.Operator.
func (w *WindowAggregate) Kind() string { return "window_aggregate" }

// Capabilities implements exec.Operator.
func (w *WindowAggregate) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (w *WindowAggregate) SetColumnarOutput(on bool) { w.columnarOut = on }

// Spec is the window, for EXPLAIN.
func (w *WindowAggregate) Spec() WindowSpec { return w.spec }

// OpenWindows is the number of windows (panes) holding state.
func (w *WindowAggregate) OpenWindows() int {
	if w.sess != nil {
		return w.sess.open()
	}
	return len(w.panes)
}

// Report implements exec.Reporter.
func (w *WindowAggregate) Report() exec.OperatorReport {
	st := w.damper.State()
	return exec.OperatorReport{ColumnarEmits: w.colEmits, HeldBackEmits: w.heldBack, Damper: &st,
		Counters: []exec.NamedCount{
			{Name: "late records dropped", Value: w.late},
			{Name: "null event times", Value: w.nullTS},
			{Name: "fires", Value: w.fires},
			{Name: "windows fired", Value: w.firedPanes},
		}}
}

func (w *WindowAggregate) timeScale(in *arrow.Schema) (int64, int64, error) {
	if w.err != nil {
		return 0, 0, w.err
	}
	if w.timeCol < 0 || w.timeCol >= in.NumFields() {
		return 0, 0, fmt.Errorf("window aggregate: time column %d out of range (input has %d columns)", w.timeCol, in.NumFields())
	}
	mul, div, err := tsScale(in.Field(w.timeCol).Type)
	if err != nil {
		return 0, 0, fmt.Errorf("window aggregate: column %q: %w", in.Field(w.timeCol).Name, err)
	}
	return mul, div, nil
}

// find returns the batch-local collection of window start (the last one
// hit first: in-order input stays in one window for long runs).
func (w *WindowAggregate) find(start int64) *batchPane {
	if w.bpLast < len(w.bp) && w.bp[w.bpLast].start == start {
		return &w.bp[w.bpLast]
	}
	for i := range w.bp {
		if w.bp[i].start == start {
			w.bpLast = i
			return &w.bp[i]
		}
	}
	w.bp = append(w.bp, batchPane{start: start})
	w.bpLast = len(w.bp) - 1
	return &w.bp[w.bpLast]
}

func (w *WindowAggregate) resetScratch() {
	for i := range w.bp {
		w.bp[i].rows = w.bp[i].rows[:0]
		w.bp[i].xrows = nil
	}
	w.bp = w.bp[:0]
	w.bpLast = 0
}

func (w *WindowAggregate) paneAt(start int64) *pane {
	p := w.panes[start]
	if p == nil {
		p = &pane{start: start, end: start + w.spec.Size.Microseconds(), agg: w.newPaneAgg()}
		w.panes[start] = p
	}
	return p
}

// ProcessColumnar assigns windows with a typed loop over the time column
// and folds each window's rows into its pane.
func (w *WindowAggregate) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	rec := b.Record()
	mul, div, err := w.timeScale(rec.Schema())
	if err != nil {
		return false, err
	}
	col, ok := rec.Column(w.timeCol).(*array.Timestamp)
	if !ok {
		return false, fmt.Errorf("window aggregate: time column is %s", rec.Column(w.timeCol).DataType())
	}
	if w.sess != nil {
		return true, w.sessionAdd(b, col, mul, div)
	}
	w.resetScratch()
	vals := col.TimestampValues()
	nulls := col.NullN() > 0
	size := w.spec.Size.Microseconds()
	for i, v := range vals {
		if nulls && col.IsNull(i) {
			w.nullTS++
			continue
		}
		ts := toMicros(int64(v), mul, div)
		if w.spec.Kind == Tumble {
			start := w.spec.lastStart(ts)
			if w.fired(start + size) {
				w.late++
				continue
			}
			bp := w.find(start)
			bp.rows = append(bp.rows, int32(i))
			continue
		}
		if w.fired(w.spec.lastStart(ts) + size) {
			w.late++ // every window of it fired: dropped, counted once
			continue
		}
		w.spec.windowsOf(ts, func(start int64) {
			if w.fired(start + size) {
				return // an earlier window of a record the later ones keep
			}
			bp := w.find(start)
			bp.rows = append(bp.rows, int32(i))
		})
	}
	n := int(rec.NumRows())
	for i := range w.bp {
		bp := &w.bp[i]
		p := w.paneAt(bp.start)
		var sub *exec.Batch
		switch first, last := bp.rows[0], bp.rows[len(bp.rows)-1]; {
		case len(bp.rows) == n:
			b.Retain()
			sub = b
		case int(last-first)+1 == len(bp.rows):
			sub = exec.NewColumnarBatch(rec.NewSlice(int64(first), int64(last)+1))
		default:
			g, err := gatherRecord(w.mem, rec.Schema(), recordColumns(rec), bp.rows)
			if err != nil {
				return true, fmt.Errorf("window aggregate: %w", err)
			}
			sub = exec.NewColumnarBatch(g)
		}
		_, err := p.agg.ProcessColumnar(ctx, 0, sub, nil)
		sub.Release()
		if err != nil {
			// State may be partly updated: the query fails, no replay.
			return true, fmt.Errorf("window aggregate %s: %w", w.spec, err)
		}
	}
	return true, nil
}

// Process is the row path.
func (w *WindowAggregate) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	mul, div, err := w.timeScale(b.Schema())
	if err != nil {
		return err
	}
	rows := b.Rows()
	if w.sess != nil {
		return w.sessionAddRows(b, rows, mul, div)
	}
	w.resetScratch()
	size := w.spec.Size.Microseconds()
	for i, r := range rows {
		if r[w.timeCol] == nil {
			w.nullTS++
			continue
		}
		v, ok := r[w.timeCol].(arrow.Timestamp)
		if !ok {
			return fmt.Errorf("window aggregate: row %d: time column holds %T", i, r[w.timeCol])
		}
		ts := toMicros(int64(v), mul, div)
		if w.fired(w.spec.lastStart(ts) + size) {
			w.late++ // every window of it fired: dropped, counted once
			continue
		}
		w.spec.windowsOf(ts, func(start int64) {
			if w.fired(start + size) {
				return
			}
			bp := w.find(start)
			bp.xrows = append(bp.xrows, r)
		})
	}
	for i := range w.bp {
		bp := &w.bp[i]
		sub := exec.NewRowBatch(b.Schema(), bp.xrows)
		err := w.paneAt(bp.start).agg.Process(ctx, 0, sub, nil)
		sub.Release()
		if err != nil {
			return fmt.Errorf("window aggregate %s: %w", w.spec, err)
		}
	}
	return nil
}

// fired reports whether the window ending at end (µs) has fired: as in
// Flink, a window fires once the watermark reaches its last millisecond
// (window_time, end - 1 ms), and a record of a fired window is late.
func (w *WindowAggregate) fired(end int64) bool { return windowTime(end) <= w.wm }

// OnWatermark fires every window the watermark passed, then forwards it:
// the fired rows reach the consumer before the watermark that closed them.
func (w *WindowAggregate) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if w.err != nil {
		return w.err
	}
	if wm <= w.wm {
		return nil
	}
	w.wm = wm
	if err := w.fire(ctx, wm, out); err != nil {
		return err
	}
	return out.EmitWatermark(ctx, wm)
}

// Finish fires everything still open: the input ended.
func (w *WindowAggregate) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	return w.OnWatermark(ctx, exec.MaxWatermark, out)
}

// Close releases the open windows.
func (w *WindowAggregate) Close() {
	for k, p := range w.panes {
		p.agg.Close()
		delete(w.panes, k)
	}
	if w.sess != nil {
		w.sess.release()
	}
}

// fire emits the windows whose last millisecond is at or before wm,
// ordered by end then start, as one emission.
func (w *WindowAggregate) fire(ctx context.Context, wm int64, out exec.Emitter) error {
	var parts []firePart
	useCol := false
	if w.columnarOut {
		useCol = w.damper.Try()
	}
	defer func() {
		for _, p := range parts {
			if p.rec != nil {
				p.rec.Release()
			}
		}
	}()
	if w.sess != nil {
		var err error
		if parts, err = w.sessionFire(ctx, wm, useCol); err != nil {
			return err
		}
	} else {
		var due []*pane
		for _, p := range w.panes {
			if windowTime(p.end) <= wm {
				due = append(due, p)
			}
		}
		sort.Slice(due, func(i, j int) bool {
			if due[i].end != due[j].end {
				return due[i].end < due[j].end
			}
			return due[i].start < due[j].start
		})
		for _, p := range due {
			delete(w.panes, p.start)
			got, err := finishPane(ctx, p.agg, useCol)
			p.agg.Close()
			if err != nil {
				return fmt.Errorf("window aggregate %s: %w", w.spec, err)
			}
			for i := range got {
				got[i].start, got[i].end = p.start, p.end
			}
			parts = append(parts, got...)
		}
		w.firedPanes += int64(len(due))
	}
	rows := 0
	for _, p := range parts {
		rows += p.len()
	}
	if rows == 0 {
		return nil
	}
	w.fires++
	if w.columnarOut {
		if useCol {
			w.colEmits++
			w.damper.Observe(rows)
		} else {
			w.heldBack++
		}
	}
	return emitFire(ctx, out, w.mem, w.out, parts, useCol)
}
