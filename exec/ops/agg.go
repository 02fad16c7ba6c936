package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// AggSpec is one aggregate call. Func is "count_star" (Col -1), "count",
// "sum", "avg", "min", "max", one of the variance family ("var_samp",
// "var_pop", "stddev_samp", "stddev_pop", and the aliases "variance" and
// "stddev") or "bool_and" (alias "every") / "bool_or" (agg_stats.go); Col
// is an input column index; Type is the output type the planner chose:
// COUNT BIGINT; SUM BIGINT over integers, DOUBLE over floats, DECIMAL(38,
// s) over DECIMAL(p, s); AVG DOUBLE over integers and floats (never a
// truncated BIGINT: AVG(1, 2) is 1.5) and DECIMAL(38, max(s, 6)) over
// DECIMAL(p, s); MIN / MAX the input's type; the variance family DOUBLE;
// bool_and / bool_or BOOLEAN.
// Text is the call as written (SUM(price)), for error messages; empty:
// String's sum($2) form.
type AggSpec struct {
	Func     string
	Distinct bool
	Col      int
	Type     arrow.DataType
	Text     string
}

func (s AggSpec) String() string {
	if s.Text != "" {
		return s.Text
	}
	d := ""
	if s.Distinct {
		d = "DISTINCT "
	}
	if s.Func == "count_star" {
		return "COUNT(*)"
	}
	return fmt.Sprintf("%s(%s$%d)", s.Func, d, s.Col)
}

func newAccumulator(s AggSpec) (accumulator, error) {
	var acc accumulator
	var err error
	switch s.Func {
	case "count_star", "count":
		if s.Type != nil && s.Type.ID() != arrow.INT64 {
			return nil, fmt.Errorf("COUNT gives BIGINT, not %s", s.Type)
		}
		if s.Func == "count_star" {
			return &countAcc{star: true}, nil
		}
		acc = &countAcc{}
	default:
		if s.Type == nil {
			return nil, fmt.Errorf("no output type")
		}
	}
	switch s.Func {
	case "count":
	case "sum", "avg":
		acc, err = newSumAcc(s.Func == "avg", s.Type, s.String())
	case "min", "max":
		acc, err = newMinMaxAcc(s.Func == "max", s.Type)
	default:
		if k, ok := statFuncs[s.Func]; ok {
			acc, err = newStatAcc(k, s.Type)
		} else if and, ok := boolFuncs[s.Func]; ok {
			acc, err = newBoolAcc(and, s.Type)
		} else {
			err = fmt.Errorf("unknown aggregate function %q", s.Func)
		}
	}
	if err != nil {
		return nil, err
	}
	if s.Distinct {
		acc = newDistinctAcc(acc)
	}
	return acc, nil
}

// HashAggregate is GROUP BY over a bounded input: it folds every batch into
// typed per-group state and emits the result when its input finishes.
// Output: the group columns in order, then the aggregates.
type HashAggregate struct {
	groupCols []int
	aggs      []AggSpec
	out       *arrow.Schema
	mem       memory.Allocator

	columnarOut bool
	err         error // configuration error, reported on first use
	bound       bool
	in          *arrow.Schema // the input schema bound to (a checkpoint keeps it)

	keys    *keyIndex // nil without group columns: every row is group 0
	keyBld  []array.Builder
	keyCols []arrow.Array // the current batch's key columns (scratch)
	onNew   func(row int)
	newRows []int32 // the current batch's rows that made new groups
	accs    []accumulator
	ids     []int32
	keyVals []any
	ngroups int
	heldWM  int64
	done    bool

	// Memory (agg_spill.go).
	resInit  bool
	res      *exec.Reservation
	canSpill bool
	partial  bool      // a two-phase GROUP BY's first phase: may emit early
	level    int       // 0; a partition's aggregate: its spill depth
	spill    *aggSpill // non-nil once the table is frozen
	spilled  spillStats
	rowsSeen int // row path: rows since the last account
}

// NewHashAggregate returns GROUP BY groupCols computing aggs into out.
func NewHashAggregate(groupCols []int, aggs []AggSpec, out *arrow.Schema, mem memory.Allocator) *HashAggregate {
	h := &HashAggregate{groupCols: groupCols, aggs: aggs, out: out, mem: mem, heldWM: exec.MinWatermark}
	if out.NumFields() != len(groupCols)+len(aggs) {
		h.err = fmt.Errorf("aggregate: output has %d columns, want %d group columns + %d aggregates",
			out.NumFields(), len(groupCols), len(aggs))
		return h
	}
	for i, s := range aggs {
		acc, err := newAccumulator(s)
		if err == nil && s.Type != nil && !arrow.TypeEqual(s.Type, out.Field(len(groupCols)+i).Type) {
			err = fmt.Errorf("type %s differs from output column type %s", s.Type, out.Field(len(groupCols)+i).Type)
		}
		if err != nil {
			h.err = fmt.Errorf("aggregate %s (output column %q): %w", s, out.Field(len(groupCols)+i).Name, err)
			return h
		}
		h.accs = append(h.accs, acc)
	}
	for i := range groupCols {
		h.keyBld = append(h.keyBld, array.NewBuilder(mem, out.Field(i).Type))
	}
	// New groups' rows are noted during the key lookup and their keys
	// appended per column after it (appendRowsFromArr).
	h.onNew = func(row int) { h.newRows = append(h.newRows, int32(row)) }
	return h
}

// Kind implements exec.Operator.
func (h *HashAggregate) Kind() string { return "hash_aggregate" }

// Capabilities implements exec.Operator.
func (h *HashAggregate) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (h *HashAggregate) SetColumnarOutput(on bool) { h.columnarOut = on }

// GroupCols are the input columns of the group key, and ValueCols those
// the aggregates read: the planner sends dictionary-encoded VARCHARs only
// to columns that are keys and nothing else.
func (h *HashAggregate) GroupCols() []int { return h.groupCols }

// CodeCols are the input columns that may arrive dictionary-encoded to
// their benefit, the group key's and MIN/MAX arguments (both look a
// dictionary entry up once instead of a string per row), and those other
// aggregates read, which would decode them (plain).
func (h *HashAggregate) CodeCols() (codes, plain []int) {
	codes = append([]int(nil), h.groupCols...)
	for _, s := range h.aggs {
		switch {
		case s.Func == "count_star":
		case (s.Func == "min" || s.Func == "max") && !s.Distinct:
			codes = append(codes, s.Col)
		default:
			plain = append(plain, s.Col)
		}
	}
	return codes, plain
}

// ValueCols: see GroupCols.
func (h *HashAggregate) ValueCols() []int {
	var cols []int
	for _, s := range h.aggs {
		if s.Func != "count_star" {
			cols = append(cols, s.Col)
		}
	}
	return cols
}

// Groups is the number of groups so far, for EXPLAIN ANALYZE.
func (h *HashAggregate) Groups() int { return h.ngroups }

// bind checks the input schema against the configuration, once.
func (h *HashAggregate) bind(in *arrow.Schema) error {
	if h.err != nil || h.bound {
		return h.err
	}
	h.bound, h.in = true, in
	types := make([]arrow.DataType, len(h.groupCols))
	for i, c := range h.groupCols {
		if c < 0 || c >= in.NumFields() {
			h.err = fmt.Errorf("aggregate: group column %d out of range (input has %d columns)", c, in.NumFields())
			return h.err
		}
		types[i] = in.Field(c).Type
		if !exec.SameColumnType(types[i], h.out.Field(i).Type) {
			h.err = fmt.Errorf("aggregate: group column %q is %s, output column %q is %s",
				in.Field(c).Name, types[i], h.out.Field(i).Name, h.out.Field(i).Type)
			return h.err
		}
	}
	if len(h.groupCols) > 0 {
		h.keys = newKeyIndex(chooseKeyKind(types), true)
	}
	for i, s := range h.aggs {
		if s.Func == "count_star" {
			continue
		}
		if s.Col < 0 || s.Col >= in.NumFields() {
			h.err = fmt.Errorf("aggregate %s: input column %d out of range (input has %d columns)", s, s.Col, in.NumFields())
			return h.err
		}
		if err := h.accs[i].bind(exec.PlainType(in.Field(s.Col).Type)); err != nil {
			h.err = fmt.Errorf("aggregate %s over column %q: %w", s, in.Field(s.Col).Name, err)
			return h.err
		}
	}
	return nil
}

func (h *HashAggregate) grow() {
	n := 1
	if len(h.groupCols) > 0 {
		n = 0
		if h.keys != nil {
			n = h.keys.len()
		}
	}
	if n > h.ngroups {
		h.ngroups = n
		for _, a := range h.accs {
			a.grow(n)
		}
	}
}

// Process is the row path.
func (h *HashAggregate) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if err := h.bind(b.Schema()); err != nil {
		return err
	}
	if h.keys == nil {
		h.grow()
	}
	for ri, r := range b.Rows() {
		if h.spill != nil {
			g, err := h.foldFound(r, ri)
			if err == nil && g < 0 {
				err = h.spillRow(r)
			}
			if err != nil {
				return err
			}
			continue
		}
		if _, _, err := h.foldRow(r, ri); err != nil {
			return err
		}
		// Account every so many rows, not per row.
		if h.rowsSeen++; h.rowsSeen >= 1024 {
			h.rowsSeen = 0
			if err := h.account(ctx, out); err != nil {
				return err
			}
		}
	}
	return h.account(ctx, out)
}

// foldRow folds one row into its group (created, or found) and returns the
// group; the row path of HashAggregate and of UpdatingAggregate.
func (h *HashAggregate) foldRow(r exec.Row, ri int) (g int32, created bool, err error) {
	if h.keys != nil {
		h.keyVals = h.keyVals[:0]
		for _, c := range h.groupCols {
			h.keyVals = append(h.keyVals, r[c])
		}
		id, isNew, err := h.keys.idRow(h.keyVals, true)
		if err != nil {
			return 0, false, fmt.Errorf("aggregate: row %d: %w", ri, err)
		}
		if isNew {
			for c, bld := range h.keyBld {
				if err := exec.AppendValue(bld, h.keyVals[c]); err != nil {
					return 0, false, fmt.Errorf("aggregate: group column %q: %w", h.out.Field(c).Name, err)
				}
			}
			h.grow()
		}
		g, created = id, isNew
	}
	for i, a := range h.accs {
		var v any
		if c := h.aggs[i].Col; h.aggs[i].Func != "count_star" {
			v = r[c]
		}
		if err := a.updateRow(v, g); err != nil {
			return 0, false, aggFailure(fmt.Sprintf("aggregate %s: row %d", h.aggs[i], ri), err)
		}
	}
	return g, created, nil
}

// ProcessColumnar hashes the key columns straight from the arrays into
// group ids and folds each aggregate's column into its typed state.
func (h *HashAggregate) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if err := h.bind(b.Schema()); err != nil {
		return false, err
	}
	rec := b.Record()
	n := int(rec.NumRows())
	if h.keys == nil {
		h.ids = growTo(h.ids[:0], n)
		clear(h.ids)
	} else {
		h.keyCols = h.keyCols[:0]
		for _, c := range h.groupCols {
			h.keyCols = append(h.keyCols, rec.Column(c))
		}
		h.newRows = h.newRows[:0]
		// A frozen table (spilling) only finds keys: -1 for the others.
		ids, err := h.keys.idsColumnar(h.keyCols, n, h.spill == nil, h.ids, h.onNew)
		if err != nil {
			return false, fmt.Errorf("aggregate: %w", err)
		}
		h.ids = ids
		for c, b := range h.keyBld {
			appendRowsFromArr(b, h.keyCols[c], h.newRows)
		}
	}
	h.grow()
	for i, a := range h.accs {
		if h.aggs[i].Func == "count_star" {
			// COUNT(*) reads no column (the record may have none).
			counts := a.(*countAcc).counts
			if h.keys == nil {
				counts[0] += int64(n) // one group: no store per row
				continue
			}
			for _, g := range h.ids {
				if g >= 0 {
					counts[g]++
				}
			}
			continue
		}
		col := rec.Column(h.aggs[i].Col)
		var err error
		if td, ok := a.(interface{ takesDictionary() bool }); ok && td.takesDictionary() {
			col.Retain()
		} else if col, err = exec.PlainArray(h.mem, col); err != nil {
			return true, fmt.Errorf("aggregate %s: %w", h.aggs[i], err)
		}
		err = a.updateColumnar(col, h.ids)
		col.Release()
		if err != nil {
			// State may be partly updated: the query fails, so no replay.
			return true, aggFailure("aggregate "+h.aggs[i].String(), err)
		}
	}
	if h.spill != nil {
		if err := h.spillColumnar(rec, h.ids); err != nil {
			return true, err
		}
	}
	return true, h.account(ctx, out)
}

// OnWatermark holds the watermark: the result leaves at Finish, and rows
// must not follow a watermark that has passed them.
func (h *HashAggregate) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	h.heldWM = max(h.heldWM, wm)
	return nil
}

// Finish emits the result: born columnar from the typed state when the
// planner turned columnar output on, as rows otherwise; then, if the
// aggregate spilled, each partition's groups (agg_spill.go).
func (h *HashAggregate) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if h.done {
		return nil
	}
	h.done = true
	if h.err != nil {
		return h.err
	}
	if err := h.emitGroups(ctx, out); err != nil {
		return err
	}
	if h.spill != nil {
		if err := h.finishSpilled(ctx, out); err != nil {
			return err
		}
	}
	if h.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, h.heldWM)
	}
	return nil
}

// emitGroups emits the groups in memory.
func (h *HashAggregate) emitGroups(ctx context.Context, out exec.Emitter) error {
	h.grow() // no GROUP BY: exactly one row, even over no input
	n := h.ngroups
	cols := make([]arrow.Array, 0, h.out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, b := range h.keyBld {
		cols = append(cols, b.NewArray())
	}
	if h.columnarOut {
		for i, a := range h.accs {
			arr, err := a.build(h.mem, n)
			if err != nil {
				return fmt.Errorf("aggregate %s: %w", h.aggs[i], err)
			}
			cols = append(cols, arr)
		}
		if n > 0 {
			rec := array.NewRecordBatch(h.out, cols, int64(n))
			if err := emitRecordChunks(ctx, out, rec); err != nil {
				return err
			}
		}
	} else if n > 0 {
		width := h.out.NumFields()
		cells := make([]any, n*width)
		rows := make([]exec.Row, n)
		for g := range rows {
			r := exec.Row(cells[g*width : (g+1)*width : (g+1)*width])
			for c := range h.keyBld {
				r[c] = exec.Value(cols[c], g)
			}
			for i, a := range h.accs {
				r[len(h.keyBld)+i] = a.value(g)
			}
			rows[g] = r
		}
		if err := emitRowChunks(ctx, out, h.out, rows); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the key builders, the reservation and any spill files.
func (h *HashAggregate) Close() {
	h.closeSpill()
	h.res.Release()
	for _, b := range h.keyBld {
		b.Release()
	}
	h.keyBld = nil
	h.keys.release()
	for _, a := range h.accs {
		if r, ok := a.(interface{ release() }); ok {
			r.release()
		}
	}
}

// appendRowsFromArr appends arr's values at rows to a builder of the same
// type: a typed loop for the common key types, instead of a type switch
// per value (a new group's key cost more than its hash table insert in a
// final aggregate, where most rows make a group).
func appendRowsFromArr(b array.Builder, arr arrow.Array, rows []int32) {
	if len(rows) == 0 {
		return
	}
	switch bb := b.(type) {
	case *array.Int64Builder:
		if a, ok := arr.(*array.Int64); ok {
			appendRowsTyped(bb, a.Int64Values(), arr, rows)
			return
		}
	case *array.Int32Builder:
		if a, ok := arr.(*array.Int32); ok {
			appendRowsTyped(bb, a.Int32Values(), arr, rows)
			return
		}
	case *array.Date32Builder:
		if a, ok := arr.(*array.Date32); ok {
			appendRowsTyped(bb, a.Date32Values(), arr, rows)
			return
		}
	case *array.TimestampBuilder:
		if a, ok := arr.(*array.Timestamp); ok {
			appendRowsTyped(bb, a.TimestampValues(), arr, rows)
			return
		}
	case *array.Float64Builder:
		if a, ok := arr.(*array.Float64); ok {
			appendRowsTyped(bb, a.Float64Values(), arr, rows)
			return
		}
	case *array.Decimal128Builder:
		if a, ok := arr.(*array.Decimal128); ok {
			appendRowsTyped(bb, a.Values(), arr, rows)
			return
		}
	case *array.StringBuilder:
		if a, ok := arr.(*array.String); ok {
			bb.Reserve(len(rows))
			nulls := a.NullN() > 0
			for _, r := range rows {
				if nulls && a.IsNull(int(r)) {
					bb.AppendNull()
				} else {
					bb.Append(a.Value(int(r)))
				}
			}
			return
		}
	}
	for _, r := range rows {
		appendFromArr(b, arr, int(r))
	}
}

// typedBuilder is the part of Arrow's fixed-width builders that
// appendRowsTyped uses.
type typedBuilder[T any] interface {
	Reserve(n int)
	UnsafeAppend(v T)
	UnsafeAppendBoolToBitmap(valid bool)
}

func appendRowsTyped[T any](b typedBuilder[T], vals []T, arr arrow.Array, rows []int32) {
	b.Reserve(len(rows))
	if arr.NullN() == 0 {
		for _, r := range rows {
			b.UnsafeAppend(vals[r])
		}
		return
	}
	for _, r := range rows {
		if arr.IsNull(int(r)) {
			b.UnsafeAppendBoolToBitmap(false)
		} else {
			b.UnsafeAppend(vals[r])
		}
	}
}

// appendFromArr appends arr[i] to a builder of the same type, without
// boxing for the common key types.
func appendFromArr(b array.Builder, arr arrow.Array, i int) {
	if arr.IsNull(i) {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *array.Int64Builder:
		if a, ok := arr.(*array.Int64); ok {
			bb.Append(a.Value(i))
			return
		}
	case *array.StringBuilder:
		switch a := arr.(type) {
		case *array.String:
			bb.Append(a.Value(i))
			return
		case *array.Dictionary:
			if vals, ok := a.Dictionary().(*array.String); ok && !vals.IsNull(a.GetValueIndex(i)) {
				bb.Append(vals.Value(a.GetValueIndex(i)))
				return
			}
		}
	case *array.Int32Builder:
		if a, ok := arr.(*array.Int32); ok {
			bb.Append(a.Value(i))
			return
		}
	}
	// Types were checked against the output schema at bind.
	_ = exec.AppendValue(b, exec.Value(arr, i))
}
