package ops

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// ---- the row source (row input: the authoritative path) ----

// rowSource is row input in window order.
type rowSource struct {
	schema *arrow.Schema
	rows   []exec.Row
	parts  []int32
	cols   map[int]*winCol
}

func newRowSource(schema *arrow.Schema, rows []exec.Row, partBy []int, order []SortKey) (*rowSource, error) {
	var ids []int32
	nparts := 1
	if len(partBy) > 0 {
		keys := newKeyIndex(chooseKeyKind(columnTypes(schema, partBy)), true)
		defer keys.release()
		vals := make([]any, len(partBy))
		ids = make([]int32, len(rows))
		for i, r := range rows {
			for j, c := range partBy {
				vals[j] = r[c]
			}
			id, _, err := keys.idRow(vals, true)
			if err != nil {
				return nil, fmt.Errorf("PARTITION BY: %w", err)
			}
			ids[i] = id
		}
		nparts = keys.len()
	}
	var cmp func(a, b int32) int
	if len(order) > 0 {
		rc := rowComparator(order)
		cmp = func(a, b int32) int { return rc(rows[a], rows[b]) }
	}
	idx, parts := windowOrder(len(rows), ids, nparts, cmp)
	sorted := make([]exec.Row, len(rows))
	for k, i := range idx {
		sorted[k] = rows[i]
	}
	return &rowSource{schema: schema, rows: sorted, parts: parts, cols: map[int]*winCol{}}, nil
}

func columnTypes(schema *arrow.Schema, cols []int) []arrow.DataType {
	types := make([]arrow.DataType, len(cols))
	for i, c := range cols {
		types[i] = schema.Field(c).Type
	}
	return types
}

// windowOrder orders rows 0..n-1 for the window: by partition (ids, nil
// for one partition; partitions in order of first arrival, as the GROUP BY
// key index numbers them), then within each by cmp (nil: none), ties in
// arrival order. It returns the order and where each partition starts
// (then n). Grouping first makes the sort n·log(n/partitions) comparisons
// of the ORDER BY keys alone, instead of n·log(n) of both.
func windowOrder(n int, ids []int32, nparts int, cmp func(a, b int32) int) (idx, parts []int32) {
	idx = make([]int32, n)
	if n == 0 {
		return idx, []int32{0}
	}
	parts = make([]int32, nparts+1)
	if ids == nil {
		for i := range idx {
			idx[i] = int32(i)
		}
		parts[1] = int32(n)
	} else {
		for _, id := range ids {
			parts[id+1]++
		}
		for p := 1; p <= nparts; p++ {
			parts[p] += parts[p-1]
		}
		fill := slices.Clone(parts[:nparts])
		for i, id := range ids {
			idx[fill[id]] = int32(i)
			fill[id]++
		}
	}
	if cmp == nil {
		return idx, parts
	}
	// pdqsort with ties broken by position gives a stable sort's order.
	byKey := func(a, b int32) int {
		if c := cmp(a, b); c != 0 {
			return c
		}
		return int(a - b)
	}
	for p := 0; p+1 < len(parts); p++ {
		slices.SortFunc(idx[parts[p]:parts[p+1]], byKey)
	}
	return idx, parts
}

func (s *rowSource) len() int            { return len(s.rows) }
func (s *rowSource) partitions() []int32 { return s.parts }
func (s *rowSource) release()            {}

func (s *rowSource) comparator(keys []SortKey) func(a, b int) int {
	if len(keys) == 0 {
		return nil
	}
	c := rowComparator(keys)
	return func(a, b int) int { return c(s.rows[a], s.rows[b]) }
}

func (s *rowSource) extract(c int) (*winCol, error) {
	if wc := s.cols[c]; wc != nil {
		return wc, nil
	}
	n := len(s.rows)
	wc := newWinCol(s.schema.Field(c).Type, n)
	wc.valid = make([]bool, n)
	nulls := false
	for k, r := range s.rows {
		v := r[c]
		if v == nil {
			nulls = true
			continue
		}
		wc.valid[k] = true
		if err := wc.setRow(k, v); err != nil {
			return nil, fmt.Errorf("column %q: %w", s.schema.Field(c).Name, err)
		}
	}
	if !nulls {
		wc.valid = nil
	}
	s.cols[c] = wc
	return wc, nil
}

// setRow stores the row-form value v at k.
func (c *winCol) setRow(k int, v any) error {
	switch x := v.(type) {
	case int64, int32, arrow.Date32, arrow.Timestamp, arrow.Time64, bool:
		if c.ints != nil {
			c.ints[k] = rowInt(x)
			return nil
		}
	case float64:
		if c.floats != nil {
			c.floats[k] = x
			return nil
		}
	case float32:
		if c.floats != nil {
			c.floats[k] = float64(x)
			return nil
		}
	case decimal128.Num:
		if c.decs != nil {
			c.decs[k] = x
			return nil
		}
	case string:
		if c.strs != nil {
			c.strs[k] = x
			return nil
		}
	case []byte:
		if c.strs != nil {
			c.strs[k] = string(x)
			return nil
		}
	}
	if catOf(c.typ) == catNone {
		return nil // validity is all anyone reads of such a column
	}
	return fmt.Errorf("value %v (%T) in a %s column", v, v, c.typ)
}

// rowInt is the int64 form of an integer-like row value.
func rowInt(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case arrow.Date32:
		return int64(x)
	case arrow.Timestamp:
		return int64(x)
	case arrow.Time64:
		return int64(x)
	case bool:
		return b2i(x)
	}
	return v.(int64)
}

func (s *rowSource) value(c, k int) any { return s.rows[k][c] }

func (s *rowSource) inputColumns(mem memory.Allocator) ([]arrow.Array, error) {
	cols := make([]arrow.Array, s.schema.NumFields())
	for c := range cols {
		b := array.NewBuilder(mem, s.schema.Field(c).Type)
		b.Reserve(len(s.rows))
		for _, r := range s.rows {
			if err := exec.AppendValue(b, r[c]); err != nil {
				b.Release()
				releaseAll(cols[:c])
				return nil, fmt.Errorf("column %q: %w", s.schema.Field(c).Name, err)
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	return cols, nil
}

func (s *rowSource) pickColumn(mem memory.Allocator, c int, pick []int32, def pickDefaults) (arrow.Array, error) {
	b := array.NewBuilder(mem, s.schema.Field(c).Type)
	defer b.Release()
	b.Reserve(len(pick))
	for k := range pick {
		if err := exec.AppendValue(b, pickValue(s, c, pick, def, k)); err != nil {
			return nil, fmt.Errorf("column %q: %w", s.schema.Field(c).Name, err)
		}
	}
	return b.NewArray(), nil
}

// pickValue is a picked value's row form at output position k.
func pickValue(s winSource, c int, pick []int32, def pickDefaults, k int) any {
	switch p := pick[k]; p {
	case pickNull:
		return nil
	case pickDefault:
		if def.col >= 0 {
			return s.value(def.col, k)
		}
		return def.value
	default:
		return s.value(c, int(p))
	}
}

// ---- the record source (columnar input) ----

// recSource is columnar input: the buffered records concatenated column
// by column, and the window order as an index into them.
type recSource struct {
	schema *arrow.Schema
	cols   []arrow.Array // owned
	idx    []int32
	parts  []int32
	wcols  map[int]*winCol
}

func newRecSource(mem memory.Allocator, schema *arrow.Schema, recs []arrow.RecordBatch, n int, partBy []int, order []SortKey) (*recSource, error) {
	cols, err := concatColumns(mem, schema, recs)
	if err != nil {
		return nil, err
	}
	var ids []int32
	nparts := 1
	if len(partBy) > 0 && n > 0 {
		keys := newKeyIndex(chooseKeyKind(columnTypes(schema, partBy)), true)
		defer keys.release()
		kc := make([]arrow.Array, len(partBy))
		for j, c := range partBy {
			kc[j] = cols[c]
		}
		if ids, err = keys.idsColumnar(kc, n, true, nil, nil); err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("PARTITION BY: %w", err)
		}
		nparts = keys.len()
	}
	var cmp func(a, b int32) int
	if len(order) > 0 {
		cmp = recordComparator(cols, order)
	}
	idx, parts := windowOrder(n, ids, nparts, cmp)
	return &recSource{schema: schema, cols: cols, idx: idx, parts: parts, wcols: map[int]*winCol{}}, nil
}

func (s *recSource) len() int            { return len(s.idx) }
func (s *recSource) partitions() []int32 { return s.parts }

func (s *recSource) release() {
	releaseAll(s.cols)
	s.cols = nil
}

func (s *recSource) comparator(keys []SortKey) func(a, b int) int {
	if len(keys) == 0 {
		return nil
	}
	c := recordComparator(s.cols, keys)
	idx := s.idx
	return func(a, b int) int { return c(idx[a], idx[b]) }
}

func (s *recSource) extract(c int) (*winCol, error) {
	if wc := s.wcols[c]; wc != nil {
		return wc, nil
	}
	arr, idx := s.cols[c], s.idx
	wc := newWinCol(arr.DataType(), len(idx))
	if arr.NullN() > 0 {
		wc.valid = make([]bool, len(idx))
		for k, i := range idx {
			wc.valid[k] = arr.IsValid(int(i))
		}
	}
	d := arr.Data()
	switch a := arr.(type) {
	case *array.Int64:
		gatherNum(wc.ints, a.Int64Values(), idx)
	case *array.Int32:
		gatherNum(wc.ints, a.Int32Values(), idx)
	case *array.Int16:
		gatherNum(wc.ints, a.Int16Values(), idx)
	case *array.Int8:
		gatherNum(wc.ints, a.Int8Values(), idx)
	case *array.Date32:
		gatherNum(wc.ints, arrow.GetValues[int32](d, 1), idx)
	case *array.Timestamp:
		gatherNum(wc.ints, arrow.GetValues[int64](d, 1), idx)
	case *array.Time64:
		gatherNum(wc.ints, arrow.GetValues[int64](d, 1), idx)
	case *array.Time32:
		gatherNum(wc.ints, arrow.GetValues[int32](d, 1), idx)
	case *array.Boolean:
		for k, i := range idx {
			wc.ints[k] = b2i(a.Value(int(i)))
		}
	case *array.Float64:
		gatherNum(wc.floats, a.Float64Values(), idx)
	case *array.Float32:
		gatherNum(wc.floats, a.Float32Values(), idx)
	case *array.Decimal128:
		src := arrow.GetValues[decimal128.Num](d, 1)
		for k, i := range idx {
			wc.decs[k] = src[i]
		}
	case *array.String:
		// Aliases the concatenated column, which outlives the kernels.
		for k, i := range idx {
			wc.strs[k] = a.Value(int(i))
		}
	case *array.Binary:
		for k, i := range idx {
			wc.strs[k] = string(a.Value(int(i)))
		}
	default:
		if catOf(arr.DataType()) != catNone {
			return nil, fmt.Errorf("column %q: unexpected %T", s.schema.Field(c).Name, arr)
		}
	}
	s.wcols[c] = wc
	return wc, nil
}

// gatherNum writes src[idx[k]] to dst[k], widened.
func gatherNum[S int8 | int16 | int32 | int64 | float32 | float64, D int64 | float64](dst []D, src []S, idx []int32) {
	for k, i := range idx {
		dst[k] = D(src[i])
	}
}

func (s *recSource) value(c, k int) any { return exec.Value(s.cols[c], int(s.idx[k])) }

func (s *recSource) inputColumns(mem memory.Allocator) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(s.cols))
	for c, col := range s.cols {
		a, err := gather(mem, col, s.idx)
		if err != nil {
			releaseAll(out[:c])
			return nil, fmt.Errorf("column %q: %w", s.schema.Field(c).Name, err)
		}
		out[c] = a
	}
	return out, nil
}

// pickColumn gathers the picked rows in one pass; defaults are gathered
// from the default column (or a one-value array of the constant) appended
// to the value column.
func (s *recSource) pickColumn(mem memory.Allocator, c int, pick []int32, def pickDefaults) (arrow.Array, error) {
	src := s.cols[c]
	at := make([]int32, len(pick))
	defaults := false
	for k, p := range pick {
		switch p {
		case pickNull:
			at[k] = -1
		case pickDefault:
			at[k] = -1
			defaults = true
		default:
			at[k] = s.idx[p]
		}
	}
	if !defaults || (def.col < 0 && def.value == nil) {
		return gather(mem, src, at)
	}
	var extra arrow.Array
	if def.col >= 0 {
		extra = s.cols[def.col]
		extra.Retain()
	} else {
		b := array.NewBuilder(mem, src.DataType())
		if err := exec.AppendValue(b, def.value); err != nil {
			b.Release()
			return nil, fmt.Errorf("default: %w", err)
		}
		extra = b.NewArray()
		b.Release()
	}
	both, err := array.Concatenate([]arrow.Array{src, extra}, mem)
	extra.Release()
	if err != nil {
		return nil, err
	}
	defer both.Release()
	base := int32(src.Len())
	for k, p := range pick {
		if p != pickDefault {
			continue
		}
		if def.col >= 0 {
			at[k] = base + s.idx[k]
		} else {
			at[k] = base
		}
	}
	return gather(mem, both, at)
}
