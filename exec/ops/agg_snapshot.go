package ops

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The state of a HashAggregate as Arrow, shared by every operator built
// on one (the updating aggregate, the window panes, the aggregate
// itself): one row per group, in group id order, with the key columns (as
// the output declares them) and then each aggregate's state columns,
// named "a<i>.<part>". The accumulators' internal form goes out in typed
// columns (a BIGINT sum and its count, MIN/MAX's value with NULL for
// "nothing seen", the variance family's Welford moments), never encoded.
// A DISTINCT aggregate's seen set is a second table, (agg, seen): the
// key encoding of each (group, value) pair, sorted so the same state
// writes the same bytes. Restoring binds the aggregate to the input
// schema it had, re-inserts the keys in id order (so they get the same
// ids), and loads the columns back into the accumulators.

// accState is an accumulator's state as columns, one value per group.
type accState interface {
	// stateFields are the state columns (after bind).
	stateFields(prefix string) []arrow.Field
	// saveState builds them for groups 0..n-1.
	saveState(mem memory.Allocator, n int) []arrow.Array
	// loadState reads them back into groups first..first+len-1, which
	// were grown already.
	loadState(first int, cols []arrow.Array) error
}

var distinctSchema = arrow.NewSchema([]arrow.Field{
	{Name: "agg", Type: arrow.PrimitiveTypes.Int32},
	{Name: "seen", Type: arrow.BinaryTypes.Binary},
}, nil)

// stateSchema is the groups table of a bound aggregate, and the
// accumulators that hold its state.
func (h *HashAggregate) stateSchema() (*arrow.Schema, []accState, error) {
	fs := append([]arrow.Field{}, h.out.Fields()[:len(h.groupCols)]...)
	for i := range fs {
		fs[i].Nullable = true
		fs[i].Metadata = arrow.Metadata{}
	}
	sts := make([]accState, len(h.accs))
	for i, a := range h.accs {
		// DISTINCT's inner accumulator holds the per-group state; its
		// seen set is the second table.
		if d, ok := a.(*distinctAcc); ok {
			a = d.inner
		}
		st, ok := a.(accState)
		if !ok {
			return nil, nil, fmt.Errorf("aggregate %s cannot be checkpointed yet", h.aggs[i])
		}
		sts[i] = st
		fs = append(fs, st.stateFields(fmt.Sprintf("a%d.", i))...)
	}
	return arrow.NewSchema(fs, nil), sts, nil
}

// saveState builds the groups table and the DISTINCT table (nil when no
// aggregate is DISTINCT) without changing the aggregate. The caller
// releases both.
func (h *HashAggregate) saveState(mem memory.Allocator) (groups, distinct arrow.RecordBatch, err error) {
	schema, sts, err := h.stateSchema()
	if err != nil {
		return nil, nil, err
	}
	n := h.ngroups
	cols := make([]arrow.Array, 0, len(h.groupCols)+2*len(h.accs))
	defer func() { releaseAll(cols) }()
	for _, b := range h.keyBld {
		// A builder cannot be read in place: take its array and append
		// it back, which leaves the builder as it was. The copy that goes
		// out is built afresh, so its buffers do not depend on the
		// builder's growth history (two snapshots write the same bytes).
		arr := b.NewArray()
		rows := allRows(arr.Len())
		appendRowsFromArr(b, arr, rows)
		fresh := array.NewBuilder(mem, arr.DataType())
		appendRowsFromArr(fresh, arr, rows)
		arr.Release()
		cols = append(cols, fresh.NewArray())
		fresh.Release()
	}
	for _, st := range sts {
		cols = append(cols, st.saveState(mem, n)...)
	}
	if groups, err = withColumns(schema, cols, int64(n)); err != nil {
		return nil, nil, fmt.Errorf("aggregate state: %w", err)
	}
	var aggIdx []int32
	var seen [][]byte
	for i, a := range h.accs {
		d, ok := a.(*distinctAcc)
		if !ok {
			continue
		}
		start := len(seen)
		for k := range d.seen {
			seen = append(seen, []byte(k))
		}
		slices.SortFunc(seen[start:], bytes.Compare)
		for range len(seen) - start {
			aggIdx = append(aggIdx, int32(i))
		}
	}
	if h.hasDistinct() {
		ab := array.NewInt32Builder(mem)
		ab.AppendValues(aggIdx, nil)
		sb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		sb.AppendValues(seen, nil)
		ac, sc := ab.NewArray(), sb.NewArray()
		ab.Release()
		sb.Release()
		distinct = array.NewRecordBatch(distinctSchema, []arrow.Array{ac, sc}, int64(len(aggIdx)))
		ac.Release()
		sc.Release()
	}
	return groups, distinct, nil
}

func (h *HashAggregate) hasDistinct() bool {
	for _, a := range h.accs {
		if _, ok := a.(*distinctAcc); ok {
			return true
		}
	}
	return false
}

func allRows(n int) []int32 {
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	return rows
}

// restoreState binds a fresh aggregate to the input schema in and loads
// the groups (a slice of the groups table, any number of batches) and the
// DISTINCT rows (the seen column of those rows whose agg column names
// each aggregate; nil when none).
func (h *HashAggregate) restoreState(in *arrow.Schema, groups []arrow.RecordBatch, distinct []arrow.RecordBatch) error {
	if h.bound {
		return fmt.Errorf("aggregate state: restored into an aggregate that has already run")
	}
	if err := h.bind(in); err != nil {
		return err
	}
	want, sts, err := h.stateSchema()
	if err != nil {
		return err
	}
	for _, g := range groups {
		if !g.Schema().Equal(want) {
			return fmt.Errorf("aggregate state: groups have columns %s, this aggregate keeps %s (a snapshot of another plan?)",
				schemaText(g.Schema()), schemaText(want))
		}
		if err := h.loadGroups(g, sts); err != nil {
			return err
		}
	}
	for _, d := range distinct {
		if !d.Schema().Equal(distinctSchema) {
			return fmt.Errorf("aggregate state: DISTINCT table has columns %s", schemaText(d.Schema()))
		}
		aggs := d.Column(0).(*array.Int32)
		seen := d.Column(1).(*array.Binary)
		for r := 0; r < int(d.NumRows()); r++ {
			i := int(aggs.Value(r))
			if i < 0 || i >= len(h.accs) {
				return fmt.Errorf("aggregate state: DISTINCT row names aggregate %d of %d", i, len(h.accs))
			}
			da, ok := h.accs[i].(*distinctAcc)
			if !ok {
				return fmt.Errorf("aggregate state: aggregate %s is not DISTINCT, the snapshot's was", h.aggs[i])
			}
			da.seen[string(seen.Value(r))] = struct{}{}
		}
	}
	return nil
}

// loadGroups appends one batch of groups: their keys get the next ids.
func (h *HashAggregate) loadGroups(g arrow.RecordBatch, sts []accState) error {
	n := int(g.NumRows())
	if n == 0 {
		return nil
	}
	first := h.ngroups
	k := len(h.groupCols)
	if h.keys == nil {
		if first+n > 1 {
			return fmt.Errorf("aggregate state: %d groups for an aggregate without GROUP BY", first+n)
		}
		h.grow()
	} else {
		keyCols := recordColumns(g)[:k]
		ids, err := h.keys.idsColumnar(keyCols, n, true, nil, nil)
		if err != nil {
			return fmt.Errorf("aggregate state: %w", err)
		}
		for i, id := range ids {
			if int(id) != first+i {
				return fmt.Errorf("aggregate state: group %d's key is there twice", first+i)
			}
		}
		for c, b := range h.keyBld {
			appendRowsFromArr(b, keyCols[c], allRows(n))
		}
		h.grow()
	}
	col := k
	for i, st := range sts {
		m := len(st.stateFields(""))
		if err := st.loadState(first, recordColumns(g)[col:col+m]); err != nil {
			return fmt.Errorf("aggregate state %s: %w", h.aggs[i], err)
		}
		col += m
	}
	return nil
}

// ---- the accumulators ----

func (c *countAcc) stateFields(p string) []arrow.Field {
	return []arrow.Field{{Name: p + "count", Type: arrow.PrimitiveTypes.Int64}}
}

func (c *countAcc) saveState(mem memory.Allocator, n int) []arrow.Array {
	return []arrow.Array{int64Column(mem, c.counts[:n])}
}

func (c *countAcc) loadState(first int, cols []arrow.Array) error {
	v, err := int64sOf(cols[0], "count")
	if err != nil {
		return err
	}
	copy(c.counts[first:], v)
	return nil
}

func (s *sumAcc) stateFields(p string) []arrow.Field {
	fs := []arrow.Field{{Name: p + "count", Type: arrow.PrimitiveTypes.Int64}}
	switch s.dom {
	case domInt:
		fs = append(fs, arrow.Field{Name: p + "sum", Type: arrow.PrimitiveTypes.Int64})
	case domAvgInt:
		fs = append(fs, arrow.Field{Name: p + "sum_lo", Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: p + "sum_hi", Type: arrow.PrimitiveTypes.Int64})
	case domFloat:
		fs = append(fs, arrow.Field{Name: p + "sum", Type: arrow.PrimitiveTypes.Float64})
	default:
		fs = append(fs, arrow.Field{Name: p + "sum", Type: &arrow.Decimal128Type{Precision: 38, Scale: s.inDec}})
	}
	return fs
}

func (s *sumAcc) saveState(mem memory.Allocator, n int) []arrow.Array {
	cols := []arrow.Array{int64Column(mem, s.counts[:n])}
	switch s.dom {
	case domInt:
		cols = append(cols, int64Column(mem, s.ints[:n]))
	case domAvgInt:
		cols = append(cols, int64Column(mem, s.ints[:n]), int64Column(mem, s.his[:n]))
	case domFloat:
		b := array.NewFloat64Builder(mem)
		b.AppendValues(s.floats[:n], nil)
		cols = append(cols, b.NewArray())
		b.Release()
	default:
		b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: s.inDec})
		b.AppendValues(s.decs[:n], nil)
		cols = append(cols, b.NewArray())
		b.Release()
	}
	return cols
}

func (s *sumAcc) loadState(first int, cols []arrow.Array) error {
	counts, err := int64sOf(cols[0], "count")
	if err != nil {
		return err
	}
	copy(s.counts[first:], counts)
	switch s.dom {
	case domInt, domAvgInt:
		lo, err := int64sOf(cols[1], "sum")
		if err != nil {
			return err
		}
		copy(s.ints[first:], lo)
		if s.dom == domAvgInt {
			hi, err := int64sOf(cols[2], "sum_hi")
			if err != nil {
				return err
			}
			copy(s.his[first:], hi)
		}
	case domFloat:
		copy(s.floats[first:], cols[1].(*array.Float64).Float64Values())
	default:
		copy(s.decs[first:], cols[1].(*array.Decimal128).Values())
	}
	return nil
}

// minMaxStateType is the column MIN/MAX's state goes out in: its
// internal category (booleans, dates and times as BIGINT).
func (m *minMaxAcc) minMaxStateType() arrow.DataType {
	switch m.cat {
	case mmInt:
		return arrow.PrimitiveTypes.Int64
	case mmFloat:
		return arrow.PrimitiveTypes.Float64
	case mmString:
		return arrow.BinaryTypes.String
	}
	return m.typ
}

func (m *minMaxAcc) stateFields(p string) []arrow.Field {
	return []arrow.Field{{Name: p + "value", Type: m.minMaxStateType(), Nullable: true}}
}

func (m *minMaxAcc) saveState(mem memory.Allocator, n int) []arrow.Array {
	set := m.set[:n]
	switch m.cat {
	case mmInt:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(m.ints[:n], set)
		return []arrow.Array{b.NewArray()}
	case mmFloat:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(m.floats[:n], set)
		return []arrow.Array{b.NewArray()}
	case mmString:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(m.strs[:n], set)
		return []arrow.Array{b.NewArray()}
	}
	b := array.NewDecimal128Builder(mem, m.typ.(*arrow.Decimal128Type))
	defer b.Release()
	b.AppendValues(m.decs[:n], set)
	return []arrow.Array{b.NewArray()}
}

func (m *minMaxAcc) loadState(first int, cols []arrow.Array) error {
	a := cols[0]
	for i := 0; i < a.Len(); i++ {
		g := first + i
		if a.IsNull(i) {
			continue
		}
		m.set[g] = true
		switch x := a.(type) {
		case *array.Int64:
			m.ints[g] = x.Value(i)
		case *array.Float64:
			m.floats[g] = x.Value(i)
		case *array.String:
			m.strs[g] = strings.Clone(x.Value(i)) // Value aliases the batch
		case *array.Decimal128:
			m.decs[g] = x.Value(i)
		default:
			return fmt.Errorf("MIN/MAX state column is %s", a.DataType())
		}
	}
	return nil
}

func (s *statAcc) stateFields(p string) []arrow.Field {
	return []arrow.Field{
		{Name: p + "n", Type: arrow.PrimitiveTypes.Float64},
		{Name: p + "mean", Type: arrow.PrimitiveTypes.Float64},
		{Name: p + "m2", Type: arrow.PrimitiveTypes.Float64},
	}
}

func (s *statAcc) saveState(mem memory.Allocator, n int) []arrow.Array {
	cols := make([]arrow.Array, 3)
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	for f := range cols {
		b.Reserve(n)
		for _, m := range s.m[:n] {
			b.UnsafeAppend([3]float64{m.n, m.mean, m.m2}[f])
		}
		cols[f] = b.NewArray()
	}
	return cols
}

func (s *statAcc) loadState(first int, cols []arrow.Array) error {
	n, mean, m2 := cols[0].(*array.Float64), cols[1].(*array.Float64), cols[2].(*array.Float64)
	for i := 0; i < n.Len(); i++ {
		s.m[first+i] = moments{n: n.Value(i), mean: mean.Value(i), m2: m2.Value(i)}
	}
	return nil
}

func (b *boolAcc) stateFields(p string) []arrow.Field {
	return []arrow.Field{{Name: p + "value", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}}
}

func (b *boolAcc) saveState(mem memory.Allocator, n int) []arrow.Array {
	bb := array.NewBooleanBuilder(mem)
	defer bb.Release()
	bb.AppendValues(b.vals[:n], b.set[:n])
	return []arrow.Array{bb.NewArray()}
}

func (b *boolAcc) loadState(first int, cols []arrow.Array) error {
	a := cols[0].(*array.Boolean)
	for i := 0; i < a.Len(); i++ {
		if a.IsValid(i) {
			b.set[first+i], b.vals[first+i] = true, a.Value(i)
		}
	}
	return nil
}

// Compile-time checks: every accumulator kind can be checkpointed.
var (
	_ accState = (*countAcc)(nil)
	_ accState = (*sumAcc)(nil)
	_ accState = (*minMaxAcc)(nil)
	_ accState = (*statAcc)(nil)
	_ accState = (*boolAcc)(nil)
)

// ---- the parts an aggregate writes ----

// writeAggParts writes a bound aggregate's input schema (a part without
// batches), groups and DISTINCT tables under prefix; nothing before the
// first batch bound it.
func (h *HashAggregate) writeAggParts(w exec.StateWriter, prefix string) error {
	if !h.bound || h.err != nil {
		return h.err
	}
	if err := w.Records(prefix+"input", plainSchema(h.in)); err != nil {
		return err
	}
	groups, distinct, err := h.saveState(h.mem)
	if err != nil {
		return err
	}
	defer groups.Release()
	if err := w.Records(prefix+"groups", groups.Schema(), groups); err != nil {
		return err
	}
	if distinct == nil {
		return nil
	}
	defer distinct.Release()
	return w.Records(prefix+"distinct", distinctSchema, distinct)
}

// aggParts is what writeAggParts wrote; ok is false when the aggregate
// had not run. Release releases the batches.
type aggParts struct {
	in               *arrow.Schema
	groups, distinct []arrow.RecordBatch
}

func (p *aggParts) release() {
	releaseRecs(p.groups)
	releaseRecs(p.distinct)
}

func readAggParts(r exec.StateReader, kind, prefix string) (p aggParts, ok bool, err error) {
	in, _, ok, err := readPart(r, kind, prefix+"input", nil)
	if err != nil || !ok {
		return p, false, err
	}
	p.in = in
	if _, p.groups, ok, err = readPart(r, kind, prefix+"groups", nil); err != nil {
		return p, false, err
	} else if !ok {
		return p, false, fmt.Errorf("%s state: part %q missing", kind, prefix+"groups")
	}
	if _, p.distinct, _, err = readPart(r, kind, prefix+"distinct", distinctSchema); err != nil {
		p.release()
		return p, false, err
	}
	return p, true, nil
}

// hashAggStateVersion is the layout of HashAggregate's state.
const hashAggStateVersion = 1

// SnapshotState implements exec.Snapshotter: the groups and the held
// watermark (the result leaves at Finish).
func (h *HashAggregate) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, h.Kind(), hashAggStateVersion); err != nil {
		return err
	}
	if err := writeInts(w, "clock", h.heldWM, b2i64(h.done)); err != nil {
		return err
	}
	return h.writeAggParts(w, "")
}

// RestoreState implements exec.Snapshotter.
func (h *HashAggregate) RestoreState(_ context.Context, r exec.StateReader) error {
	kind := h.Kind()
	if err := checkHeader(r, kind, hashAggStateVersion); err != nil {
		return err
	}
	clock, err := readInts(r, kind, "clock", 2)
	if err != nil {
		return err
	}
	h.heldWM, h.done = clock[0], clock[1] != 0
	p, ok, err := readAggParts(r, kind, "")
	if err != nil || !ok {
		return err
	}
	defer p.release()
	if err := h.restoreState(p.in, p.groups, p.distinct); err != nil {
		return fmt.Errorf("%s %w", kind, err)
	}
	return nil
}
