package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Expand is the first step of GROUP BY GROUPING SETS / ROLLUP / CUBE: every
// input row leaves once per grouping set, with the key columns outside the
// set replaced by NULL and a last BIGINT column, the grouping id: the
// bitmask of the keys not in the set, keyCols[0] the most significant bit
// (GROUPING(k0, k1, ...) as PostgreSQL and DuckDB define it). An ordinary
// GROUP BY over (keys..., grouping id) then computes every set at once;
// the id keeps a set's NULL from meeting a NULL that was in the data.
//
// A set may be listed more than once (GROUPING SETS ((a), (a)), GROUP BY a,
// ROLLUP (a)); SQL then computes it once per listing, so each group comes
// out that many times. The grouping id cannot tell the copies apart, so
// when sets repeat a second BIGINT column follows it, the set's copy
// number (0 for a set's first listing, 1 for its second, ...; see
// SetCopies), and the GROUP BY groups on it too.
//
// Each input batch leaves as one batch per set. A columnar batch stays
// columnar on its own (the kept columns are shared, the NULL and id
// columns are constant), so Expand passes columnar through rather than
// building output the planner would have to switch on.
type Expand struct {
	sets    [][]int
	keyCols []int
	out     *arrow.Schema
	mem     memory.Allocator
	nIn     int
	err     error
	checked bool

	drop   [][]bool // per set, per input column: replaced by NULL
	gids   []int64
	copies []int64 // per set, its copy number; nil when no set repeats

	// Constant columns of the last batch length, shared by the batches
	// of that length (every batch but a source's last, usually).
	cacheN  int
	nulls   []arrow.Array // per input column
	idCols  []arrow.Array // per set
	cpyCols []arrow.Array // per set, when sets repeat
}

// NewExpand returns the expansion of the input into sets (lists of input
// columns, each a subset of keyCols) producing out: the input's columns
// followed by the BIGINT grouping id and, when a set repeats
// (SetCopies(sets) is not nil), the BIGINT copy number.
func NewExpand(sets [][]int, keyCols []int, out *arrow.Schema, mem memory.Allocator) *Expand {
	e := &Expand{sets: sets, keyCols: keyCols, out: out, mem: mem, cacheN: -1, copies: SetCopies(sets)}
	e.nIn = out.NumFields() - 1
	if e.copies != nil {
		e.nIn--
	}
	e.err = e.configure()
	return e
}

// SetCopies numbers the listings of each grouping set (sets compared as
// sets of columns: (a, b) and (b, a) are one): 0 for a set's first
// listing, 1 for its second, ... It is nil when no set is listed twice,
// and then the expansion has no copy column.
func SetCopies(sets [][]int) []int64 {
	seen := map[string]int64{}
	copies := make([]int64, len(sets))
	repeats := false
	for i, set := range sets {
		cols := slices.Compact(slices.Sorted(slices.Values(set)))
		key := fmt.Sprint(cols)
		copies[i] = seen[key]
		repeats = repeats || copies[i] > 0
		seen[key]++
	}
	if !repeats {
		return nil
	}
	return copies
}

func (e *Expand) configure() error {
	switch {
	case e.copies != nil:
		if e.nIn < 0 || e.out.Field(e.nIn).Type.ID() != arrow.INT64 || e.out.Field(e.nIn+1).Type.ID() != arrow.INT64 {
			return fmt.Errorf("expand: grouping sets repeat: the output's last columns must be the BIGINT grouping id and copy number")
		}
	case e.nIn < 0 || e.out.Field(e.nIn).Type.ID() != arrow.INT64:
		return fmt.Errorf("expand: the output's last column must be the BIGINT grouping id")
	}
	if len(e.sets) == 0 {
		return fmt.Errorf("expand: no grouping sets")
	}
	if len(e.keyCols) > 63 {
		return fmt.Errorf("expand: %d grouping keys (at most 63 fit the grouping id)", len(e.keyCols))
	}
	bit := map[int]int64{}
	for j, c := range e.keyCols {
		if c < 0 || c >= e.nIn {
			return fmt.Errorf("expand: key column %d out of range (input has %d columns)", c, e.nIn)
		}
		if _, dup := bit[c]; dup {
			return fmt.Errorf("expand: key column %d listed twice", c)
		}
		bit[c] = 1 << (len(e.keyCols) - 1 - j)
	}
	for i, set := range e.sets {
		in := map[int]bool{}
		for _, c := range set {
			if _, ok := bit[c]; !ok {
				return fmt.Errorf("expand: grouping set %d names column %d, which is not a key", i, c)
			}
			in[c] = true
		}
		drop := make([]bool, e.nIn)
		var gid int64
		for _, c := range e.keyCols {
			if !in[c] {
				drop[c] = true
				gid |= bit[c]
			}
		}
		e.drop = append(e.drop, drop)
		e.gids = append(e.gids, gid)
	}
	return nil
}

// Kind implements exec.Operator.
func (e *Expand) Kind() string { return "expand" }

// Capabilities implements exec.Operator: a columnar batch leaves as
// columnar batches without the planner's say.
func (e *Expand) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Sets and KeyCols are the configuration, for EXPLAIN.
func (e *Expand) Sets() [][]int  { return e.sets }
func (e *Expand) KeyCols() []int { return e.keyCols }

// GroupingIDs are the sets' grouping ids, in order.
func (e *Expand) GroupingIDs() []int64 { return e.gids }

func (e *Expand) check(s *arrow.Schema) error {
	if e.err != nil || e.checked {
		return e.err
	}
	e.err = checkInputColumns("expand", s, e.out.Fields()[:e.nIn])
	e.checked = true
	return e.err
}

// Process is the row path.
func (e *Expand) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if err := e.check(b.Schema()); err != nil {
		return err
	}
	rows := b.Rows()
	width := e.out.NumFields()
	for s := range e.sets {
		cells := make([]any, len(rows)*width)
		res := make([]exec.Row, len(rows))
		for i, r := range rows {
			row := exec.Row(cells[i*width : (i+1)*width : (i+1)*width])
			copy(row, r)
			for _, c := range e.keyCols {
				if e.drop[s][c] {
					row[c] = nil
				}
			}
			row[e.nIn] = e.gids[s]
			if e.copies != nil {
				row[e.nIn+1] = e.copies[s]
			}
			res[i] = row
		}
		if err := emitRows(ctx, out, e.out, res); err != nil {
			return err
		}
	}
	return nil
}

// ProcessColumnar emits one record per set: the kept columns shared with
// the input, the dropped keys and the grouping id as constant columns.
func (e *Expand) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if err := e.check(b.Schema()); err != nil {
		return false, err
	}
	rec := b.Record()
	n := int(rec.NumRows())
	if n == 0 {
		return true, nil
	}
	e.constants(n)
	for s := range e.sets {
		cols := make([]arrow.Array, e.out.NumFields())
		same := true
		for c := range e.nIn {
			if e.drop[s][c] {
				cols[c] = e.nulls[c]
			} else {
				cols[c] = rec.Column(c)
			}
			cols[c].Retain()
			same = same && arrow.TypeEqual(cols[c].DataType(), e.out.Field(c).Type)
		}
		cols[e.nIn] = e.idCols[s]
		cols[e.nIn].Retain()
		if e.copies != nil {
			cols[e.nIn+1] = e.cpyCols[s]
			cols[e.nIn+1].Retain()
		}
		schema := e.out
		if !same {
			schema = schemaOf(e.out, cols) // a dictionary-encoded key passes through
		}
		res := array.NewRecordBatch(schema, cols, int64(n))
		releaseAll(cols)
		if err := emitRecord(ctx, out, res); err != nil {
			return true, err
		}
	}
	return true, nil
}

// constants makes the NULL columns and grouping id columns n rows long.
func (e *Expand) constants(n int) {
	if n == e.cacheN {
		return
	}
	e.releaseConstants()
	e.cacheN = n
	e.nulls = make([]arrow.Array, e.nIn)
	for _, c := range e.keyCols {
		e.nulls[c] = array.MakeArrayOfNull(e.mem, e.out.Field(c).Type, n)
	}
	for _, gid := range e.gids {
		e.idCols = append(e.idCols, constInt64(e.mem, gid, n))
	}
	for _, c := range e.copies {
		e.cpyCols = append(e.cpyCols, constInt64(e.mem, c, n))
	}
}

// constInt64 is a BIGINT column of n copies of v.
func constInt64(mem memory.Allocator, v int64, n int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for range n {
		b.UnsafeAppend(v)
	}
	return b.NewArray()
}

func (e *Expand) releaseConstants() {
	for _, a := range e.nulls {
		if a != nil {
			a.Release()
		}
	}
	releaseAll(e.idCols)
	releaseAll(e.cpyCols)
	e.nulls, e.idCols, e.cpyCols, e.cacheN = nil, nil, nil, -1
}

// schemaOf is base with the column types of cols.
func schemaOf(base *arrow.Schema, cols []arrow.Array) *arrow.Schema {
	fields := append([]arrow.Field(nil), base.Fields()...)
	for c, a := range cols {
		fields[c].Type = a.DataType()
	}
	md := base.Metadata()
	return arrow.NewSchema(fields, &md)
}

// OnWatermark forwards the watermark: every row leaves as it arrives.
func (e *Expand) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	return out.EmitWatermark(ctx, wm)
}

// Finish has nothing to flush.
func (e *Expand) Finish(context.Context, int, exec.Emitter) error { return e.err }

// Close releases the constant columns.
func (e *Expand) Close() { e.releaseConstants() }
