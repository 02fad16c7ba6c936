package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// WindowFuncs evaluates window functions (f(...) OVER (PARTITION BY ...
// ORDER BY ... frame)) that share one window over a bounded input. It
// buffers the input (records retained as they came, row batches as rows).
// When the input finishes it groups the rows by the PARTITION BY keys (the
// GROUP BY key index: NULLs are one partition, -0 equals 0), sorts each
// partition by the ORDER BY keys with the ORDER BY operator's comparators,
// computes each function as a column over the sorted rows (typed vectors;
// no per-value boxing on the columnar path) and emits every input column
// followed by one column per function: partition after partition, in
// order of their first row's arrival, each in ORDER BY order, ties in
// arrival order. The planner chains one operator per distinct window and
// runs one instance per hash partition of the PARTITION BY keys (or a
// single one without PARTITION BY): the operator is single-threaded.
type WindowFuncs struct {
	spec WindowFuncsSpec
	out  *arrow.Schema
	in   *arrow.Schema // the input columns: out's leading fields
	mem  memory.Allocator

	fns     []winFn
	err     error // configuration error, reported on first use
	checked bool

	columnarOut bool
	chunks      []winChunk
	rows        int
	columnar    bool // some input came columnar
	heldWM      int64
	done        bool
	partitions  int
}

// winChunk is one buffered input batch: a record (retained) or rows.
type winChunk struct {
	rec  arrow.RecordBatch
	rows []exec.Row
}

// NewWindowFuncs returns the window operator for spec producing out: the
// input's columns followed by one column per function.
func NewWindowFuncs(spec WindowFuncsSpec, out *arrow.Schema, mem memory.Allocator) *WindowFuncs {
	w := &WindowFuncs{spec: spec, out: out, mem: mem, heldWM: exec.MinWatermark}
	nIn := out.NumFields() - len(spec.Funcs)
	if nIn < 0 {
		w.err = fmt.Errorf("window: output has %d columns for %d functions", out.NumFields(), len(spec.Funcs))
		return w
	}
	md := out.Metadata()
	w.in = arrow.NewSchema(out.Fields()[:nIn], &md)
	for _, c := range spec.PartitionBy {
		if c < 0 || c >= nIn {
			w.err = fmt.Errorf("window: PARTITION BY column %d out of range (input has %d columns)", c, nIn)
			return w
		}
	}
	for _, k := range spec.OrderBy {
		if k.Col < 0 || k.Col >= nIn {
			w.err = fmt.Errorf("window: ORDER BY column %d out of range (input has %d columns)", k.Col, nIn)
			return w
		}
	}
	for i, f := range spec.Funcs {
		field := out.Field(nIn + i)
		fn, err := compileFunc(f, w.in, field, spec.OrderBy)
		if err != nil {
			w.err = fmt.Errorf("window %s (output column %q): %w", f, field.Name, err)
			return w
		}
		w.fns = append(w.fns, fn)
	}
	return w
}

// Kind implements exec.Operator.
func (w *WindowFuncs) Kind() string { return "window_funcs" }

// Capabilities implements exec.Operator: columnar input is buffered as
// records and sorted by index; the output is built born columnar when the
// planner turns that on.
func (w *WindowFuncs) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (w *WindowFuncs) SetColumnarOutput(on bool) { w.columnarOut = on }

// Spec is the window and its functions, for EXPLAIN.
func (w *WindowFuncs) Spec() WindowFuncsSpec { return w.spec }

// Report implements exec.Reporter: rows buffered and partitions seen.
func (w *WindowFuncs) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "rows", Value: int64(w.rows)},
		{Name: "partitions", Value: int64(w.partitions)},
	}}
}

// check compares the input schema with the configuration, once.
func (w *WindowFuncs) check(s *arrow.Schema) error {
	if w.err != nil || w.checked {
		return w.err
	}
	w.err = checkInputColumns("window", s, w.in.Fields())
	w.checked = true
	return w.err
}

// checkInputColumns checks an input schema against the output columns an
// operator passes it through to (a dictionary may stand for its values).
func checkInputColumns(op string, in *arrow.Schema, want []arrow.Field) error {
	if in.NumFields() != len(want) {
		return fmt.Errorf("%s: input has %d columns, the output schema expects %d", op, in.NumFields(), len(want))
	}
	for c, f := range want {
		if !exec.SameColumnType(in.Field(c).Type, f.Type) {
			return fmt.Errorf("%s: input column %q is %s, output column %q is %s",
				op, in.Field(c).Name, in.Field(c).Type, f.Name, f.Type)
		}
	}
	return nil
}

// Process is the row path: buffer the rows.
func (w *WindowFuncs) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if err := w.check(b.Schema()); err != nil {
		return err
	}
	if b.Len() == 0 {
		return nil
	}
	w.chunks = append(w.chunks, winChunk{rows: b.Rows()})
	w.rows += b.Len()
	return nil
}

// ProcessColumnar buffers the record (retained; dictionary-encoded
// columns decoded, since the output carries the declared types).
func (w *WindowFuncs) ProcessColumnar(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	if err := w.check(b.Schema()); err != nil {
		return false, err
	}
	if b.Len() == 0 {
		return true, nil
	}
	rec, err := plainRecord(w.mem, w.in, b.Record())
	if err != nil {
		return false, fmt.Errorf("window: %w", err)
	}
	w.chunks = append(w.chunks, winChunk{rec: rec})
	w.rows += b.Len()
	w.columnar = true
	return true, nil
}

// OnWatermark holds the watermark until the output has left (the input is
// bounded; everything leaves at Finish).
func (w *WindowFuncs) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	w.heldWM = max(w.heldWM, wm)
	return nil
}

// Finish sorts the buffered input, computes every function and emits.
func (w *WindowFuncs) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if w.done {
		return nil
	}
	w.done = true
	if w.err != nil {
		return w.err
	}
	if w.rows > 0 {
		if err := w.run(ctx, out); err != nil {
			return err
		}
	}
	if w.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, w.heldWM)
	}
	return nil
}

func (w *WindowFuncs) run(ctx context.Context, out exec.Emitter) error {
	src, err := w.sorted()
	if err != nil {
		return err
	}
	defer src.release()
	lay := newLayout(src, w.spec.OrderBy)
	w.partitions = len(lay.parts) - 1
	ev := &winEval{src: src, lay: lay, orderBy: w.spec.OrderBy, frames: map[string]*frameBounds{}}
	res := make([]*winResult, len(w.fns))
	for f := range w.fns {
		r, err := ev.eval(&w.fns[f])
		if err != nil {
			return fmt.Errorf("window %s: %w", w.fns[f].name(), err)
		}
		res[f] = r
	}
	if w.columnarOut {
		return w.emitColumnar(ctx, out, src, res)
	}
	return w.emitRows(ctx, out, src, res)
}

// sorted puts the buffered input in window order: as rows, compared with
// the row comparator, when all of it came as rows (the authoritative
// path); else as records (row chunks encoded in place, so arrival order,
// and with it the order of ties, is kept) concatenated, and an index
// sorted with the typed comparators.
func (w *WindowFuncs) sorted() (winSource, error) {
	defer w.releaseChunks()
	if !w.columnar {
		rows := make([]exec.Row, 0, w.rows)
		for _, c := range w.chunks {
			rows = append(rows, c.rows...)
		}
		src, err := newRowSource(w.in, rows, w.spec.PartitionBy, w.spec.OrderBy)
		if err != nil {
			return nil, fmt.Errorf("window: %w", err)
		}
		return src, nil
	}
	recs := make([]arrow.RecordBatch, 0, len(w.chunks))
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, c := range w.chunks {
		if c.rec != nil {
			c.rec.Retain()
			recs = append(recs, c.rec)
			continue
		}
		rec, err := exec.EncodeRows(w.mem, w.in, c.rows)
		if err != nil {
			return nil, fmt.Errorf("window: %w", err)
		}
		recs = append(recs, rec)
	}
	src, err := newRecSource(w.mem, w.in, recs, w.rows, w.spec.PartitionBy, w.spec.OrderBy)
	if err != nil {
		return nil, fmt.Errorf("window: %w", err)
	}
	return src, nil
}

// emitColumnar builds the output born columnar: the input columns gathered
// in sorted order, the function columns from their typed results, emitted
// in slices of at most emitChunk rows.
func (w *WindowFuncs) emitColumnar(ctx context.Context, out exec.Emitter, src winSource, res []*winResult) error {
	cols, err := src.inputColumns(w.mem)
	if err != nil {
		return fmt.Errorf("window: %w", err)
	}
	defer func() { releaseAll(cols) }()
	for f, r := range res {
		a, err := w.buildColumn(src, &w.fns[f], r)
		if err != nil {
			return fmt.Errorf("window %s: %w", w.fns[f].name(), err)
		}
		cols = append(cols, a)
	}
	rec := array.NewRecordBatch(w.out, cols, int64(src.len()))
	return emitRecordChunks(ctx, out, rec)
}

// buildColumn is one function's result as an Arrow array.
func (w *WindowFuncs) buildColumn(src winSource, fn *winFn, r *winResult) (arrow.Array, error) {
	if r.pick != nil {
		return src.pickColumn(w.mem, fn.arg, r.pick, pickDefaults{col: fn.defCol, value: fn.spec.Default})
	}
	switch {
	case r.ints != nil:
		b := array.NewInt64Builder(w.mem)
		defer b.Release()
		b.AppendValues(r.ints, r.valid)
		return b.NewArray(), nil
	case r.floats != nil:
		b := array.NewFloat64Builder(w.mem)
		defer b.Release()
		b.AppendValues(r.floats, r.valid)
		return b.NewArray(), nil
	case r.decs != nil:
		b := array.NewDecimal128Builder(w.mem, fn.typ.(*arrow.Decimal128Type))
		defer b.Release()
		b.AppendValues(r.decs, r.valid)
		return b.NewArray(), nil
	case r.bools != nil:
		b := array.NewBooleanBuilder(w.mem)
		defer b.Release()
		b.AppendValues(r.bools, r.valid)
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("no result")
}

// emitRows emits row batches of at most emitChunk rows, built one chunk
// at a time.
func (w *WindowFuncs) emitRows(ctx context.Context, out exec.Emitter, src winSource, res []*winResult) error {
	n, nIn, width := src.len(), w.in.NumFields(), w.out.NumFields()
	for start := 0; start < n; start += emitChunk {
		end := min(start+emitChunk, n)
		cells := make([]any, (end-start)*width)
		rows := make([]exec.Row, end-start)
		for k := start; k < end; k++ {
			r := exec.Row(cells[(k-start)*width : (k-start+1)*width : (k-start+1)*width])
			for c := 0; c < nIn; c++ {
				r[c] = src.value(c, k)
			}
			for f, o := range res {
				r[nIn+f] = rowValue(src, &w.fns[f], o, k)
			}
			rows[k-start] = r
		}
		if err := emitRows(ctx, out, w.out, rows); err != nil {
			return err
		}
	}
	return nil
}

// rowValue is a result's row-form value at sorted position k.
func rowValue(src winSource, fn *winFn, r *winResult, k int) any {
	if r.pick != nil {
		return pickValue(src, fn.arg, r.pick, pickDefaults{col: fn.defCol, value: fn.spec.Default}, k)
	}
	if r.valid != nil && !r.valid[k] {
		return nil
	}
	switch {
	case r.ints != nil:
		return r.ints[k]
	case r.floats != nil:
		return r.floats[k]
	case r.decs != nil:
		return r.decs[k]
	}
	return r.bools[k]
}

func (w *WindowFuncs) releaseChunks() {
	for _, c := range w.chunks {
		if c.rec != nil {
			c.rec.Release()
		}
	}
	w.chunks = nil
}

// Close releases the buffered input.
func (w *WindowFuncs) Close() { w.releaseChunks() }
